import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../core/clock.js';
import type { RunRecord } from '../core/types.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import type { NotificationEvent } from '../notify/index.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { openStore } from '../store/index.js';
import type { PullRequestRecord, Store } from '../store/types.js';
import { CHOICE_LABELS, createFollower, type FollowStep } from './follow.js';

const TOKEN = 'ghp_followTestToken000000000000000000001';
let dir: string;
let sim: Simulator;
let world: SimWorld;
let store: Store;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-follow-'));
  world = new SimWorld();
  world.addToken(TOKEN, 'octocat');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Crash' });
  sim = await startSimulator({ world });
  store = await openStore(join(dir, 'state.sqlite3'));
});

afterEach(async () => {
  await store.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * A succeeded run of issue #1 whose delivery opened a pull request (#2 for the first; not linked
 * to the issue); `other` delivers another one for it, on another task key and branch.
 */
async function delivered(other?: { key: string; branch: string; sha: string }): Promise<string> {
  const { key, branch, sha } = other ?? { key: 'k1', branch: 'curupira/fix/x', sha: 'a'.repeat(40) };
  const run = await store.createRun({
    automationId: 'fix',
    taskKey: key,
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: '1',
    itemKey: 'issue:1',
    itemTitle: 'Crash',
    itemUrl: 'https://github.com/acme/api/issues/1',
    status: 'succeeded',
  });
  const pr = world.addPullRequest('acme/api', { title: 'Fix', headRefName: branch, author: 'octocat' });
  await store.beginPullRequest({
    runId: run.id,
    automationId: 'fix',
    taskKey: key,
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: branch,
  });
  await store.updatePullRequest(run.id, { number: pr.number, state: 'open', headSha: sha });
  return run.id;
}

let notified: NotificationEvent[];
let redeveloped: PullRequestRecord[];
let removed: RunRecord[];
beforeEach(() => {
  notified = [];
  redeveloped = [];
  removed = [];
});

function follower(over: Store = store, steps?: FollowStep[]) {
  const tokens = staticTokenSource(TOKEN);
  return createFollower({
    store: over,
    clock: systemClock,
    log: silentLogger(),
    github: createGitHubClient({ apiUrl: sim.url, tokens, maxAttempts: 1 }),
    intervalSeconds: () => 0,
    paceMs: 0,
    stateLabels: () => ['agent:implementing', 'agent:failed'],
    notify: (event) => notified.push(event),
    redevelop: (record) => redeveloped.push(record),
    removeWorktree: async (run) => {
      removed.push(run);
    },
    ...(steps ? { steps } : {}),
  });
}

/** Closed unmerged, swept once: the delivery waits for a person. */
async function waitingForAPerson(): Promise<string> {
  const runId = await delivered();
  world.closePullRequest('acme/api', 2);
  await follower().sweep();
  expect((await store.getPullRequest(runId))!.state).toBe('needs_human');
  return runId;
}

describe('following delivered pull requests', () => {
  it('open: nothing changes and nothing is written', async () => {
    const runId = await delivered();
    expect(await follower().sweep()).toEqual({ checked: 1, merged: 0, closed: 0, decided: 0 });
    expect((await store.getPullRequest(runId))!.state).toBe('open');
    expect(sim.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it("GitHub's rate limit spent: one warning, and no pull request is read again until its reset", async () => {
    await delivered();
    await delivered({ key: 'k2', branch: 'curupira/fix/y', sha: 'b'.repeat(40) });
    sim.rateLimits.core.setUsed('octocat', 5000);
    const warnings: { message: string; fields: Record<string, unknown> }[] = [];
    const log = {
      ...silentLogger(),
      warn: (fields: Record<string, unknown>, message: string) => warnings.push({ fields, message }),
    };
    const tokens = staticTokenSource(TOKEN);
    const sweeps = createFollower({
      store,
      clock: systemClock,
      log: log as ReturnType<typeof silentLogger>,
      github: createGitHubClient({ apiUrl: sim.url, tokens, maxAttempts: 1, maxRateLimitWaitMs: 0 }),
      intervalSeconds: () => 0,
      paceMs: 0,
    });
    await sweeps.sweep();
    const spent = sim.requests.length;
    await sweeps.sweep();
    await sweeps.sweep();
    // The first read met the spent budget; the other pull request and the later sweeps read nothing.
    expect(spent).toBe(1);
    expect(sim.requests).toHaveLength(1);
    expect(warnings.map((w) => w.message)).toEqual([
      "GitHub's rate limit is spent: following pull requests waits for its reset",
    ]);
    expect(Date.parse(String(warnings[0]!.fields.until))).toBeGreaterThan(Date.now());
  });

  it('open: the steps run in order, the first gate wins, and a step that acted ends the look', async () => {
    const runId = await delivered();
    const seen: string[] = [];
    const step =
      (name: string, outcome: Awaited<ReturnType<FollowStep>>): FollowStep =>
      async (context) => {
        seen.push(`${name}:${context.pr.number}`);
        return outcome;
      };
    await follower(store, [
      step('conflicts', undefined),
      step('ci', { gate: 'ci_failing', detail: 'test failed' }),
      step('reviews', { gate: 'changes_requested', acted: true }),
      step('merge', { gate: 'ready' }),
    ]).sweep();
    expect(seen).toEqual(['conflicts:2', 'ci:2', 'reviews:2']);
    const record = (await store.getPullRequest(runId))!;
    expect(record).toMatchObject({ state: 'open', gate: 'ci_failing', gateDetail: 'test failed' });
    const since = record.gateSince;
    await follower(store, [step('none', undefined)]).sweep();
    const next = (await store.getPullRequest(runId))!;
    expect(next).toMatchObject({ gate: 'open', gateDetail: null });
    expect(next.gateSince).not.toBeNull();
    expect(since).not.toBeNull();
  });

  it('open: a later step says more than an earlier `ready` (approved, yet behind)', async () => {
    const runId = await delivered();
    const gate =
      (outcome: Awaited<ReturnType<FollowStep>>): FollowStep =>
      async () =>
        outcome;
    await follower(store, [
      gate({ gate: 'ready', detail: 'approved by @alice' }),
      gate({ gate: 'behind', detail: 'behind main by 1 commit' }),
      gate({ gate: 'ready', detail: 'approved; a person merges' }),
    ]).sweep();
    expect(await store.getPullRequest(runId)).toMatchObject({
      gate: 'behind',
      gateDetail: 'behind main by 1 commit',
    });
    await follower(store, [gate({ gate: 'ready', detail: 'approved by @alice' }), gate(undefined)]).sweep();
    expect(await store.getPullRequest(runId)).toMatchObject({
      gate: 'ready',
      gateDetail: 'approved by @alice',
    });
  });

  it('merged: the delivery is merged, the run says so, and the issue GitHub left open is closed as completed', async () => {
    const runId = await delivered();
    world.mergePullRequest('acme/api', 2);
    expect(world.issue('acme/api', 1)!.state).toBe('OPEN');
    expect((await follower().sweep()).merged).toBe(1);
    expect((await store.getPullRequest(runId))!.state).toBe('merged');
    expect((await store.getRun(runId))!.reason).toMatch(/^merged: pull request #2 merged at /);
    expect(world.issue('acme/api', 1)).toMatchObject({ state: 'CLOSED', stateReason: 'COMPLETED' });
  });

  it('merged: the run ends as merged, state labels come off, the worktree goes, pr_merged is notified once', async () => {
    const runId = await delivered();
    world.addLabels('acme/api', 1, ['agent:implementing', 'agent:failed', 'bug']);
    world.mergePullRequest('acme/api', 2);
    const sweeper = follower();
    await sweeper.sweep();
    await sweeper.sweep();
    const run = (await store.getRun(runId))!;
    expect(run.status).toBe('merged');
    expect(world.issue('acme/api', 1)!.labels).toEqual(['bug']);
    expect(removed.map((r) => r.id)).toEqual([runId]);
    expect(notified).toHaveLength(1);
    expect(notified[0]).toMatchObject({
      event: 'pr_merged',
      id: `pr:${runId}:merged`,
      automation: 'fix',
      run: { id: runId, status: 'merged' },
      details: { pull_request: 2 },
    });
    expect(notified[0]!.summary).toContain('acme/api#2 merged');
  });

  it('merged across repositories: pr_merged once, after the last, naming every pull request', async () => {
    const runId = await delivered();
    world.addRepo('acme/web');
    const web = world.addPullRequest('acme/web', {
      title: 'Fix',
      headRefName: 'curupira/fix/x',
      author: 'octocat',
    });
    const webKey = `${runId}~web`;
    await store.beginPullRequest({
      runId: webKey,
      automationId: 'fix',
      taskKey: 'k1',
      repo: 'acme/web',
      delivery: 'pr',
      headBranch: 'curupira/fix/x',
    });
    const webUrl = `https://github.com/acme/web/pull/${web.number}`;
    await store.updatePullRequest(webKey, { number: web.number, url: webUrl, state: 'open' });
    await store.updatePullRequest(runId, { url: 'https://github.com/acme/api/pull/2' });
    world.mergePullRequest('acme/web', web.number);
    await follower().sweep();
    expect(notified).toEqual([]);
    world.mergePullRequest('acme/api', 2);
    await follower().sweep();
    await follower().sweep();
    expect(notified).toHaveLength(1);
    expect(notified[0]!.summary).toBe(`fix: pull requests acme/web#${web.number}, acme/api#2 merged`);
    expect(notified[0]!.details).toMatchObject({
      pull_request: 2,
      pull_requests: `acme/web#${web.number} ${webUrl}, acme/api#2 https://github.com/acme/api/pull/2`,
    });
  });

  it('closed unmerged: needs a person, with one comment however often the sweep runs', async () => {
    const runId = await delivered();
    world.closePullRequest('acme/api', 2);
    const sweeper = follower();
    expect((await sweeper.sweep()).closed).toBe(1);
    await sweeper.sweep();
    await follower().sweep();
    expect((await store.getPullRequest(runId))!.state).toBe('needs_human');
    const comments = world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('closed without being merged');
    expect(comments[0]!.body).toContain(`<!-- curupira:closed run=${runId} -->`);
    expect(world.issue('acme/api', 1)!.state).toBe('OPEN');
    for (const label of Object.values(CHOICE_LABELS)) expect(comments[0]!.body).toContain(`\`${label}\``);
    expect(notified.map((e) => [e.event, e.id])).toEqual([['needs_human', `pr:${runId}:closed`]]);
    expect((await store.getRun(runId))!.reason).toMatch(
      /^needs human: pull request #2 was closed without merging/,
    );
  });

  it('a sweep cut short before its last step does it again: one comment, one notification id', async () => {
    const runId = await delivered();
    world.closePullRequest('acme/api', 2);
    // The process "dies" as it records the new state: everything before it was done or queued.
    const dying = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'updatePullRequest') return () => Promise.reject(new Error('killed'));
        const value = Reflect.get(target, key, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    expect((await follower(dying).sweep()).closed).toBe(0);
    expect((await store.getPullRequest(runId))!.state).toBe('open');
    expect((await follower().sweep()).closed).toBe(1);
    expect((await store.getPullRequest(runId))!.state).toBe('needs_human');
    expect(world.item('acme/api', 2)!.comments).toHaveLength(1);
    // Notified twice with the same id: the notifier delivers an id once per target.
    expect(new Set(notified.map((e) => e.id))).toEqual(new Set([`pr:${runId}:closed`]));
  });

  it('needs a person: no label, nothing decided and nothing written', async () => {
    const runId = await waitingForAPerson();
    const writes = sim.requests.filter((r) => r.method !== 'GET').length;
    expect((await follower().sweep()).decided).toBe(0);
    expect((await store.getPullRequest(runId))!.state).toBe('needs_human');
    expect(sim.requests.filter((r) => r.method !== 'GET')).toHaveLength(writes);
    expect(redeveloped).toEqual([]);
  });

  it('agent:redevelop on the pull request: redeveloped, the label comes off, the item is offered again', async () => {
    const runId = await waitingForAPerson();
    world.addLabels('acme/api', 2, [CHOICE_LABELS.redevelop], 'octocat');
    expect((await follower().sweep()).decided).toBe(1);
    const record = (await store.getPullRequest(runId))!;
    expect(record).toMatchObject({ state: 'redeveloped' });
    expect(record.detail).toContain('label agent:redevelop on #2');
    expect(redeveloped.map((r) => r.runId)).toEqual([runId]);
    expect(world.item('acme/api', 2)!.labels).toEqual([]);
    expect(removed.map((r) => r.id)).toEqual([runId]);
    // Over: not followed any more.
    expect((await follower().sweep()).checked).toBe(0);
  });

  it.each([
    ['abandon', 'abandoned'],
    ['landed', 'landed'],
  ] as const)('agent:%s on the issue: the delivery is over for good (%s)', async (choice, state) => {
    const runId = await waitingForAPerson();
    world.addLabels('acme/api', 1, [CHOICE_LABELS[choice]], 'octocat');
    expect((await follower().sweep()).decided).toBe(1);
    expect((await store.getPullRequest(runId))!.state).toBe(state);
    expect(world.issue('acme/api', 1)!.labels).toEqual([]);
    expect(redeveloped).toEqual([]);
    expect(removed.map((r) => r.id)).toEqual([runId]);
    expect((await store.getRun(runId))!.status).toBe('succeeded');
    expect((await follower().sweep()).checked).toBe(0);
  });

  it('reopened while waiting for a person: followed as open again', async () => {
    const runId = await waitingForAPerson();
    world.updateIssue('acme/api', 2, { state: 'OPEN' });
    await follower().sweep();
    expect((await store.getPullRequest(runId))!).toMatchObject({ state: 'open', detail: 'reopened' });
  });
});
