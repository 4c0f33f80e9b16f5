import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunStatus } from '../core/types.js';
import { openStore } from '../store/sqlite/open.js';
import type { Store } from '../store/types.js';
import { duration, loadFigures, percent } from './figures.js';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const MIN = 60_000;
let dir: string;
let store: Store;
let clock: number;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-figures-'));
  clock = T0;
  store = await openStore(join(dir, 'state.sqlite3'), { now: () => clock });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

interface Seed {
  automation: string;
  profile: string;
  status: RunStatus;
  /** Minutes after T0 the run was created; it runs for `runMin` minutes. */
  at: number;
  runMin: number;
  cost: number | null;
  tokens?: [number, number, number];
  /** Minutes after creation its pull request merged (or `open`: opened, not merged). */
  pr?: number | 'open';
  /** Another try of the item seeded before (its task), and which try. */
  retryOf?: string;
  attempt?: number;
}

let n = 0;
async function seed(s: Seed): Promise<string> {
  n += 1;
  clock = T0 + s.at * MIN;
  const run = await store.createRun({
    automationId: s.automation,
    taskKey: s.retryOf ?? `${s.automation}:${n}`,
    ...(s.attempt === undefined ? {} : { attempt: s.attempt }),
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: String(n),
    itemKey: `issue:${n}`,
    itemTitle: `Issue ${n}`,
    itemUrl: `https://github.com/acme/api/issues/${n}`,
    status: 'running',
    profile: s.profile,
  });
  const started = new Date(clock).toISOString();
  const finished = new Date(clock + s.runMin * MIN).toISOString();
  await store.updateRun(run.id, {
    status: s.status,
    startedAt: started,
    finishedAt: finished,
    costUsd: s.cost,
    usage: s.tokens
      ? { inputTokens: s.tokens[0], cachedInputTokens: s.tokens[1], outputTokens: s.tokens[2] }
      : null,
  });
  if (s.pr !== undefined) {
    await store.beginPullRequest({
      runId: run.id,
      automationId: s.automation,
      taskKey: run.taskKey,
      repo: 'acme/api',
      delivery: 'pr',
      headBranch: `curupira/${n}`,
    });
    await store.updatePullRequest(run.id, {
      number: n,
      url: `https://github.com/acme/api/pull/${n}`,
      state: 'open',
    });
    if (s.pr !== 'open') {
      clock = T0 + (s.at + s.pr) * MIN;
      await store.updatePullRequest(run.id, { state: 'merged' });
    }
  }
  return run.id;
}

describe('the figures over a seeded history', () => {
  it('counts outcomes, pull requests, merge rate, time to merge, cost and tokens, in total and per profile', async () => {
    // Automation `fix`, profile `claude`: 2 merged (30 and 90 min to merge), 1 open, 1 "no changes" success.
    await seed({
      automation: 'fix',
      profile: 'claude',
      status: 'merged',
      at: 0,
      runMin: 10,
      cost: 1,
      tokens: [100, 10, 20],
      pr: 30,
    });
    await seed({
      automation: 'fix',
      profile: 'claude',
      status: 'merged',
      at: 60,
      runMin: 20,
      cost: 2,
      tokens: [200, 20, 40],
      pr: 90,
    });
    await seed({
      automation: 'fix',
      profile: 'claude',
      status: 'succeeded',
      at: 120,
      runMin: 5,
      cost: 0.5,
      pr: 'open',
    });
    await seed({ automation: 'fix', profile: 'claude', status: 'succeeded', at: 130, runMin: 1, cost: 0.5 });
    // Profile `codex`: 1 failed, 1 timed out, 1 merged (60 min), 1 blocked (no cost).
    await seed({ automation: 'fix', profile: 'codex', status: 'failed', at: 140, runMin: 3, cost: 0.25 });
    await seed({ automation: 'fix', profile: 'codex', status: 'timed_out', at: 150, runMin: 30, cost: 0.75 });
    await seed({
      automation: 'fix',
      profile: 'codex',
      status: 'merged',
      at: 160,
      runMin: 8,
      cost: 1,
      pr: 60,
    });
    await seed({ automation: 'fix', profile: 'codex', status: 'blocked', at: 170, runMin: 0, cost: null });
    // Another automation, and a `fix` run outside the window.
    await seed({ automation: 'triage', profile: 'claude', status: 'succeeded', at: 100, runMin: 2, cost: 3 });
    await seed({
      automation: 'fix',
      profile: 'claude',
      status: 'failed',
      at: 60 * 24 * 10,
      runMin: 2,
      cost: 9,
    });

    const window = { from: new Date(T0).toISOString(), to: new Date(T0 + 24 * 60 * MIN).toISOString() };
    const fix = await loadFigures(store, window, 'fix');
    expect(fix.total).toEqual({
      runs: 8,
      byOutcome: { success: 5, failure: 2, blocked: 1, attention: 0, parked: 0, running: 0, neutral: 0 },
      pullRequestsOpened: 4,
      pullRequestsMerged: 3,
      mergeRate: 0.75,
      medianToMergeMs: 60 * MIN,
      // 0, 1, 3, 5, 8, 10, 20, 30 minutes.
      medianDurationMs: 6.5 * MIN,
      costUsd: 6,
      costPerRunUsd: 0.75,
      costPerMergedUsd: 2,
      tokens: { input: 300, cachedInput: 30, output: 60 },
    });
    expect(Object.keys(fix.byProfile)).toEqual(['claude', 'codex']);
    expect(fix.byProfile.claude).toMatchObject({
      runs: 4,
      pullRequestsOpened: 3,
      pullRequestsMerged: 2,
      mergeRate: 2 / 3,
      medianToMergeMs: 60 * MIN,
      costUsd: 4,
      costPerRunUsd: 1,
      costPerMergedUsd: 2,
    });
    expect(fix.byProfile.codex).toMatchObject({
      runs: 4,
      byOutcome: { success: 1, failure: 2, blocked: 1 },
      pullRequestsOpened: 1,
      pullRequestsMerged: 1,
      mergeRate: 1,
      medianToMergeMs: 60 * MIN,
      costUsd: 2,
      costPerRunUsd: 0.5,
      costPerMergedUsd: 2,
    });
    const all = await loadFigures(store, window);
    expect(all.total).toMatchObject({ runs: 9, costUsd: 9, pullRequestsMerged: 3, costPerMergedUsd: 3 });
    const empty = await loadFigures(store, window, 'nothing');
    expect(empty.total).toMatchObject({
      runs: 0,
      mergeRate: null,
      costPerRunUsd: null,
      medianToMergeMs: null,
    });
  });

  it('measures time to merge from the item (its first attempt), not from the run that delivered', async () => {
    const first = await seed({
      automation: 'fix',
      profile: 'claude',
      status: 'failed',
      at: 0,
      runMin: 5,
      cost: 1,
    });
    const task = (await store.getRun(first))!.taskKey;
    // The retry starts 40 minutes later; its pull request merges 20 minutes after the retry.
    await seed({
      automation: 'fix',
      profile: 'claude',
      status: 'merged',
      at: 40,
      runMin: 10,
      cost: 1,
      pr: 20,
      retryOf: task,
      attempt: 2,
    });
    const window = { from: new Date(T0).toISOString(), to: new Date(T0 + 24 * 60 * MIN).toISOString() };
    const figures = await loadFigures(store, window, 'fix');
    expect(figures.total.medianToMergeMs).toBe(60 * MIN);
    expect(figures.byProfile.claude?.medianToMergeMs).toBe(60 * MIN);
    expect(figures.total).toMatchObject({ runs: 2, pullRequestsMerged: 1, costPerMergedUsd: 2 });
  });

  it('words figures for a person', () => {
    expect(percent(2 / 3)).toBe('67 %');
    expect(percent(null)).toBe('-');
    expect([
      duration(45_000),
      duration(12 * MIN),
      duration(200 * MIN),
      duration(3 * 24 * 60 * MIN),
      duration(null),
    ]).toEqual(['45s', '12m', '3h20m', '3d', '-']);
  });
});
