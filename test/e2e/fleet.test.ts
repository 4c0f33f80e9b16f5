/**
 * The fleet (issue 17) with real processes: a poller and workers of the built CLI sharing one
 * PostgreSQL schema (the machine's server), the simulator and fake agents.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { createTestFleet, type TestFleet } from '../helpers/fleet.js';
import { runBuiltCli, waitFor } from '../helpers/harness.js';

let fleet: TestFleet | undefined;

afterEach(async () => {
  await fleet?.cleanup();
  fleet = undefined;
});

async function finishedRuns(f: TestFleet): Promise<RunRecord[]> {
  const store = await f.openStore();
  try {
    return (await store.listRuns({ limit: Number.POSITIVE_INFINITY })).filter(
      (run) => run.finishedAt !== null,
    );
  } finally {
    await store.close();
  }
}

describe.runIf(process.env.CURUPIRA_BUILT === '1')('fleet', () => {
  it('a poller and two workers run every item once, each on a host that records it', async () => {
    const issues = Array.from({ length: 6 }, (_, i) => ({
      title: `Issue ${i + 1}`,
      body: '[[fake:sleep=1]]',
    }));
    fleet = await createTestFleet({ issues, maxActive: 4 });
    const f = fleet;
    const poller = f.start('poller', 'p1');
    let pollerOut = '';
    poller.child.stdout?.on('data', (d: Buffer) => {
      pollerOut += d.toString();
    });
    f.start('worker', 'w1');
    f.start('worker', 'w2');
    const runs = await waitFor(
      'six finished runs',
      async () => {
        const done = await finishedRuns(f);
        return done.length >= 6 ? done : undefined;
      },
      90_000,
      500,
    );
    expect(runs.map((r) => r.status)).toEqual(Array(6).fill('succeeded'));
    expect(new Set(runs.map((r) => r.itemId)).size).toBe(6);
    expect(new Set(runs.map((r) => r.host))).toEqual(new Set(['w1', 'w2']));
    expect(f.harness.agentRuns('claude')).toHaveLength(6);

    // Seeing the fleet: the poller's API and `curupira status` on a host without a daemon.
    const board = await waitFor(
      'the board URL',
      () => /Board: (http:\/\/\S+)\?token=(\S+)/.exec(pollerOut),
      30_000,
    );
    const api = await fetch(`${board[1]}api/v1/fleet`, { headers: { authorization: `Bearer ${board[2]}` } });
    expect(api.status).toBe(200);
    const body = (await api.json()) as {
      hosts: { name: string; role: string; health: string; polling: boolean }[];
    };
    expect(body.hosts.map((h) => [h.name, h.role, h.health])).toEqual([
      ['p1', 'poller', 'healthy'],
      ['w1', 'worker', 'healthy'],
      ['w2', 'worker', 'healthy'],
    ]);
    expect(body.hosts.find((h) => h.name === 'p1')?.polling).toBe(true);
    const status = await runBuiltCli(['status', '-c', f.settingsFor('w1')], { env: f.harness.env });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/w1.*healthy/);
    expect(status.stdout).toMatch(/p1.*poller/);
  }, 120_000);
});

describe.runIf(process.env.CURUPIRA_BUILT === '1')('fleet: a cancel sticks', () => {
  it('a run cancelled on the board is neither resumed nor rerun when the fleet restarts, until retried', async () => {
    fleet = await createTestFleet({ issues: [{ title: 'Slow one [[fake:sleep-first=30]]' }], maxActive: 1 });
    const f = fleet;
    // The token is printed on the first start only; later starts print the URL alone.
    let token = '';
    const board = async (poller: { output(): string }) => {
      const found = await waitFor(
        'the board URL',
        () => /Board: (http:\/\/\S+?)(?:\?token=(\S+)| )/.exec(poller.output()),
        30_000,
      );
      token ||= found[2] ?? '';
      return found[1]!;
    };
    const post = async (url: string, path: string) =>
      fetch(`${url}api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    let poller = f.start('poller', 'p1');
    let worker = f.start('worker', 'w1');
    const running = await waitFor(
      'the slow run to start',
      async () => {
        const store = await f.openStore();
        try {
          return (await store.listRuns({ status: ['running'] })).find((r) => r.sessionId !== null);
        } finally {
          await store.close();
        }
      },
      60_000,
      300,
    );
    expect((await post(await board(poller), `/runs/${running.id}/cancel`)).status).toBe(202);
    await waitFor(
      'the cancelled run',
      async () => (await finishedRuns(f)).some((r) => r.id === running.id && r.status === 'cancelled'),
      30_000,
      300,
    );
    // The worker says what happened: an operator's cancel, not a stop of curupira.
    await waitFor(
      'the worker to log the cancel',
      () => worker.output().includes('Cancelled task'),
      30_000,
      300,
    );
    const cancelLine = worker
      .output()
      .split('\n')
      .find((line) => line.includes('Cancelled task'))!;
    expect(cancelLine).toContain('cancelled while the agent ran');
    expect(cancelLine).not.toContain('stopped by curupira');
    // Stopped once the poller settled that dispatch (a poller stopped before leaves it to the next
    // poller to take over, which is another test's matter).
    const url = await board(poller);
    await waitFor(
      'the dispatch settled',
      async () => {
        const answer = await fetch(`${url}api/v1/fleet`, { headers: { authorization: `Bearer ${token}` } });
        return ((await answer.json()) as { dispatches: unknown[] }).dispatches.length === 0;
      },
      30_000,
      300,
    );
    for (const cli of [poller, worker]) {
      cli.child.kill('SIGTERM');
      await cli.done.catch(() => undefined);
    }

    // The fleet starts again (a session lives in its host's worktree: it is offered to w1 again):
    // the poller offers the saved session and the worker's gate holds it, since the cancel is in the
    // shared state, not in either process.
    poller = f.start('poller', 'p1');
    worker = f.start('worker', 'w1');
    await waitFor(
      'the worker to hold the cancelled item',
      () => worker.output().includes('Cancelled by an operator: not run until that run is retried'),
      60_000,
      300,
    );
    expect((await finishedRuns(f)).map((r) => r.id)).toEqual([running.id]);
    expect(f.harness.agentRuns('claude')).toHaveLength(1);

    // A person's retry resumes it.
    const retried = await post(await board(poller), `/runs/${running.id}/retry`);
    expect(await retried.json()).toMatchObject({ result: 'resumed' });
    const resumed = await waitFor(
      'the resumed run',
      async () => (await finishedRuns(f)).find((r) => r.id !== running.id),
      60_000,
      300,
    );
    expect(resumed).toMatchObject({ status: 'succeeded', resumed: true, sessionId: running.sessionId });
    expect(f.harness.agentRuns('claude')).toHaveLength(2);
  }, 180_000);
});
