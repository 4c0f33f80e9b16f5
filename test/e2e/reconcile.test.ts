/**
 * Reconciliation (issue 12, item 6) in `run --watch`: while a task is queued or running, each poll
 * interval reads its item again. Closing the issue or removing its label stops the running agent
 * (its session and its worktree with the commit kept, the reason recorded), `on_unmatch =
 * "finish"` lets it finish, and a queued task whose item stopped matching is dropped. Reads only:
 * no GitHub write is configured.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { RunRecord } from '../../src/core/types.js';
import { transcriptsDir } from '../../src/engine/paths.js';
import { Engine } from '../../src/features.js';
import {
  createHarness,
  filesUnder,
  type Harness,
  issueAutomation,
  waitFor,
  writeRequests,
} from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const POLLING = '\n[settings.polling]\npoll_interval_seconds = 0.2';

async function watching(
  options: { titles: string[]; extra?: string; settingsExtra?: string },
  act: (harness: Harness, finished: RunRecord[]) => Promise<void>,
): Promise<{ harness: Harness; runs: RunRecord[] }> {
  const harness = await createHarness({
    issues: options.titles.map((title) => ({ title, labels: ['agent-ready'] })),
    settingsExtra: `${options.settingsExtra ?? ''}${POLLING}`,
    automation: issueAutomation('fix', {
      prompt: '${issue_title}',
      ...(options.extra ? { extra: options.extra } : {}),
    }),
  });
  h = harness;
  const stop = new AbortController();
  const finished: RunRecord[] = [];
  const result = harness.run({ mode: 'watch', stop: stop.signal, onRun: (run) => finished.push(run) });
  try {
    await act(harness, finished);
  } finally {
    stop.abort();
  }
  return { harness, runs: (await result).runs };
}

/** Waits until the agent working on issue `title` has made its early commit; returns its worktree. */
async function committed(harness: Harness, title: string): Promise<string> {
  const call = await waitFor(`the agent on ${title}`, () =>
    harness.agentRuns('claude').find((c) => c.prompt?.includes(title)),
  );
  await waitFor('its early commit', () => {
    try {
      return execFileSync('git', ['-C', call.cwd, 'log', '--oneline'], { encoding: 'utf8' }).includes(
        'early change',
      );
    } catch {
      return false;
    }
  });
  return call.cwd;
}

/** GraphQL requests that read the state of active tasks' items (one item or a batch). */
const itemChecks = (harness: Harness, from = 0): number =>
  harness.sim.requests.slice(from).filter((r) => r.operationName?.startsWith('CurupiraItemState')).length;

const searches = (harness: Harness): number =>
  harness.sim.requests.filter((r) => r.operationName === 'CurupiraSearchIssues').length;

/** Waits until an agent's transcript holds the provider's closing event (its final result). */
async function reported(harness: Harness): Promise<void> {
  const dir = transcriptsDir(harness.settings());
  await waitFor('the final result in a transcript', () =>
    (existsSync(dir) ? filesUnder(dir) : [])
      .filter((f) => f.endsWith('.jsonl'))
      .some((f) => readFileSync(f, 'utf8').includes('"type":"result"')),
  );
}

describe('reconciliation', () => {
  it('closing the issue mid-run stops the agent at the next check, keeps the worktree and says why', async () => {
    let checksAtClose = 0;
    let checksAtEnd = 0;
    let worktree = '';
    const { harness, runs } = await watching(
      { titles: ['Slow [[fake:commit-early]] [[fake:sleep=60]]'] },
      async (harness, finished) => {
        worktree = await committed(harness, 'Slow');
        checksAtClose = itemChecks(harness);
        harness.world.closeIssue('acme/api', 1);
        await waitFor('the run to end', () => finished.length === 1, 20_000);
        checksAtEnd = itemChecks(harness);
      },
    );
    const [run] = runs;
    expect(runs).toHaveLength(1);
    expect(run).toMatchObject({ status: 'cancelled', worktreeKept: true, commits: 1 });
    expect(run!.reason).toBe(
      'item closed: the agent was stopped (on_unmatch = "stop"); its session and its worktree are kept',
    );
    // The first check that read the closed issue stopped it (one more may have been in flight).
    expect(checksAtEnd - checksAtClose).toBeGreaterThanOrEqual(1);
    expect(checksAtEnd - checksAtClose).toBeLessThanOrEqual(2);
    expect(existsSync(worktree)).toBe(true);
    const store = await harness.openStore();
    try {
      expect((await store.getSession(run!.taskKey))?.sessionId).toBe(run!.sessionId);
    } finally {
      await store.close();
    }
    expect(writeRequests(harness)).toEqual([]);
  }, 60_000);

  it('removing the label does the same', async () => {
    const { runs } = await watching(
      { titles: ['Labelled [[fake:commit-early]] [[fake:sleep=60]]'] },
      async (harness, finished) => {
        await committed(harness, 'Labelled');
        harness.world.removeLabel('acme/api', 1, 'agent-ready');
        await waitFor('the run to end', () => finished.length === 1, 20_000);
      },
    );
    expect(runs.map((r) => [r.status, r.reason, r.commits])).toEqual([
      [
        'cancelled',
        `label 'agent-ready' removed: the agent was stopped (on_unmatch = "stop"); its session and its worktree are kept`,
        1,
      ],
    ]);
  }, 60_000);

  it('on_unmatch = "finish" lets the agent finish', async () => {
    const { harness, runs } = await watching(
      { titles: ['Finish [[fake:commit-early]] [[fake:sleep=2]]'], extra: 'on_unmatch = "finish"' },
      async (harness, finished) => {
        await committed(harness, 'Finish');
        harness.world.closeIssue('acme/api', 1);
        await waitFor('the run to end', () => finished.length === 1, 20_000);
      },
    );
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    expect(itemChecks(harness)).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('a queued task whose label was removed is dropped before it starts', async () => {
    const { harness, runs } = await watching(
      {
        titles: ['First [[fake:sleep=60]]', 'Second'],
        settingsExtra: 'max_active_tasks = 1',
      },
      async (harness, finished) => {
        await waitFor('the first agent', () => harness.agentRuns('claude').length === 1);
        harness.world.removeLabel('acme/api', 2, 'agent-ready');
        await waitFor('the second to be dropped', () => finished.length === 1, 20_000);
        harness.world.closeIssue('acme/api', 1);
        await waitFor('the first run to end', () => finished.length === 2, 20_000);
      },
    );
    expect(runs.map((r) => [r.itemId, r.status, r.startedAt === null])).toEqual([
      ['2', 'cancelled', true],
      ['1', 'cancelled', false],
    ]);
    expect(runs[0]!.reason).toBe("label 'agent-ready' removed: dropped from the queue before it started");
    expect(harness.agentRuns('claude')).toHaveLength(1);
  }, 60_000);

  it('a session stopped because its issue closed is not resumed by later starts; reopening the issue resumes it', async () => {
    const { harness, runs } = await watching(
      { titles: ['Stopped [[fake:commit-early]] [[fake:sleep=60]]'] },
      async (harness, finished) => {
        await committed(harness, 'Stopped');
        harness.world.closeIssue('acme/api', 1);
        await waitFor('the run to end', () => finished.length === 1, 20_000);
      },
    );
    expect(runs.map((r) => r.status)).toEqual(['cancelled']);
    const sessionId = runs[0]!.sessionId;
    expect(sessionId).toBeTruthy();

    // A one-shot `run` and a watch, with the issue still closed: the session is kept, not resumed.
    expect((await harness.run()).runs).toEqual([]);
    const stop = new AbortController();
    const before = searches(harness);
    const watched = harness.run({ mode: 'watch', stop: stop.signal });
    await waitFor('a poll of the restarted watch', () => searches(harness) > before);
    stop.abort();
    expect((await watched).runs).toEqual([]);
    expect(harness.agentRuns('claude')).toHaveLength(1);
    const store = await harness.openStore();
    try {
      expect((await store.getSession(runs[0]!.taskKey))?.sessionId).toBe(sessionId);
    } finally {
      await store.close();
    }

    // The item matches again: its session resumes.
    harness.world.reopenIssue('acme/api', 1);
    const reopened = await harness.run();
    expect(reopened.runs.map((r) => [r.status, r.resumed, r.sessionId])).toEqual([
      ['succeeded', true, sessionId],
    ]);
    expect(harness.agentRuns('claude').map((c) => c.resumeOf)).toEqual([null, sessionId]);
  }, 60_000);

  it('an agent that reported its result is not stopped when its issue closes (it closed it itself): the run succeeds', async () => {
    const { harness, runs } = await watching(
      { titles: ['Closes itself [[fake:commit]] [[fake:linger=2]]'] },
      async (harness, finished) => {
        await reported(harness);
        harness.world.closeIssue('acme/api', 1);
        await waitFor('the run to end', () => finished.length === 1, 20_000);
      },
    );
    expect(runs.map((r) => [r.status, r.reason])).toEqual([['succeeded', null]]);
    // Checks went on while it lingered: the closed item was read, and the agent was let be.
    expect(itemChecks(harness)).toBeGreaterThanOrEqual(1);
    const store = await harness.openStore();
    try {
      expect(await store.listSessions()).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('a stop that comes after the agent reported its result does not undo the success', async () => {
    const harness = await createHarness({
      issues: [{ title: 'Slow to exit [[fake:commit]] [[fake:linger=30]]', labels: ['agent-ready'] }],
      settingsExtra: POLLING,
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    h = harness;
    const store = await harness.openStore();
    const stop = new AbortController();
    const runs: RunRecord[] = [];
    const engine = new Engine(
      harness.engineOptions(store, { mode: 'watch', stop: stop.signal, onRun: (run) => runs.push(run) }),
    );
    const done = engine.run();
    try {
      await reported(harness);
      const [running] = await store.listRuns();
      engine.cancel(running!.id);
      await waitFor('the run to end', () => runs.length === 1, 20_000);
    } finally {
      stop.abort();
      await done;
      await store.close();
    }
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    expect(runs[0]!.reason).toMatch(/reported its result/);
  }, 60_000);
});

/**
 * What reconciliation costs on GitHub (issue 34, item 3), on the injected clock at the default
 * 30 s poll interval: one agent runs (`max_active_tasks = 1`) and 20 tasks wait behind it.
 */
describe('reconciliation cost', () => {
  const QUEUED = 20;

  /** Lets the engine finish what one clock step woke it for: GitHub hears nothing more for a while. */
  async function settled(harness: Harness, clock: FakeClock): Promise<void> {
    let count = -1;
    let stableSince = Date.now();
    await waitFor('the engine to sleep again', () => {
      if (harness.sim.requests.length !== count) {
        count = harness.sim.requests.length;
        stableSince = Date.now();
      }
      return clock.pending > 0 && Date.now() - stableSince >= 150;
    });
  }

  async function busyEngine(
    settingsExtra: string,
    act: (harness: Harness, step: () => Promise<void>, runs: readonly RunRecord[]) => Promise<void>,
  ): Promise<{ harness: Harness; runs: RunRecord[] }> {
    const harness = await createHarness({
      issues: [
        { title: 'Busy [[fake:sleep=60]]', labels: ['agent-ready'] },
        ...Array.from({ length: QUEUED }, (_, i) => ({ title: `Queued ${i + 2}`, labels: ['agent-ready'] })),
      ],
      settingsExtra: `max_active_tasks = 1\n${settingsExtra}`,
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    h = harness;
    const store = await harness.openStore();
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const stop = new AbortController();
    const runs: RunRecord[] = [];
    const engine = new Engine({
      ...harness.engineOptions(store, { mode: 'watch', stop: stop.signal, onRun: (run) => runs.push(run) }),
      clock,
    });
    const done = engine.run();
    try {
      await waitFor('the first agent', () => harness.agentRuns('claude').length === 1, 30_000);
      await settled(harness, clock);
      const step = async (): Promise<void> => {
        await clock.advance(30_000);
        await settled(harness, clock);
      };
      await act(harness, step, runs);
    } finally {
      stop.abort();
      await clock.advance(60_000);
      await done;
      await store.close();
    }
    return { harness, runs };
  }

  it('a full queue costs one GraphQL request per check, not one per task; a closed item is still dropped', async () => {
    const rounds = 5;
    let during = 0;
    let requests = 0;
    const { harness, runs } = await busyEngine(
      `max_pending_tasks = ${QUEUED}`,
      async (harness, step, finished) => {
        const from = harness.sim.requests.length;
        for (let i = 0; i < rounds; i += 1) await step();
        during = itemChecks(harness, from);
        requests = harness.sim.requests
          .slice(from)
          .filter((r) => r.path === '/graphql' && !r.operationName?.startsWith('CurupiraSearch')).length;
        harness.world.closeIssue('acme/api', 7);
        await step();
        await waitFor('the closed item to be dropped', () => finished.length === 1);
      },
    );
    // Besides the searches (a full queue is not polled), only the checks ask GitHub, one request each
    // (one per 30 s step; the first check or two find the items still fresh from the first poll).
    // Before issue 34: one request per task per check, 21 a check.
    expect(during).toBeGreaterThanOrEqual(rounds - 2);
    expect(during).toBeLessThanOrEqual(rounds);
    expect(requests).toBe(during);
    // (The last run is the busy one, stopped when the test stops the engine.)
    expect(runs.slice(0, -1).map((r) => [r.itemId, r.status, r.reason])).toEqual([
      ['7', 'cancelled', 'item closed: dropped from the queue before it started'],
    ]);
    expect(harness.agentRuns('claude')).toHaveLength(1);
  }, 60_000);

  it('items the poll just found need no second read', async () => {
    let during = 0;
    await busyEngine('', async (harness, step) => {
      const from = harness.sim.requests.length;
      for (let i = 0; i < 4; i += 1) await step();
      during = itemChecks(harness, from);
    });
    expect(during).toBe(0);
  }, 60_000);
});
