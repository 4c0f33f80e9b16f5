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
