/**
 * The repair sweep and the run log's writes against the simulator, a real state file and the
 * write queue on a virtual clock: a write that failed for good is queued again and sent once; a
 * status label left by a finished run is removed; the log issue is created once (also after a
 * fault that GitHub applied) and its entries and closing find it by marker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { WriteQueue } from '../github/write-queue.js';
import { silentLogger } from '../log.js';
import type { TrustRules } from '../screening/trust.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { openStore } from '../store/index.js';
import type { Store, WriteInit } from '../store/types.js';
import { Leases } from './lease.js';
import { LOG_LABEL, logIssueMarker, logIssueTitle, logWindow } from './run-log.js';
import { runSweep, type SweepContext, Sweeper } from './sweep.js';

const TOKEN = 'sweep-token';

class VirtualClock implements Clock {
  constructor(public t = Date.UTC(2026, 11, 1, 9, 0, 0)) {}
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    this.t += Math.max(0, ms);
    return Promise.resolve();
  }
}

let dir: string;
let store: Store;
let sim: Simulator;
let world: SimWorld;
let clock: VirtualClock;
let queue: WriteQueue;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-sweep-'));
  clock = new VirtualClock();
  store = await openStore(join(dir, 'state.sqlite3'), { now: () => clock.now() });
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Crash', author: 'bob' });
  sim = await startSimulator({ world, now: () => clock.now() });
  const client = createGitHubClient({
    apiUrl: sim.url,
    tokens: staticTokenSource(TOKEN),
    clock,
    maxAttempts: 1,
  });
  queue = new WriteQueue({ store, client, clock, paceMs: 0 });
});
afterEach(async () => {
  await sim.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function settings(extra = '', more = ''): Settings {
  return loadSettingsFromText(
    `[settings]
workspace_dir = "ws"
state_db_path = "state.sqlite3"
${extra}
[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "claude"
[agents.defaults]
profile = "main"
[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix \${issue_title}"
${more}`,
    join(dir, 'settings.toml'),
  ).settings;
}

function context(s: Settings): SweepContext {
  return {
    store,
    settings: s,
    clock,
    log: silentLogger(),
    queue: async (writes: readonly WriteInit[]) => {
      for (const w of writes) await queue.enqueue(w);
    },
  };
}

describe('the repair sweep', () => {
  it('queues a write that failed for good again: it is posted once after the outage', async () => {
    sim.setWriteFaults({ fraction: 1 });
    await queue.enqueue({
      marker: 'result run=r_1',
      repo: 'acme/api',
      number: 1,
      write: { kind: 'comment', body: 'done' },
    });
    expect(await queue.runUntilIdle()).toMatchObject({ sent: 0, failed: 1 });
    sim.setWriteFaults(null);
    await runSweep(context(settings()));
    expect(await queue.runUntilIdle()).toMatchObject({ sent: 1, failed: 0 });
    expect(world.item('acme/api', 1)!.comments.map((c) => c.body)).toEqual([
      'done\n\n<!-- curupira:result run=r_1 -->',
    ]);
    // A second sweep finds nothing to repair.
    await runSweep(context(settings()));
    expect(await queue.runUntilIdle()).toMatchObject({ sent: 0, failed: 0 });
  });

  it('removes a status label left by a run that finished without queuing its removal', async () => {
    await queue.enqueue({
      marker: 'status run=r_9 step=add',
      repo: 'acme/api',
      number: 1,
      runId: 'r_9',
      write: { kind: 'add-labels', labels: [{ name: 'agent:implementing' }] },
    });
    await queue.runUntilIdle();
    expect(world.item('acme/api', 1)!.labels).toEqual(['agent:implementing']);
    // r_9 is not in the ledger (its process died, and its record went with it): finished.
    await runSweep(context(settings()));
    await queue.runUntilIdle();
    expect(world.item('acme/api', 1)!.labels).toEqual([]);
  });

  it('releases leases only for runs of automations that take them', async () => {
    // `fix` takes leases; `triage` takes none.
    const leased = settings(
      '',
      `lease_ttl = "1 hour"
[automations.triage]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["triage"]
prompt = "Triage \${issue_title}"
`,
    );
    expect(leased.automations.map((a) => [a.id, a.config.lease_ttl])).toEqual([
      ['fix', '1 hour'],
      ['triage', undefined],
    ]);
    const edits: string[] = [];
    const client = createGitHubClient({
      apiUrl: sim.url,
      tokens: staticTokenSource(TOKEN),
      clock,
      maxAttempts: 1,
    });
    const leases = new Leases({
      client,
      clock,
      log: silentLogger(),
      settings: () => leased,
      trust: async () => ({ users: [], teams: [], associations: [] }) as unknown as TrustRules,
      queueEdit: async (_item, runId) => {
        edits.push(runId);
      },
    });
    const finished = async (automationId: string) => {
      const run = await store.createRun({
        automationId,
        taskKey: `${automationId}:issue:1`,
        repo: 'acme/api',
        taskType: 'github-issues',
        itemId: '1',
        itemKey: 'issue:1',
        itemTitle: 'Crash',
        itemUrl: 'https://github.com/acme/api/issues/1',
        status: 'running',
      });
      const now = new Date(clock.now()).toISOString();
      return store.updateRun(run.id, { status: 'succeeded', startedAt: now, finishedAt: now });
    };
    const fix = await finished('fix');
    await finished('triage');
    await runSweep({ ...context(leased), leases });
    expect(edits).toEqual([fix.id]);
  });

  it('runs when due: every reconcile_interval_minutes, never with 0', async () => {
    const runs: number[] = [];
    const sweeper = new Sweeper([{ name: 'count', run: async () => runs.push(clock.now()) }]);
    const s = settings('reconcile_interval_minutes = 30');
    await sweeper.maybeRun(context(s));
    clock.t += 29 * 60_000;
    await sweeper.maybeRun(context(s));
    clock.t += 60_000;
    await sweeper.maybeRun(context(s));
    expect(runs).toHaveLength(2);
    const off = new Sweeper([{ name: 'count', run: async () => runs.push(0) }]);
    await off.maybeRun(context(settings('reconcile_interval_minutes = 0')));
    expect(runs).toHaveLength(2);
  });
});

describe('run-log writes', () => {
  it('windows are counted from 1970 in steps of log_window_days', () => {
    expect(logWindow(Date.UTC(2026, 11, 1, 12), 1)).toEqual({ start: '2026-12-01', end: '2026-12-01' });
    const w = logWindow(Date.UTC(2026, 11, 1, 12), 14);
    expect(Date.parse(w.end) - Date.parse(w.start)).toBe(13 * 86_400_000);
    expect(logIssueTitle({ start: '2026-12-01', end: '2026-12-14' })).toBe(
      'curupira run log: 2026-12-01 – 2026-12-14',
    );
  });

  it('creates the log issue once (a fault after GitHub applied it too), comments and closes by marker', async () => {
    const window = logWindow(clock.now(), 14);
    const marker = logIssueMarker('acme/api', window);
    await queue.enqueue({
      marker,
      repo: 'acme/api',
      number: 0,
      write: {
        kind: 'create-issue',
        title: logIssueTitle(window),
        body: 'log',
        labels: [{ name: LOG_LABEL }],
      },
    });
    await queue.enqueue({
      marker: 'runlog-entry run=r_1',
      repo: 'acme/api',
      number: 0,
      write: { kind: 'comment', body: 'entry 1', onIssueOf: marker },
    });
    await queue.enqueue({
      marker: 'runlog close x',
      repo: 'acme/api',
      number: 0,
      write: { kind: 'set-state', state: 'closed', stateReason: 'completed', onIssueOf: marker },
    });
    // Every write is applied, then answered 502: only the markers keep things single.
    sim.setWriteFaults({ fraction: 1, applied: true });
    await queue.drain();
    sim.setWriteFaults(null);
    expect(await queue.runUntilIdle()).toMatchObject({ failed: 0 });
    const logs = [...world.repo('acme/api')!.items.values()].filter((i) => i.labels.includes(LOG_LABEL));
    expect(logs.map((i) => [i.title, i.state, i.author])).toEqual([
      [logIssueTitle(window), 'CLOSED', 'curupira-bot'],
    ]);
    expect(logs[0]!.comments.map((c) => c.body)).toEqual([
      'entry 1\n\n<!-- curupira:runlog-entry run=r_1 -->',
    ]);
    const [created] = await store.listWrites({ marker });
    expect(created?.resultId).toBe(logs[0]!.number);
  });
});
