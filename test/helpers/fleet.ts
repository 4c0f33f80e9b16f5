/**
 * A fleet on one machine for tests (issue 17): the harness's world (simulator, origin, fake
 * agents), its state in a fresh PostgreSQL schema, and one settings file per process, each with
 * its own host name, `workspace_dir` and state folder (transcripts, logs), as separate hosts have.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import {
  createHarness,
  type Harness,
  type HarnessOptions,
  type StartedCli,
  startBuiltCli,
} from './harness.js';
import { freshSchema, type TestSchema } from './pg.js';

export interface FleetTiming {
  heartbeatInterval: number;
  heartbeatTimeout: number;
  resumeGrace: number;
}

/** A started fleet process, with what it logged so far (stderr: the console log lines). */
export interface FleetProcess extends StartedCli {
  name: string;
  /** Its stdout and stderr so far. */
  output(): string;
}

export interface HostOptions {
  /** Lines added to its `[settings.fleet]`. */
  extra?: string;
  /** Its own `state_db_url` (a proxy in front of the same server and schema). */
  stateDbUrl?: string;
  /** Automations left out of its settings file (a host configured with fewer of them). */
  without?: string[];
}

export interface TestFleet {
  harness: Harness;
  schema: TestSchema;
  /** Writes a settings file for host `name` and returns its path. */
  settingsFor(name: string, extra?: string | HostOptions): string;
  /** Starts `curupira serve --role poller` (port 0) or `curupira worker` as host `name`. */
  start(role: 'poller' | 'worker' | 'all', name: string, extra?: string | HostOptions): FleetProcess;
  openStore(): Promise<Store>;
  cleanup(): Promise<void>;
}

export interface TestFleetOptions extends HarnessOptions {
  maxActive?: number;
  /** The PostgreSQL server and database (default: the machine's, `TEST_PG_URL`). */
  serverUrl?: string;
  /** The heartbeat settings written to each host (default: 1 s / 4 s / 2 s); 'defaults' writes none. */
  timing?: Partial<FleetTiming> | 'defaults';
}

export async function createTestFleet(options: TestFleetOptions = {}): Promise<TestFleet> {
  const schema = await freshSchema('fleet', options.serverUrl);
  const timing =
    options.timing === 'defaults'
      ? undefined
      : { heartbeatInterval: 1, heartbeatTimeout: 4, resumeGrace: 2, ...options.timing };
  const heartbeat = timing
    ? `heartbeat_interval = ${timing.heartbeatInterval}\nheartbeat_timeout = ${timing.heartbeatTimeout}\nresume_grace = ${timing.resumeGrace}\n`
    : '';
  const harness = await createHarness({
    ...options,
    settingsExtra: `state_db_url = "${schema.url}"\nmax_active_tasks = ${options.maxActive ?? 4}\n${options.settingsExtra ?? ''}`,
  });
  const base = (): string => readFileSync(harness.settingsFile, 'utf8');
  const started: StartedCli[] = [];
  const fleet: TestFleet = {
    harness,
    schema,
    settingsFor(name, host = '') {
      const { extra = '', stateDbUrl, without = [] } = typeof host === 'string' ? { extra: host } : host;
      const hostDir = join(harness.dir, 'hosts', name);
      mkdirSync(hostDir, { recursive: true });
      let text = base();
      if (stateDbUrl) text = text.replace(/^state_db_url = .*$/m, `state_db_url = "${stateDbUrl}"`);
      // An automation's table runs to the next table header or the end of the file.
      for (const id of without)
        text = text.replace(new RegExp(`^\\[automations\\.${id}\\]\\n(?:(?!\\[).*\\n?)*`, 'm'), '');
      text = text
        .replace(/^workspace_dir = .*$/m, `workspace_dir = "${join(hostDir, 'workspaces')}"`)
        .replace(/^state_db_path = .*$/m, `state_db_path = "${join(hostDir, 'state', 'state.sqlite3')}"`)
        .replace(
          /^\[settings\.github\]$/m,
          `[settings.fleet]\nhost = "${name}"\n${heartbeat}${extra}\n\n[settings.github]`,
        );
      const file = join(hostDir, 'settings.toml');
      writeFileSync(file, text);
      return file;
    },
    start(role, name, extra) {
      const file = fleet.settingsFor(name, extra);
      const args =
        role === 'worker'
          ? ['worker', '-c', file, '--log-level', 'debug']
          : ['serve', '--role', role, '--port', '0', '-c', file, '--log-level', 'debug'];
      const cli = startBuiltCli(args, { env: harness.env });
      started.push(cli);
      let output = '';
      const keep = (chunk: Buffer): void => {
        output += chunk.toString();
      };
      cli.child.stdout?.on('data', keep);
      cli.child.stderr?.on('data', keep);
      return { ...cli, name, output: () => output };
    },
    openStore() {
      return openStore(schema.url);
    },
    async cleanup() {
      for (const cli of started) if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      await Promise.all(started.map((cli) => cli.done.catch(() => undefined)));
      await harness.cleanup();
      await schema.drop();
    },
  };
  return fleet;
}
