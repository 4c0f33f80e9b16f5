/** The retries feature behind the lifecycle contract, on a fake kernel port and an injected clock. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakePort } from '../../test/helpers/fake-port.js';
import { loadSettingsFromText } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { FakeClock } from '../core/clock.js';
import type { RunOutcome } from '../core/feature.js';
import { runInit } from '../core/task-fields.js';
import type { Item, RunStatus } from '../core/types.js';
import { taskFromItem } from '../engine/task.js';
import { silentLogger } from '../log.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { RetriesFeature } from './feature.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function setup(extra = '') {
  const dir = mkdtempSync(join(tmpdir(), 'curupira-retries-feature-'));
  dirs.push(dir);
  const { settings } = loadSettingsFromText(
    `[settings]
workspace_dir = "ws"
state_db_path = "state.sqlite3"
max_attempts = 3
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
prompt = "Fix"
`,
    join(dir, 'settings.toml'),
  );
  const store = await openStore(join(dir, 'state.sqlite3'));
  stores.push(store);
  return { settings, store };
}

const ITEM: Item = {
  id: '7',
  title: 'Crash',
  url: 'https://github.com/acme/api/issues/7',
  body: '',
  itemKey: 'issue:7',
  fields: { issue_number: '7' },
};

async function finished(
  settings: Settings,
  store: Store,
  status: RunStatus,
  patch = {},
): Promise<RunOutcome> {
  const automation = settings.automations[0]!;
  const task = taskFromItem(automation, ITEM);
  const created = await store.createRun(runInit(automation, task, 'preparing'));
  const run = await store.updateRun(created.id, { status, finishedAt: new Date().toISOString(), ...patch });
  return { automation, task, run, renoted: false };
}

describe('the retries feature', () => {
  it('schedules a failed run again after its backoff, offers it when due, and lets nothing else wait', async () => {
    const { settings, store } = await setup();
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const port = fakePort(settings, clock);
    const feature = new RetriesFeature({ port, store, log: silentLogger(), random: () => 0 });
    const outcome = await finished(settings, store, 'failed');
    const planned = await feature.runEnded(outcome);
    expect(planned.retryAt).not.toBeNull();
    const at = Date.parse(planned.retryAt!);
    expect(at).toBeGreaterThan(clock.now());
    expect(feature.wakeAt(clock.now())).toBe(at);
    expect(feature.defers(outcome.task.key)).toBe(true);
    await feature.beforePoll();
    expect(port.offers).toEqual([]);
    await clock.advance(at - clock.now());
    await feature.beforePoll();
    expect(port.offers.map((o) => [o.task.key, o.options?.retry?.attempt])).toEqual([[outcome.task.key, 2]]);
    expect(feature.defers(outcome.task.key)).toBe(false);
  });

  it('leaves a success alone, and a one-shot run leaves the retry to the next run', async () => {
    const { settings, store } = await setup();
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const watch = new RetriesFeature({ port: fakePort(settings, clock), store, log: silentLogger() });
    const ok = await finished(settings, store, 'succeeded');
    expect((await watch.runEnded(ok)).retryAt).toBeNull();
    const drain = new RetriesFeature({
      port: fakePort(settings, clock, 'drain'),
      store,
      log: silentLogger(),
    });
    const failed = await finished(settings, store, 'failed');
    expect((await drain.runEnded(failed)).retryAt).toBeNull();
  });

  it('a parked run parks its provider: candidates of that provider wait until the reset', async () => {
    const { settings, store } = await setup();
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const feature = new RetriesFeature({ port: fakePort(settings, clock), store, log: silentLogger() });
    const until = new Date(clock.now() + 60_000).toISOString();
    await feature.runEnded(await finished(settings, store, 'parked', { retryAt: until }));
    const candidate = { automationId: 'fix', provider: 'claude', remediation: false };
    expect(feature.holds(candidate)).toBe(true);
    expect(feature.holds({ ...candidate, provider: 'codex' })).toBe(false);
    await clock.advance(60_000);
    expect(feature.holds(candidate)).toBe(false);
  });

  it('pauses an automation through the port once its last pause_after_failures runs failed', async () => {
    const { settings, store } = await setup('pause_after_failures = 2');
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const port = fakePort(settings, clock);
    const events: string[] = [];
    const feature = new RetriesFeature({
      port,
      store,
      log: silentLogger(),
      onEvent: (e) => events.push(e.kind),
    });
    await feature.afterRun(await finished(settings, store, 'failed'));
    expect(port.pauses).toEqual([]);
    await feature.afterRun(await finished(settings, store, 'stalled'));
    expect(port.pauses.map((p) => p.automationId)).toEqual(['fix']);
    expect(port.pauses[0]!.reason).toContain('pause_after_failures = 2');
    expect(events).toEqual(['automation_paused']);
  });
});
