/**
 * The fleet in the CLI (issue 17), with a fake FleetView: the lines of `fleetStatusLines`, the
 * fleet block of `curupira status` read from the state (no daemon) and from a daemon's
 * `GET /api/v1/fleet`, nothing of it on the embedded store, and `host:` in `runs show`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshSchema, type TestSchema } from '../../test/helpers/pg.js';
import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/types.js';
import type { RunRecord } from '../core/types.js';
import { FleetDb, fleetPool } from '../fleet/fleet-db.js';
import type { DispatchRecord, FleetHost, FleetView } from '../fleet/types.js';
import { createApp } from '../server/app.js';
import type { EngineView } from '../server/board-data.js';
import { Hub } from '../server/hub.js';
import { startListeners } from '../server/listen.js';
import { loadOrCreateToken } from '../server/token.js';
import { openStore } from '../store/index.js';
import { parseStateUrl } from '../store/postgres/url.js';
import type { Store } from '../store/types.js';
import { printStatus, type StatusDeps } from './control.js';
import { fleetStatusLines, heartbeatAge, noFleet } from './fleet-status.js';
import type { CliIo } from './io.js';
import { runLines } from './runs.js';
import { runCliCaptured } from './testing.js';

const NOW = Date.parse('2026-12-01T12:00:00.000Z');
const NOW_ISO = new Date(NOW).toISOString();

function host(overrides: Partial<FleetHost> = {}): FleetHost {
  return {
    name: 'build-1',
    role: 'all',
    pid: 4242,
    instance: 'i-1',
    version: '0.9.0',
    startedAt: '2026-12-01T10:00:00.000Z',
    heartbeatAt: '2026-12-01T11:59:57.000Z',
    capacity: 4,
    load: 2,
    checkouts: ['acme/api'],
    polling: false,
    capabilities: null,
    machine: null,
    stoppedAt: null,
    health: 'healthy',
    ...overrides,
  };
}

function dispatch(state: DispatchRecord['state']): DispatchRecord {
  return {
    id: crypto.randomUUID(),
    taskKey: `fix:issue:${state}`,
    automationId: 'fix',
    repo: 'acme/api',
    host: 'build-1',
    state,
    runId: null,
    enqueuedAt: '2026-12-01T11:58:00.000Z',
    startedAt: null,
    finishedAt: null,
    settledAt: null,
    detail: null,
    previousId: null,
    refused: false,
  };
}

const HOSTS = [
  host({ name: 'poll-1', role: 'poller', capacity: 0, load: 0, checkouts: [], polling: true }),
  host({ name: 'build-2', role: 'worker', health: 'late', heartbeatAt: '2026-12-01T11:58:55.000Z', load: 1 }),
  host(),
  host({
    name: 'build-3',
    role: 'worker',
    health: 'stopped',
    heartbeatAt: '2026-12-01T11:00:00.000Z',
    stoppedAt: '2026-12-01T11:00:00.000Z',
    load: 0,
    version: '0.8.0',
  }),
];

describe('fleetStatusLines', () => {
  it('one line per host by name: health, load/capacity, role, heartbeat age, polling, version', () => {
    expect(
      fleetStatusLines(HOSTS, NOW, [dispatch('running'), dispatch('queued'), dispatch('running')]),
    ).toEqual([
      'fleet: 4 hosts (2 healthy, 1 late, 1 stopped) · 3/8 slots taken on live hosts',
      '  build-1  healthy    2/4  all     heartbeat 3s ago · v0.9.0',
      '  build-2  late       1/4  worker  heartbeat 1m05s ago · v0.9.0',
      '  build-3  stopped    0/4  worker  heartbeat 1h00m ago · stopped 2026-12-01T11:00:00.000Z · v0.8.0',
      '  poll-1   healthy      -  poller  heartbeat 3s ago · polling · v0.9.0',
      '  dispatches: 1 queued, 2 running (not yet settled)',
    ]);
  });

  it('a gone host counts no slots; no dispatches and no hosts are said in words', () => {
    const lines = fleetStatusLines([host({ health: 'gone' }), host({ name: 'b' })], NOW, []);
    expect(lines[0]).toBe('fleet: 2 hosts (1 healthy, 1 gone) · 2/4 slots taken on live hosts');
    expect(lines.at(-1)).toBe('  dispatches: none waiting to be settled');
    expect(fleetStatusLines([], NOW)).toEqual(['fleet: no host has a heartbeat row yet']);
    // Without dispatches given, no dispatch line at all.
    expect(fleetStatusLines([host()], NOW)).toHaveLength(2);
  });

  it('one line per task no live worker can run, with how long it has waited and why, made visible', () => {
    const lines = fleetStatusLines(
      [host()],
      NOW,
      [],
      [
        {
          taskKey: 'extra:issue:8',
          automationId: 'extra',
          repo: 'acme/api',
          reason: 'no live worker can run it: build-1 has no automation extra',
          since: '2026-12-01T11:58:00.000Z',
        },
        { taskKey: 'k\u001b[2J', automationId: 'a', repo: 'r', reason: 'why\r\nfake', since: NOW_ISO },
      ],
    );
    expect(lines.slice(-2)).toEqual([
      '  waiting: extra:issue:8 for 2m00s: no live worker can run it: build-1 has no automation extra',
      '  waiting: k<U+001B>[2J for 0s: why ⏎fake',
    ]);
  });

  it('a hostile host name or version from the database reaches the terminal without its control characters', () => {
    const evil = host({ name: 'x\u001b[2J\u001b]0;pwned\u0007', version: '1\r\nfake line' });
    const text = fleetStatusLines([evil], NOW).join('\n');
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(text.split('\n')).toHaveLength(2);
    expect(text).toContain('x<U+001B>[2J<U+001B>]0;pwned<U+0007>');
    expect(text).toContain('v1 ⏎fake line');
  });

  it('a heartbeat time that does not parse is unknown, one in the future is 0s ago', () => {
    expect(heartbeatAge('garbage', NOW)).toBe('unknown');
    expect(heartbeatAge('2026-12-01T12:00:05.000Z', NOW)).toBe('0s ago');
  });
});

function fake(hosts: FleetHost[], dispatches: DispatchRecord[] = []): FleetView {
  return {
    hosts: async () => hosts,
    liveDispatches: async () => dispatches,
    transcript: async () => undefined,
    waiting: async () => [],
  };
}

function captureIo(): { io: CliIo; out: () => string } {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const io: CliIo = {
    stdout,
    stderr: new PassThrough(),
    env: { PATH: process.env.PATH },
    cwd: process.cwd(),
    programName: 'curupira',
  };
  return { io, out: () => text };
}

async function flushed(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

const dir = mkdtempSync(join(tmpdir(), 'curupira-fleet-status-'));
const file = join(dir, 'settings.toml');
let settings: Settings;
let store: Store;
const SETTINGS = `[settings]
state_db_path = "state/state.sqlite3"
[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.fix]
repository = "api"
repo = "acme/api"
prompt = "Fix \${issue_number}"
`;

beforeAll(async () => {
  writeFileSync(file, SETTINGS);
  settings = loadSettings(file).settings;
  store = await openStore(settings.execution.state_db_path);
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('curupira status without a daemon', () => {
  it('adds the fleet block read from the fleet view, and closes it', async () => {
    let closed = 0;
    const deps: StatusDeps = {
      openFleet: async (given) => {
        expect(given.file).toBe(file);
        return {
          view: fake(HOSTS, [dispatch('queued')]),
          close: async () => {
            closed += 1;
          },
        };
      },
    };
    const { io, out } = captureIo();
    await printStatus(io, settings, deps);
    await flushed();
    const lines = out().split('\n');
    expect(lines[0]).toBe('daemon: not running (start `curupira serve`); from the state file:');
    const at = lines.findIndex((l) => l.startsWith('fleet: '));
    expect(lines[at]).toMatch(
      /^fleet: 4 hosts \(2 healthy, 1 late, 1 stopped\) · 3\/8 slots taken on live hosts$/,
    );
    expect(lines.slice(at + 1, at + 6).map((l) => l.trim().split(/\s+/).slice(0, 4).join(' '))).toEqual([
      'build-1 healthy 2/4 all',
      'build-2 late 1/4 worker',
      'build-3 stopped 0/4 worker',
      'poll-1 healthy - poller',
      'dispatches: 1 queued (not',
    ]);
    expect(closed).toBe(1);
  });

  it('says the fleet is unavailable when it cannot be read, password-free, and still closes it', async () => {
    let closed = false;
    const deps: StatusDeps = {
      openFleet: async () => ({
        view: {
          hosts: async () => {
            throw new Error('connect ECONNREFUSED for postgres://curupira:hunter2@db:5432/state');
          },
          liveDispatches: async () => [],
          transcript: async () => undefined,
          waiting: async () => [],
        },
        close: async () => {
          closed = true;
        },
      }),
    };
    const { io, out } = captureIo();
    await printStatus(io, settings, deps);
    await flushed();
    expect(out()).toContain(
      'fleet: unavailable (connect ECONNREFUSED for postgres://[redacted]@db:5432/state)',
    );
    expect(out()).not.toContain('hunter2');
    expect(closed).toBe(true);
  });

  it('prints nothing of a fleet on the embedded store (the default dependency, and the CLI)', async () => {
    const { io, out } = captureIo();
    await printStatus(io, settings, { openFleet: noFleet });
    await flushed();
    expect(out()).toContain('automations:');
    expect(out()).not.toContain('fleet');
    const cli = await runCliCaptured(['status', '-c', file]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe(out());
  });
});

describe('curupira status with a daemon', () => {
  const engine = (): EngineView => ({
    automations: () => [],
    currentSettings: () => settings,
    setPaused: async () => undefined,
    trigger: () => 'polling',
    scanNow: () => 'polling',
    cancel: () => undefined,
    retry: async () => 'polling',
    allowed: () => undefined,
    pollNow: () => [],
  });

  let daemons = 0;
  async function daemonStatus(fleet: FleetView | undefined): Promise<string> {
    // A state folder per daemon: this process's HTTP agent keeps its connections to a socket path alive.
    daemons += 1;
    const own = join(dir, `daemon-${daemons}`);
    mkdirSync(own);
    writeFileSync(join(own, 'settings.toml'), SETTINGS);
    const ownSettings = loadSettings(join(own, 'settings.toml')).settings;
    const stateDir = join(own, 'state');
    const { token } = loadOrCreateToken(stateDir);
    const app = createApp({
      store,
      engine: engine(),
      hub: new Hub(),
      token,
      version: '0.0.0-test',
      startedAt: Date.now(),
      ...(fleet === undefined ? {} : { fleet }),
    });
    const listening = await startListeners(app, { host: '127.0.0.1', port: 0, stateDir });
    try {
      const { io, out } = captureIo();
      // The daemon answers: the state's own fleet opener is not asked.
      await printStatus(io, ownSettings, {
        openFleet: async () => {
          throw new Error('not asked when a daemon answers');
        },
      });
      await flushed();
      return out();
    } finally {
      await listening.close();
    }
  }

  it("adds the fleet block from the daemon's GET /api/v1/fleet", async () => {
    const text = await daemonStatus(fake([host({ polling: true })], [dispatch('running')]));
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^daemon: running · /);
    expect(lines.slice(-4)).toEqual([
      'fleet: 1 host (1 healthy) · 2/4 slots taken on live hosts',
      expect.stringMatching(
        /^ {2}build-1 {2}healthy {4}2\/4 {2}all {5}heartbeat \S+ ago · polling · v0\.9\.0$/,
      ),
      '  dispatches: 1 running (not yet settled)',
      '',
    ]);
  });

  it('prints nothing of a fleet when the daemon has none (404 no_fleet)', async () => {
    const text = await daemonStatus(undefined);
    expect(text).toMatch(/^daemon: running · /);
    expect(text).not.toContain('fleet');
  });
});

describe('curupira runs show', () => {
  async function recorded(): Promise<RunRecord> {
    return store.createRun({
      automationId: 'fix',
      taskKey: 'fix:issue:7',
      repo: 'acme/api',
      taskType: 'issue',
      itemId: '7',
      itemKey: 'issue:7',
      itemTitle: 'Issue 7',
      itemUrl: 'https://github.com/acme/api/issues/7',
      status: 'succeeded',
    });
  }

  it("prints the run's host when it has one, made visible, right before its agent", async () => {
    const run = await recorded();
    const lines = runLines({ ...run, host: 'build-2' }, undefined);
    const at = lines.indexOf('  host:        build-2');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^ {2}agent: /);
    expect(runLines({ ...run, host: 'b\u001b[31m' }, undefined)).toContain('  host:        b<U+001B>[31m');
  });

  it('prints no host line for a run of the embedded store', async () => {
    const run = await recorded();
    expect(runLines(run, undefined).some((l) => l.startsWith('  host:'))).toBe(false);
    expect(runLines({ ...run, host: null }, undefined).some((l) => l.startsWith('  host:'))).toBe(false);
  });
});

/** A fleet opener over the real FleetDb (what the CLI's default opener builds for `state_db_url`). */
function realOpener(url: string): StatusDeps {
  return {
    openFleet: async () => {
      const { connectionString, schema } = parseStateUrl(url);
      const pool = fleetPool(connectionString, schema, 1);
      return {
        view: new FleetDb(pool, { heartbeatInterval: 5, heartbeatTimeout: 30, resumeGrace: 120 }),
        close: () => pool.end(),
      };
    },
  };
}

describe('curupira status on a PostgreSQL state (the real FleetDb)', () => {
  let schema: TestSchema;
  let pgSettings: Settings;

  beforeAll(async () => {
    schema = await freshSchema('fleetview');
    const own = join(dir, 'pg');
    mkdirSync(own);
    const pgFile = join(own, 'settings.toml');
    writeFileSync(pgFile, SETTINGS.replace('[settings]\n', `[settings]\nstate_db_url = "${schema.url}"\n`));
    pgSettings = loadSettings(pgFile).settings;
    // The first open creates the schema, the fleet tables with it; then two hosts heartbeat.
    const pgStore = await openStore(schema.url);
    await pgStore.close();
    const access = await realOpener(schema.url).openFleet(pgSettings);
    const db = access!.view as FleetDb;
    try {
      const beat = { pid: 1, version: '0.9.0', checkouts: [], capabilities: null, machine: 'm' };
      await db.beat({ ...beat, name: 'poll-1', role: 'poller', instance: 'a', capacity: 0, polling: true });
      await db.beat({ ...beat, name: 'build-1', role: 'worker', instance: 'b', capacity: 3, polling: false });
    } finally {
      await access!.close();
    }
  });

  afterAll(async () => {
    await schema.drop();
  });

  it('prints one line per host, read from fleet_hosts, after the state read from PostgreSQL', async () => {
    const { io, out } = captureIo();
    await printStatus(io, pgSettings, realOpener(schema.url));
    await flushed();
    const lines = out().split('\n');
    expect(lines[0]).toBe('daemon: not running (start `curupira serve`); from the state file:');
    const at = lines.indexOf('fleet: 2 hosts (2 healthy) · 0/3 slots taken on live hosts');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1)).toEqual([
      expect.stringMatching(/^ {2}build-1 {2}healthy {4}0\/3 {2}worker {2}heartbeat \d+s ago · v0\.9\.0$/),
      expect.stringMatching(
        /^ {2}poll-1 {3}healthy {6}- {2}poller {2}heartbeat \d+s ago · polling · v0\.9\.0$/,
      ),
      '  dispatches: none waiting to be settled',
      '',
    ]);
  });

  it('a URL with a password never prints it, even when the fleet cannot be reached', async () => {
    const { io, out } = captureIo();
    // The state itself is the SQLite file here: only the fleet block meets the unreachable server.
    await printStatus(io, settings, realOpener('postgres://curupira:hunter2@127.0.0.1:1/none'));
    await flushed();
    expect(out()).toMatch(/fleet: database unreachable \(.+\)\n$/);
    expect(out()).not.toContain('hunter2');
  });
});
