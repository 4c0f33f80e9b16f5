/** The retries feature behind the lifecycle contract, on a fake kernel port and an injected clock. */
import { afterEach, describe, expect, it } from 'vitest';
import { fakePort } from '../../test/helpers/fake-port.js';
import { cleanupFeatureSetups, featureSetup, finishedRun } from '../../test/helpers/feature-setup.js';
import { FakeClock } from '../core/clock.js';
import type { RunOutcome } from '../core/feature.js';
import type { RunStatus } from '../core/types.js';
import { silentLogger } from '../log.js';
import type { RunPatch } from '../store/types.js';
import { RetriesFeature } from './feature.js';

afterEach(cleanupFeatureSetups);

type Setup = Awaited<ReturnType<typeof featureSetup>>;

function setup(extra = ''): Promise<Setup> {
  return featureSetup({ settings: `max_attempts = 3\n${extra}` });
}

function finished(s: Setup, status: RunStatus, patch: RunPatch = {}): Promise<RunOutcome> {
  return finishedRun(s, status, { patch });
}

describe('the retries feature', () => {
  it('schedules a failed run again after its backoff, offers it when due, and lets nothing else wait', async () => {
    const s = await setup();
    const { settings, store } = s;
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const port = fakePort(settings, clock);
    const feature = new RetriesFeature({ port, store, log: silentLogger(), random: () => 0 });
    const outcome = await finished(s, 'failed');
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

  it('a retry keeps the inputs of the run it follows (issue 32)', async () => {
    const s = await setup();
    const { settings, store } = s;
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const port = fakePort(settings, clock);
    const feature = new RetriesFeature({ port, store, log: silentLogger(), random: () => 0 });
    const planned = await feature.runEnded(await finished(s, 'failed', { inputs: { focus: 'docs' } }));
    await clock.advance(Date.parse(planned.retryAt!) - clock.now());
    await feature.beforePoll();
    expect(port.offers.map((o) => o.options?.inputs)).toEqual([{ focus: 'docs' }]);
  });

  it('leaves a success alone, and a one-shot run leaves the retry to the next run', async () => {
    const s = await setup();
    const { settings, store } = s;
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const watch = new RetriesFeature({ port: fakePort(settings, clock), store, log: silentLogger() });
    const ok = await finished(s, 'succeeded');
    expect((await watch.runEnded(ok)).retryAt).toBeNull();
    const drain = new RetriesFeature({
      port: fakePort(settings, clock, 'drain'),
      store,
      log: silentLogger(),
    });
    const failed = await finished(s, 'failed');
    expect((await drain.runEnded(failed)).retryAt).toBeNull();
  });

  it('a parked run parks its provider: candidates of that provider wait until the reset', async () => {
    const s = await setup();
    const { settings, store } = s;
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const feature = new RetriesFeature({ port: fakePort(settings, clock), store, log: silentLogger() });
    const until = new Date(clock.now() + 60_000).toISOString();
    await feature.runEnded(await finished(s, 'parked', { retryAt: until }));
    const candidate = { automationId: 'fix', provider: 'claude', remediation: false };
    expect(feature.holds(candidate)).toBe(true);
    expect(feature.holds({ ...candidate, provider: 'codex' })).toBe(false);
    await clock.advance(60_000);
    expect(feature.holds(candidate)).toBe(false);
  });

  it('pauses an automation through the port once its last pause_after_failures runs failed', async () => {
    const s = await setup('pause_after_failures = 2');
    const { settings, store } = s;
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const port = fakePort(settings, clock);
    const events: string[] = [];
    const feature = new RetriesFeature({
      port,
      store,
      log: silentLogger(),
      onEvent: (e) => events.push(e.kind),
    });
    await feature.afterRun(await finished(s, 'failed'));
    expect(port.pauses).toEqual([]);
    await feature.afterRun(await finished(s, 'stalled'));
    expect(port.pauses.map((p) => p.automationId)).toEqual(['fix']);
    expect(port.pauses[0]!.reason).toContain('pause_after_failures = 2');
    expect(events).toEqual(['automation_paused']);
  });
});
