/**
 * The engine's operator controls (what `curupira serve` exposes): pause and resume remembered
 * across restarts, run now (a schedule fires at once, a paused automation polls once), cancelling
 * one run while another goes on, and retry.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';
import { ControlError } from '../../src/core/errors.js';
import type { Store } from '../../src/store/types.js';
import { createHarness, type Harness, issueAutomation, runBuiltCli, waitFor } from '../helpers/harness.js';
import { captureLog } from '../helpers/log-lines.js';
import { startWatching, type Watching, type WatchOptions } from '../helpers/watch.js';

let h: Harness | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
  await h?.cleanup();
  h = undefined;
});

const FAST = '[settings.polling]\npoll_interval_seconds = 0.2\ncron_poll_interval_seconds = 0.2';

async function watching(harness: Harness, options: Omit<WatchOptions, 'store'> = {}): Promise<Watching> {
  store = await harness.openStore();
  const watching = await startWatching(harness, { ...options, store });
  return {
    ...watching,
    stop: async () => {
      await watching.stop();
      await store?.close();
      store = undefined;
    },
  };
}

describe('engine controls', () => {
  it('a paused automation is not polled, stays paused after a restart, and runs once resumed', async () => {
    h = await createHarness({ settingsExtra: FAST, issues: [] });
    let daemon = await watching(h);
    await daemon.engine.setPaused('fix', true);
    expect(daemon.engine.automations().find((a) => a.id === 'fix')?.paused).toBe(true);
    await daemon.stop();
    h.world.addIssue('acme/api', { title: 'Later', body: '', labels: ['agent-ready'], author: 'octocat' });
    daemon = await watching(h);
    // A whole round of the loop, which polls every automation due and starts what it found.
    const round = await daemon.round();
    expect(round).toMatchObject({ running: [], queued: 0 });
    expect(daemon.runs).toHaveLength(0);
    expect(daemon.engine.automations()[0]?.lastPollAt).toBeUndefined();
    expect(daemon.engine.automations()[0]).toMatchObject({ id: 'fix', paused: true });
    await daemon.engine.setPaused('fix', false);
    await waitFor('the run after resume', () => daemon.runs.length === 1);
    expect(daemon.runs[0]?.status).toBe('succeeded');
    await daemon.stop();
  });

  it('enabled = false: never polled by `run`, paused in watch, only a file edit resumes it', async () => {
    const disabled = issueAutomation('fix', { prompt: 'Fix ${issue_title}', extra: 'enabled = false' });
    h = await createHarness({ settingsExtra: FAST, automation: disabled });
    const searches = (): number =>
      h!.sim.requests.filter((r) => r.path.includes('graphql') || r.path.includes('search')).length;
    const drained = await h.run();
    expect(drained.runs).toHaveLength(0);
    expect(searches()).toBe(0);

    store = await h.openStore();
    const file = h.settingsFile;
    let last = readFileSync(file, 'utf8');
    const daemon = await startWatching(h, {
      store,
      reloadIntervalMs: 50,
      reload: () => {
        const text = readFileSync(file, 'utf8');
        if (text === last) return undefined;
        last = text;
        return loadSettings(file).settings;
      },
    });
    const { engine, runs } = daemon;
    expect(await daemon.round()).toMatchObject({ running: [], queued: 0 });
    expect(runs).toHaveLength(0);
    expect(searches()).toBe(0);
    expect(engine.automations()[0]).toMatchObject({ id: 'fix', paused: true, disabled: true });
    const refused = await engine.setPaused('fix', false).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ControlError);
    expect((refused as ControlError).reason).toBe('automation_disabled');
    expect((refused as ControlError).message).toContain('edit the file to resume it');

    // A pause from the board and `enabled = false` combine: enabling in the file leaves it paused.
    await engine.setPaused('fix', true);
    h.configure({ automation: issueAutomation('fix', { prompt: 'Fix ${issue_title}' }) });
    await waitFor('the reload', () => engine.automations()[0]?.disabled === false);
    expect(engine.automations()[0]?.paused).toBe(true);
    expect(await daemon.round()).toMatchObject({ running: [], queued: 0 });
    expect(runs).toHaveLength(0);
    await engine.setPaused('fix', false);
    await waitFor('the run once both are lifted', () => runs.length === 1);
    expect(runs[0]?.status).toBe('succeeded');
    expect(searches()).toBeGreaterThan(0); // the count above sees this automation's polls
    await daemon.stop();
  });

  it('run now fires a schedule at once, whatever its next occurrence', async () => {
    h = await createHarness({
      settingsExtra: FAST,
      issues: [],
      automation: `[automations.yearly]
trigger_type = "cron"
repository = "api"
schedule = "0 3 1 1 *"
prompt = "Yearly chores"
`,
    });
    const daemon = await watching(h);
    expect(await daemon.round()).toMatchObject({ running: [], queued: 0 });
    expect(daemon.runs).toHaveLength(0);
    expect(daemon.engine.trigger('yearly')).toBe('fired');
    await waitFor('the fired run', () => daemon.runs.length === 1);
    expect(daemon.runs[0]).toMatchObject({ automationId: 'yearly', status: 'succeeded', taskType: 'cron' });
    await daemon.stop();
  });

  it('cancels one run (its session kept) while another goes on, and retry resumes the session', async () => {
    h = await createHarness({
      settingsExtra: `max_active_tasks = 2\n${FAST}`,
      issues: [
        { title: 'Slow one [[fake:sleep=30]]', labels: ['agent-ready'] },
        { title: 'Quick one [[fake:sleep=1]]', labels: ['agent-ready'] },
      ],
    });
    const { log, entries } = captureLog();
    const daemon = await watching(h, { engine: { log } });
    const slow = await waitFor('the slow run to start', async () =>
      (await store!.listRuns({ status: ['running'] })).find(
        (r) => r.itemTitle.startsWith('Slow') && r.sessionId !== null,
      ),
    );
    daemon.engine.cancel(slow.id);
    await waitFor('both runs to end', () => daemon.runs.length === 2);
    const cancelled = daemon.runs.find((r) => r.id === slow.id)!;
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.reason).toBe(
      'cancelled by an operator; its session is kept and is not resumed until the run is retried',
    );
    // What an operator watching the log reads promises no resume the cancel will not do.
    const logged = entries().find((l) => l.msg === 'Cancelled task' && l.run === slow.id);
    expect(logged?.reason).toBe('cancelled while the agent ran; its session is kept');
    expect(daemon.runs.find((r) => r.id !== slow.id)?.status).toBe('succeeded');
    expect(await store!.getSession(slow.taskKey)).toMatchObject({ sessionId: slow.sessionId });
    expect(() => daemon.engine.cancel(slow.id)).toThrow(ControlError);
    expect(await daemon.engine.retry(slow.id)).toBe('resumed');
    const resumed = await waitFor('the resumed run', async () =>
      (await store!.listRuns({ automationId: 'fix' })).find((r) => r.id !== slow.id && r.resumed),
    );
    expect(resumed.sessionId).toBe(slow.sessionId);
    daemon.engine.cancel(resumed.id);
    await daemon.stop();
  });

  it('a cancel sticks: neither a restart of the watch nor `run` resumes or reruns it, only a retry does', async () => {
    h = await createHarness({
      settingsExtra: FAST,
      issues: [{ title: 'Slow one [[fake:sleep-first=30]]', labels: ['agent-ready'] }],
    });
    let daemon = await watching(h);
    const slow = await waitFor('the slow run to start', async () =>
      (await store!.listRuns({ status: ['running'] })).find((r) => r.sessionId !== null),
    );
    daemon.engine.cancel(slow.id);
    await waitFor('the cancelled run', () => daemon.runs.length === 1);
    expect(daemon.runs[0]).toMatchObject({ id: slow.id, status: 'cancelled' });
    expect(daemon.runs[0]!.reason).toBe(
      'cancelled by an operator; its session is kept and is not resumed until the run is retried',
    );
    await daemon.stop();

    // A new watch (what `serve` does at start) and a one-shot `run`: the item waits for a person.
    daemon = await watching(h);
    await daemon.round();
    await daemon.round();
    expect(daemon.runs).toEqual([]);
    await daemon.stop();
    const drained = await runBuiltCli(['--config', h.settingsFile, 'run'], { env: h.env });
    expect(drained.stdout).toBe(
      `No run started.\n  still cancelled: fix acme/api#1 "Slow one [[fake:sleep-first=30]]": an operator cancelled run ${slow.id}; Retry on the board (or POST /api/v1/runs/${slow.id}/retry) runs it again\n`,
    );
    expect(drained.code).toBe(0);
    store = await h.openStore();
    expect(await store.listRuns({ automationId: 'fix' })).toHaveLength(1);
    expect(await store.getSession(slow.taskKey)).toMatchObject({ sessionId: slow.sessionId });
    expect(h.agentRuns('claude')).toHaveLength(1);
    await store.close();
    store = undefined;

    // A person's retry resumes it, and from then on it runs as any other item.
    daemon = await watching(h);
    await daemon.round();
    expect(await daemon.engine.retry(slow.id)).toBe('resumed');
    await waitFor('the resumed run', () => daemon.runs.length === 1);
    expect(daemon.runs[0]).toMatchObject({ status: 'succeeded', resumed: true, sessionId: slow.sessionId });
    await daemon.stop();
  });

  it('a retry that arrives while its item is being held is not lost: it resumes once the hold settles', async () => {
    // What a fleet under load showed: the worker's gate had read the hold, the retry lifted it and
    // offered the session while that held dispatch was still in flight, and the offer was dropped
    // as a duplicate, so the retry answered "resumed" and nothing ever ran.
    h = await createHarness({
      settingsExtra: FAST,
      issues: [{ title: 'Slow one [[fake:sleep-first=30]]', labels: ['agent-ready'] }],
    });
    let daemon = await watching(h);
    const slow = await waitFor('the slow run to start', async () =>
      (await store!.listRuns({ status: ['running'] })).find((r) => r.sessionId !== null),
    );
    daemon.engine.cancel(slow.id);
    await waitFor('the cancelled run', () => daemon.runs.length === 1);
    await daemon.stop();

    // The next watch's gate reads the hold, then is kept waiting until the retry has been asked.
    store = await h.openStore();
    const real = store;
    let gateRead: () => void = () => undefined;
    const read = new Promise<void>((resolve) => {
      gateRead = resolve;
    });
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first = true;
    const slowGate: Store = Object.create(real, {
      getMeta: {
        value: async (key: string) => {
          const value = await real.getMeta(key);
          if (key.startsWith('cancelled:') && first) {
            first = false;
            gateRead();
            await released;
          }
          return value;
        },
      },
    });
    const started = await startWatching(h, { store: slowGate });
    daemon = started;
    await read;
    expect(await daemon.engine.retry(slow.id)).toBe('resumed');
    release();
    const resumed = await waitFor('the resumed run', () => daemon.runs[0]);
    expect(resumed).toMatchObject({ status: 'succeeded', resumed: true, sessionId: slow.sessionId });
    expect(h.agentRuns('claude')).toHaveLength(2);
    await daemon.stop();
  });

  it('retry of a failed run without a session polls the item again; unknown ids are refused', async () => {
    h = await createHarness({
      settingsExtra: FAST,
      automation: issueAutomation('fix', { prompt: 'Fix ${issue_title} [[fake:fail]]' }),
    });
    const daemon = await watching(h);
    await waitFor('the failed run', () => daemon.runs.length === 1);
    const failed = daemon.runs[0]!;
    expect(failed.status).toBe('failed');
    await store!.deleteSession(failed.taskKey);
    expect(await daemon.engine.retry(failed.id)).toBe('polling');
    await waitFor('the second run', () => daemon.runs.length === 2);
    expect(daemon.runs[1]).toMatchObject({ itemId: failed.itemId, status: 'failed' });
    await expect(daemon.engine.retry('NOPE')).rejects.toMatchObject({ reason: 'run_not_found' });
    await expect(daemon.engine.setPaused('nope', true)).rejects.toMatchObject({
      reason: 'automation_not_found',
    });
    await daemon.stop();
  });
});
