/**
 * Remediation runs go through the engine's scheduler (issue 13): a delivered pull request (the
 * simulator backed by a bare repository, real git, the fake Claude Code CLI) followed by a real
 * engine in watch mode, in this process.
 *
 * - `max_active_tasks = 1` and a normal run busy: the remediation waits for the slot, then runs;
 *   never two agents at once;
 * - `cancel` of a running remediation: it ends as cancelled, its feedback counts as handled, and
 *   the next look at the pull request does not start it again;
 * - a paused automation: its remediation waits in the queue until the automation is resumed.
 *
 * The engine's clock runs ahead of the real one on demand (`ahead`), so that the next look at a
 * pull request (`follow_interval`, 10 s at the least) comes without waiting for it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../src/core/clock.js';
import type { RunRecord } from '../../src/core/types.js';
import { REMEDIATION_MARKS } from '../../src/delivery/remediation.js';
import { Engine, type EngineStatus } from '../../src/features.js';
import { createLogger } from '../../src/log.js';
import { setPermission, submitReview } from '../../src/simulator/reviews.js';
import type { Store } from '../../src/store/types.js';
import {
  createHarness,
  type Harness,
  issueAutomation,
  onlyRun,
  peakOverlap,
  runInterval,
  waitFor,
} from '../helpers/harness.js';
import { nextRound } from '../helpers/watch.js';

let h: Harness | undefined;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
  await h?.cleanup();
  h = undefined;
});

async function world(settings = ''): Promise<Harness> {
  const harness = await createHarness({
    issues: [{ title: 'Fix the parser [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
    automation: issueAutomation('fix', {
      prompt: '${issue_title}',
      extra: 'deliver = "pr"\npr_draft = false\nfollow_interval = 10',
    }),
    settingsExtra: `${settings}\n[settings.polling]\npoll_interval_seconds = 0.2`,
  });
  setPermission(harness.world, 'acme/api', 'alice', 'write');
  return harness;
}

/** The delivery: one drain run that commits, pushes and opens pull request #2. */
async function deliver(harness: Harness): Promise<RunRecord> {
  const run = onlyRun((await harness.run()).runs);
  expect(run.status).toBe('succeeded');
  expect(harness.world.pullRequest('acme/api', 2)).toBeDefined();
  return run;
}

interface Daemon {
  engine: Engine;
  runs: RunRecord[];
  statuses: EngineStatus[];
  /** Log messages (`msg`), in order. */
  messages: string[];
  /** Moves the engine's clock `ms` ahead of the real one. */
  ahead(ms: number): void;
  /** Wakes the engine; a whole round of its loop that began after the call (the status it left). */
  round(): Promise<EngineStatus>;
  stop(): Promise<void>;
}

function watching(harness: Harness, db: Store): Daemon {
  const stop = new AbortController();
  const runs: RunRecord[] = [];
  const statuses: EngineStatus[] = [];
  const ticks: EngineStatus[] = [];
  const messages: string[] = [];
  let offset = 0;
  const clock: Clock = {
    now: () => Date.now() + offset,
    sleep: (ms, signal) => systemClock.sleep(ms, signal),
  };
  const log = createLogger({
    console: {
      write: (line: string) => {
        messages.push((JSON.parse(line) as { msg: string }).msg);
      },
    } as never,
    format: 'json',
  });
  const options = harness.engineOptions(db, {
    mode: 'watch',
    stop: stop.signal,
    onRun: (run) => runs.push(run),
    onStatus: (status) => statuses.push(structuredClone(status)),
    log,
  });
  const engine = new Engine({ ...options, clock, onTick: (status) => ticks.push(structuredClone(status)) });
  const done = engine.run();
  return {
    engine,
    runs,
    statuses,
    messages,
    ahead: (ms) => {
      offset += ms;
    },
    round: () => nextRound(engine, ticks),
    stop: async () => {
      stop.abort();
      await done;
    },
  };
}

const remediationsOf = async (db: Store, deliveryId: string) =>
  (await db.listRuns({ limit: Number.POSITIVE_INFINITY })).filter((r) => r.upstreamRunId === deliveryId);

const settled = (db: Store, deliveryId: string) => async () =>
  (await db.listPullRequestMarks(deliveryId)).some((m) => m.key.startsWith('handled:')) &&
  (await db.getPullRequestMark(deliveryId, REMEDIATION_MARKS.action)) === undefined;

describe('remediation runs through the scheduler', () => {
  it('max_active_tasks = 1 and a normal run busy: the remediation waits for the slot, then runs after it', async () => {
    h = await world('max_active_tasks = 1');
    const delivery = await deliver(h);
    h.world.addIssue('acme/api', {
      title: 'Slow one [[fake:sleep=120]]',
      body: '',
      labels: ['agent-ready'],
      author: 'octocat',
    });
    store = await h.openStore();
    const db = store;
    const daemon = watching(h, db);
    try {
      const slow = await waitFor('the slow run', () =>
        daemon.statuses
          .at(-1)
          ?.running.find((r) => r.title.startsWith('Slow one') && r.status === 'running' && r.runId),
      );
      submitReview(h.world, 'acme/api', 2, {
        author: 'alice',
        state: 'CHANGES_REQUESTED',
        body: 'Please also cover the empty line. [[fake:commit]]',
      });
      // The next look at the pull request finds the review and hands the remediation over.
      daemon.ahead(11_000);
      await waitFor('the remediation handed over', () => daemon.messages.includes('Remediation started'));
      const handedOver = daemon.statuses.length;
      // A few more rounds of the watch loop: the slot is still taken, so it still waits.
      await waitFor('more rounds', () => daemon.statuses.length >= handedOver + 3);
      expect(await remediationsOf(db, delivery.id)).toEqual([]);
      expect(daemon.statuses.at(-1)!.running.map((r) => r.runId)).toEqual([slow.runId]);
      expect((await db.getPullRequestMark(delivery.id, REMEDIATION_MARKS.action))?.value).toContain(
        '"runId":null',
      );

      // The normal run ends (cancelled here): the remediation takes the slot.
      daemon.engine.cancel(slow.runId!);
      await waitFor('the remediation settled', settled(db, delivery.id), 40_000);
      const [remediation] = await remediationsOf(db, delivery.id);
      expect(remediation).toMatchObject({ status: 'succeeded', sessionId: delivery.sessionId });
      const slowRun = (await db.getRun(slow.runId!))!;
      expect(slowRun.status).toBe('cancelled');
      expect(Date.parse(remediation!.startedAt!)).toBeGreaterThanOrEqual(Date.parse(slowRun.finishedAt!));
      // Listed as running like any run, and never beside another one.
      expect(daemon.statuses.some((s) => s.running.some((r) => r.remediationOf === delivery.id))).toBe(true);
      expect(Math.max(...daemon.statuses.map((s) => s.running.length))).toBe(1);
      expect(peakOverlap([slowRun, remediation!].map(runInterval))).toBe(1);
    } finally {
      await daemon.stop();
    }
  }, 120_000);

  it('cancel ends a running remediation as cancelled; its feedback counts as handled and it is not started again', async () => {
    h = await world();
    const delivery = await deliver(h);
    submitReview(h.world, 'acme/api', 2, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Rename it. [[fake:sleep=120]]',
    });
    store = await h.openStore();
    const db = store;
    const daemon = watching(h, db);
    try {
      const running = await waitFor('the remediation running', () =>
        daemon.statuses
          .at(-1)
          ?.running.find((r) => r.remediationOf === delivery.id && r.status === 'running' && r.runId),
      );
      const resumed = () => h!.agentRuns('claude').filter((call) => call.resumeOf === delivery.sessionId);
      // Its agent is at work (resumed on the delivery's session) when it is cancelled.
      await waitFor('the agent resumed', () => resumed().length === 1);
      daemon.engine.cancel(running.runId!);
      await waitFor('the remediation settled', settled(db, delivery.id), 40_000);
      const run = (await db.getRun(running.runId!))!;
      expect(run.status).toBe('cancelled');
      expect(run.reason).toContain('cancelled by an operator');
      const handled = (await db.listPullRequestMarks(delivery.id)).filter((m) =>
        m.key.startsWith('handled:'),
      );
      expect(handled.map((m) => m.value)).toEqual([run.id]);

      // The next look: nothing in flight, the review is answered; no second remediation.
      daemon.ahead(11_000);
      await waitFor(
        'the next look',
        async () => (await db.getPullRequest(delivery.id))?.gateDetail === 'changes requested by @alice',
        40_000,
      );
      expect((await remediationsOf(db, delivery.id)).map((r) => r.id)).toEqual([run.id]);
      expect(resumed()).toHaveLength(1);
    } finally {
      await daemon.stop();
    }
  }, 120_000);

  it('a paused automation starts no remediation; it waits in the queue until resumed', async () => {
    h = await world();
    const delivery = await deliver(h);
    submitReview(h.world, 'acme/api', 2, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Please also cover the empty line. [[fake:commit]]',
    });
    store = await h.openStore();
    const db = store;
    await db.setPaused('fix', true);
    const daemon = watching(h, db);
    try {
      await waitFor('the remediation handed over', () => daemon.messages.includes('Remediation started'));
      // Handed to the scheduler, which holds it: queued, nothing running.
      await waitFor('the remediation queued', () => daemon.statuses.some((s) => s.queued === 1));
      // A whole round of the loop, which dispatches what the scheduler lets through: still held.
      expect(await daemon.round()).toMatchObject({ running: [], queued: 1 });
      expect(await remediationsOf(db, delivery.id)).toEqual([]);
      expect(daemon.statuses.every((s) => s.running.length === 0)).toBe(true);
      expect(daemon.statuses.at(-1)!.queued).toBe(1);

      await daemon.engine.setPaused('fix', false);
      await waitFor('the remediation settled', settled(db, delivery.id), 40_000);
      const [remediation] = await remediationsOf(db, delivery.id);
      expect(remediation).toMatchObject({ status: 'succeeded', sessionId: delivery.sessionId });
    } finally {
      await daemon.stop();
    }
  }, 120_000);
});
