/**
 * An end-to-end world for engine tests: a local GitHub simulator, a bare git "origin" with a
 * commit, the fake agent CLIs on PATH, and a settings file wired to all three, in a temp folder.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installFakeAgents } from '../../src/agents/fake/install.js';
import type { Provider } from '../../src/agents/schemas.js';
import { loadSettings } from '../../src/config/load.js';
import type { Settings } from '../../src/config/types.js';
import { systemClock } from '../../src/core/clock.js';
import type { RunRecord } from '../../src/core/types.js';
import { type EngineResult, runEngine } from '../../src/engine/engine.js';
import { transcriptsDir } from '../../src/engine/paths.js';
import { createGitHubClient } from '../../src/github/client.js';
import { staticTokenSource } from '../../src/github/token.js';
import { silentLogger } from '../../src/log.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { SimWorld } from '../../src/simulator/world.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { createOrigin, isolateGitForTests, type OriginRepo } from '../../src/workspace/testing.js';

export const TOKEN = 'ghp_harnessTokenForTests0000000000000001';
export const ROOT = join(import.meta.dirname, '../..');
export const CLI = join(ROOT, 'dist/cli/main.js');

export interface Harness {
  dir: string;
  sim: Simulator;
  world: SimWorld;
  origin: OriginRepo;
  binDir: string;
  logDir: string;
  settingsFile: string;
  env: NodeJS.ProcessEnv;
  writeSettings(text: string): void;
  settings(): Settings;
  /** One engine pass in this process (drain unless told otherwise). */
  run(options?: { size?: number; killGraceMs?: number; stop?: AbortSignal }): Promise<EngineResult>;
  openStore(): Promise<Store>;
  /** Every invocation the fake agents recorded, per provider. */
  invocations(provider: Provider): FakeInvocation[];
  cleanup(): Promise<void>;
}

export interface FakeInvocation {
  provider: string;
  argv: string[];
  cwd: string;
  env: Record<string, string | null>;
  envKeys: string[];
  pid: number;
  resumeOf: string | null;
  sessionId?: string;
}

export interface HarnessOptions {
  provider?: Provider;
  profileExtra?: string;
  settingsExtra?: string;
  automation?: string;
  issues?: { title: string; body?: string; labels?: string[] }[];
}

export function defaultAutomation(prompt = 'Fix issue ${issue_number}: ${issue_title}'): string {
  return `[automations.fix]
trigger_type = "plugins-py/github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = ${JSON.stringify(prompt)}
`;
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  isolateGitForTests();
  const origin = await createOrigin();
  const dir = origin.dir;
  const world = new SimWorld();
  world.addRepo('acme/api');
  world.addUser('octocat');
  world.addToken(TOKEN, 'octocat');
  world.addLabel('acme/api', 'agent-ready');
  for (const issue of options.issues ?? [
    { title: 'First issue', body: 'Please fix.', labels: ['agent-ready'] },
  ]) {
    world.addIssue('acme/api', {
      title: issue.title,
      body: issue.body ?? '',
      labels: issue.labels ?? ['agent-ready'],
      author: 'octocat',
    });
  }
  const sim = await startSimulator({ world });
  const binDir = join(dir, 'bin');
  const logDir = join(dir, 'agent-log');
  mkdirSync(logDir, { recursive: true });
  installFakeAgents(binDir, { logDir });
  const provider = options.provider ?? 'claude';
  const settingsFile = join(dir, 'settings.toml');
  const base = `[settings]
workspace_dir = "${join(dir, 'workspaces')}"
state_db_path = "${join(dir, 'state', 'state.sqlite3')}"
task_timeout_minutes = 5
${options.settingsExtra ?? ''}

[settings.github]
api_url = "${sim.url}"

[repositories.api]
remote = "file://${origin.url}"

[agents.defaults]
profile = "main"

[agents.profiles.main]
provider = "${provider}"
env = { FAKE_AGENT_LOG = "${logDir}" }
${options.profileExtra ?? ''}

${options.automation ?? defaultAutomation()}
`;
  const harness: Harness = {
    dir,
    sim,
    world,
    origin,
    binDir,
    logDir,
    settingsFile,
    env: {
      PATH: `${binDir}:${process.env.PATH ?? ''}`,
      HOME: dir,
      LANG: 'C.UTF-8',
      GH_TOKEN: TOKEN,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
    writeSettings(text: string) {
      writeFileSync(settingsFile, text);
    },
    settings() {
      return loadSettings(settingsFile).settings;
    },
    async run(runOptions = {}) {
      const settings = harness.settings();
      const store = await openStore(settings.execution.state_db_path);
      try {
        const tokens = staticTokenSource(TOKEN);
        return await runEngine({
          settings,
          mode: 'drain',
          ...(runOptions.size === undefined ? {} : { size: runOptions.size }),
          store,
          clock: systemClock,
          log: silentLogger(),
          env: harness.env,
          github: () => createGitHubClient({ apiUrl: settings.execution.github.api_url, tokens }),
          transcriptsDir: transcriptsDir(settings),
          stopSignal: runOptions.stop ?? new AbortController().signal,
          killGraceMs: runOptions.killGraceMs ?? 2000,
        });
      } finally {
        await store.close();
      }
    },
    async openStore() {
      return openStore(harness.settings().execution.state_db_path);
    },
    invocations(p: Provider) {
      const file = join(logDir, `${p}.jsonl`);
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as FakeInvocation);
    },
    async cleanup() {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  harness.writeSettings(base);
  return harness;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a child process. */
export function runBuiltCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: options.env ?? process.env,
      cwd: options.cwd ?? ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export function onlyRun(runs: readonly RunRecord[]): RunRecord {
  if (runs.length !== 1)
    throw new Error(
      `expected exactly one run, got ${runs.length}: ${JSON.stringify(runs.map((r) => r.status))}`,
    );
  return runs[0]!;
}
