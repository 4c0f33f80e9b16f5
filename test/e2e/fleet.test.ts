/**
 * The fleet (issue 17) with real processes: a poller and workers of the built CLI sharing one
 * PostgreSQL schema (the machine's server), the simulator and fake agents.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { createTestFleet, type TestFleet } from '../helpers/fleet.js';
import { waitFor } from '../helpers/harness.js';

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
    f.start('poller', 'p1');
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
  }, 120_000);
});
