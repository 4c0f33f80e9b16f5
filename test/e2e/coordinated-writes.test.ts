/**
 * Issue 12, acceptance (slow), with every write key on (result comments, state labels, the run
 * log) in `run --watch`:
 * - 30 % write faults for a while (half of them after GitHub applied the write): after recovery
 *   every intended write is there exactly once — one result comment per run, one log issue with one
 *   entry per run, labels right, nothing failed in the queue.
 * - Closing the issue mid-run stops the agent within one poll interval, keeps the worktree with its
 *   commit, and says why on the item too (its result comment), with the status label taken off.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { createHarness, type Harness, issueAutomation, waitFor } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const KEYS = [
  'result_comment = true',
  'status_label = "agent:implementing"',
  'failed_label = "agent:failed"',
  'run_log = true',
  'once = true',
  // One try: a retry (10 s later) would resume the failed run's session and add a run.
  'max_attempts = 1',
].join('\n');

/** A seeded random source (mulberry32), so the faults fall the same way every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function watch(harness: Harness, act: (finished: RunRecord[]) => Promise<void>): Promise<RunRecord[]> {
  const stop = new AbortController();
  const finished: RunRecord[] = [];
  const result = harness.run({ mode: 'watch', stop: stop.signal, onRun: (run) => finished.push(run) });
  try {
    await act(finished);
  } finally {
    stop.abort();
  }
  return (await result).runs;
}

async function pendingWrites(harness: Harness): Promise<number> {
  const store = await harness.openStore();
  try {
    return (await store.listWrites({ status: 'pending' })).length;
  } finally {
    await store.close();
  }
}

describe('coordinated writes (slow)', () => {
  it('30 % write faults for a while: after recovery every intended write is there exactly once', async () => {
    h = await createHarness({
      issues: [
        { title: 'One [[fake:commit]]', labels: ['agent-ready'] },
        { title: 'Two [[fake:commit]]', labels: ['agent-ready'] },
        { title: 'Three [[fake:fail]]', labels: ['agent-ready'] },
      ],
      settingsExtra: '\n[settings.polling]\npoll_interval_seconds = 0.3',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: KEYS }),
    });
    const harness = h;
    harness.sim.setWriteFaults({ fraction: 0.3, applied: true, random: seeded(12) });
    const runs = await watch(harness, async (finished) => {
      await waitFor('three runs', () => finished.length === 3, 60_000);
      // GitHub recovers; the queue's retries (backoff from 2 s) send the rest.
      harness.sim.setWriteFaults(null);
      await waitFor('the queue to empty', async () => (await pendingWrites(harness)) === 0, 90_000);
    });
    expect(runs.map((r) => r.status).sort()).toEqual(['failed', 'succeeded', 'succeeded']);
    const faulted = harness.sim.requests.filter((r) => r.fault === 'status');
    expect(faulted.length).toBeGreaterThan(0);

    for (const run of runs) {
      const item = harness.world.item('acme/api', Number(run.itemId))!;
      expect(item.comments.map((c) => c.author)).toEqual(['octocat']);
      expect(item.comments[0]!.body).toContain(`<!-- curupira:result run=${run.id} -->`);
      expect(item.labels).toEqual(
        run.status === 'failed' ? ['agent-ready', 'agent:failed'] : ['agent-ready'],
      );
    }
    const logs = [...harness.world.repo('acme/api')!.items.values()].filter((i) =>
      i.labels.includes('agent:log'),
    );
    expect(logs).toHaveLength(1);
    const entries = logs[0]!.comments.map((c) => /Run `([^`]+)`/.exec(c.body)?.[1]);
    expect(entries.sort()).toEqual(runs.map((r) => r.id).sort());

    const store = await harness.openStore();
    try {
      const writes = await store.listWrites();
      expect(writes.filter((w) => w.status !== 'sent')).toEqual([]);
      // 3 runs × (status on, status off, failed label on or off, result) + log issue + 3 entries.
      expect(writes.length).toBe(3 * 4 + 1 + 3);
    } finally {
      await store.close();
    }
  }, 180_000);

  it('closing the issue mid-run: stopped within a poll interval, worktree kept, the result comment says why', async () => {
    h = await createHarness({
      issues: [{ title: 'Slow [[fake:commit-early]] [[fake:sleep=60]]', labels: ['agent-ready'] }],
      settingsExtra: '\n[settings.polling]\npoll_interval_seconds = 0.3',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: KEYS }),
    });
    const harness = h;
    let worktree = '';
    let closedAt = 0;
    let endedAt = 0;
    const runs = await watch(harness, async (finished) => {
      const call = await waitFor('the agent', () => harness.agentRuns('claude')[0]);
      worktree = call.cwd;
      await waitFor('its early commit', () => {
        try {
          return execFileSync('git', ['-C', worktree, 'log', '--oneline'], { encoding: 'utf8' }).includes(
            'early change',
          );
        } catch {
          return false;
        }
      });
      await waitFor('the status label', () =>
        harness.world.item('acme/api', 1)!.labels.includes('agent:implementing'),
      );
      harness.world.closeIssue('acme/api', 1);
      closedAt = Date.now();
      await waitFor('the run to end', () => finished.length === 1, 20_000);
      endedAt = Date.now();
      await waitFor('the queue to empty', async () => (await pendingWrites(harness)) === 0, 30_000);
    });
    const [run] = runs;
    expect(run).toMatchObject({ status: 'cancelled', worktreeKept: true, commits: 1 });
    expect(run!.reason).toContain('item closed: the agent was stopped (on_unmatch = "stop")');
    // One poll interval (0.3 s) plus the agent's process-group stop (SIGTERM grace), well under 10 s.
    expect(endedAt - closedAt).toBeLessThan(10_000);
    expect(existsSync(worktree)).toBe(true);
    const item = harness.world.item('acme/api', 1)!;
    expect(item.labels).toEqual(['agent-ready']);
    const results = item.comments.filter((c) => c.body.includes('curupira:result'));
    expect(results).toHaveLength(1);
    expect(results[0]!.body).toContain('**cancelled**');
    expect(results[0]!.body).toContain('item closed: the agent was stopped');
    expect(results[0]!.body).toContain('Kept worktree');
  }, 120_000);
});
