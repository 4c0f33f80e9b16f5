import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AutomationConfig } from '../../config/types.js';
import { systemClock } from '../../core/clock.js';
import { createGitHubClient, type GitHubClient } from '../../github/client.js';
import { staticTokenSource } from '../../github/token.js';
import { silentLogger } from '../../log.js';
import type { NotificationEvent } from '../../notify/index.js';
import { commitToBranch, forcedUpdates, setLazyMergeability } from '../../simulator/merging.js';
import { type Simulator, startSimulator } from '../../simulator/server.js';
import { SimWorld } from '../../simulator/world.js';
import { openStore } from '../../store/index.js';
import type { PullRequestRecord, Store } from '../../store/types.js';
import { git } from '../../workspace/git.js';
import { createOrigin, isolateGitForTests, type OriginRepo } from '../../workspace/testing.js';
import { createFollower } from '../follow.js';
import { ownHeadMark, type RemediationRequest, type RemediationResult } from '../remediation-types.js';
import { behindStep, ownUpdateStep } from './behind.js';
import { conflictsStep } from './conflicts.js';
import { mergeStep } from './merge.js';
import type { Readiness } from './readiness.js';

const TOKEN = 'ghp_mergingStepsToken0000000000000000001';
const BRANCH = 'curupira/fix/x';
let dir: string;
let origin: OriginRepo;
let gitDir: string;
let sim: Simulator;
let world: SimWorld;
let store: Store;
let runId: string;
let notified: NotificationEvent[];
let settings: Record<string, unknown>;
let readiness: Readiness;

const GREEN_APPROVED: Readiness = {
  checks: 'success',
  failing: [],
  pending: [],
  review: 'approved',
  approvers: ['alice'],
  requesters: [],
};

/** A remediator keeping GitHub-side promises: one run per key; `finish` ends it. */
class FakeRemediator {
  readonly requests: RemediationRequest[] = [];
  readonly started: string[] = [];
  readonly #inFlight = new Set<string>();
  readonly #done = new Set<string>();

  remediate = async (_record: PullRequestRecord, request: RemediationRequest): Promise<RemediationResult> => {
    this.requests.push(request);
    if (this.#done.has(request.key)) return 'handled';
    if (!this.#inFlight.has(request.key)) {
      this.#inFlight.add(request.key);
      this.started.push(request.key);
    }
    return 'started';
  };

  finish(key: string): void {
    this.#inFlight.delete(key);
    this.#done.add(key);
  }
}
let remediator: FakeRemediator;

beforeAll(() => isolateGitForTests());

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-merging-steps-'));
  origin = await createOrigin({ files: { 'README.md': '# sample\n', 'app.txt': 'one\ntwo\nthree\n' } });
  gitDir = origin.url;
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addRepo('acme/api', { gitDir });
  world.addIssue('acme/api', { title: 'Crash' });
  sim = await startSimulator({ world });
  store = await openStore(join(dir, 'state.sqlite3'));
  notified = [];
  settings = {};
  readiness = GREEN_APPROVED;
  remediator = new FakeRemediator();
  runId = await delivered();
});

afterEach(async () => {
  await store.close();
  await sim.close();
  await origin.cleanup();
  await rm(dir, { recursive: true, force: true });
});

/** Issue #1's run delivered pull request #2 from BRANCH (one commit changing app.txt and adding src/fix.ts). */
async function delivered(options: { draft?: boolean } = {}): Promise<string> {
  const head = commitToBranch(
    gitDir,
    BRANCH,
    { 'app.txt': 'one\nTWO\nthree\n', 'src/fix.ts': 'export {};\n' },
    { from: 'main', message: 'fix the crash' },
  );
  const run = await store.createRun({
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: '1',
    itemKey: 'issue:1',
    itemTitle: 'Crash',
    itemUrl: 'https://github.com/acme/api/issues/1',
    status: 'succeeded',
  });
  const pr = world.addPullRequest('acme/api', {
    title: 'Fix the crash',
    body: 'Closes #1',
    headRefName: BRANCH,
    baseRefName: 'main',
    headRefOid: head,
    author: 'curupira-bot',
    closingIssues: [1],
    draft: options.draft ?? false,
  });
  await store.beginPullRequest({
    runId: run.id,
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: BRANCH,
  });
  await store.updatePullRequest(run.id, {
    number: pr.number,
    state: 'open',
    headSha: head,
    baseBranch: 'main',
  });
  return run.id;
}

interface Call {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
}
let calls: Call[];
beforeEach(() => {
  calls = [];
});

/** The simulator's client, recording each REST call with its body. */
function github(): GitHubClient {
  const client = createGitHubClient({ apiUrl: sim.url, tokens: staticTokenSource(TOKEN), maxAttempts: 1 });
  const rest: GitHubClient['rest'] = (method, path, body) => {
    calls.push({ method, path, body });
    return client.rest(method, path, body);
  };
  return { ...client, rest };
}

function follower(over: Store = store) {
  const read = async () => readiness;
  return createFollower({
    store: over,
    clock: systemClock,
    log: silentLogger(),
    github: github(),
    intervalSeconds: () => 0,
    paceMs: 0,
    notify: (event) => notified.push(event),
    config: () => ({ repo: 'acme/api', ...settings }) as unknown as AutomationConfig,
    remediate: remediator.remediate,
    steps: [ownUpdateStep(), conflictsStep(), behindStep({ checks: read }), mergeStep({ readiness: read })],
  });
}

/** The store of a process killed (the sweep throws) when it sets a mark whose key starts with `prefix`. */
function dyingAt(prefix: string): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'setPullRequestMark')
        return (runId: string, markKey: string, value: string) =>
          markKey.startsWith(prefix)
            ? Promise.reject(new Error('killed'))
            : target.setPullRequestMark(runId, markKey, value);
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function tip(branch: string): Promise<string> {
  return (await git(['rev-parse', `refs/heads/${branch}`], { cwd: gitDir })).trim();
}

async function record(): Promise<PullRequestRecord> {
  return (await store.getPullRequest(runId))!;
}

function writes(path: RegExp): Call[] {
  return calls.filter((r) => r.method !== 'GET' && path.test(r.path));
}

/** The base changes the line the branch changed: a conflict on app.txt. */
function conflict(content = 'one\nzwei\nthree\n'): string {
  return commitToBranch(gitDir, 'main', { 'app.txt': content }, { message: 'conflicting change' });
}

describe('conflicts', () => {
  it('resolve_conflicts off: one notice per (head, base) pair, needs a person, notified once per pair', async () => {
    const base = conflict();
    const head = await tip(BRANCH);
    const sweeper = follower();
    await sweeper.sweep();
    await sweeper.sweep();
    expect(await record()).toMatchObject({ state: 'open', gate: 'needs_human' });
    expect((await record()).gateDetail).toContain('resolve_conflicts is off');
    let comments = world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(`<!-- curupira:conflict run=${runId} pair=${head}..${base} -->`);
    expect(comments[0]!.body).toContain('A person resolves them');
    expect(notified.map((e) => [e.event, e.id])).toEqual([
      ['needs_human', `pr:${runId}:conflict:${head}..${base}`],
    ]);
    expect(remediator.requests).toEqual([]);
    // The base moves again and still conflicts: a new pair, a new notice.
    const base2 = conflict('one\ndos\nthree\n');
    await sweeper.sweep();
    comments = world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(2);
    expect(comments[1]!.body).toContain(`pair=${head}..${base2}`);
    expect(notified).toHaveLength(2);
  });

  it('resolve_conflicts on: one remediation per sha pair, then needs a person when that run did not resolve it', async () => {
    settings = { resolve_conflicts: true };
    const base = conflict();
    const head = await tip(BRANCH);
    const sweeper = follower();
    await sweeper.sweep();
    expect(remediator.started).toEqual([`conflict:${head}..${base}`]);
    const request = remediator.requests[0]!;
    expect(request).toMatchObject({ cause: 'conflict', budgeted: false });
    expect(request.instructions).toContain('git merge origin/main');
    expect(request.instructions).toContain('Never rebase');
    expect(request.instructions).toContain('never force-push');
    expect(request.untrusted).toEqual([{ label: 'files changed on both sides', text: 'app.txt' }]);
    expect(await record()).toMatchObject({ gate: 'conflicted' });
    expect((await record()).gateDetail).toMatch(/^resolving: a remediation run merges main/);
    // Still in flight: asked again, nothing new starts.
    await sweeper.sweep();
    expect(remediator.started).toHaveLength(1);
    expect(notified).toEqual([]);
    // The run ended without a push: same pair, still conflicted → a person.
    remediator.finish(`conflict:${head}..${base}`);
    await sweeper.sweep();
    await sweeper.sweep();
    expect(await record()).toMatchObject({ gate: 'needs_human' });
    expect(remediator.started).toHaveLength(1);
    expect(notified.map((e) => e.event)).toEqual(['needs_human']);
    const comments = world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('A person resolves them');
  });

  it('a new pair is progress: a push that still conflicts gets its own run; one that resolves ends the gate', async () => {
    settings = { resolve_conflicts: true };
    const base = conflict();
    const head = await tip(BRANCH);
    const sweeper = follower();
    await sweeper.sweep();
    remediator.finish(`conflict:${head}..${base}`);
    // The agent pushed, but app.txt still conflicts.
    const head2 = commitToBranch(gitDir, BRANCH, { 'app.txt': 'one\nTWO!\nthree\n' });
    await sweeper.sweep();
    expect(remediator.started).toEqual([`conflict:${head}..${base}`, `conflict:${head2}..${base}`]);
    remediator.finish(`conflict:${head2}..${base}`);
    // Resolved: the agent merges the base, taking its side of app.txt.
    commitToBranch(gitDir, BRANCH, { 'app.txt': 'one\nzwei\nthree\n' }, { merge: 'main' });
    await sweeper.sweep();
    expect(await record()).toMatchObject({ gate: 'ready' });
    expect(notified).toEqual([]);
    expect(forcedUpdates(gitDir)).toEqual([]);
  });

  it('mergeability not computed yet (null): nothing said; the next sweep sees the conflict', async () => {
    setLazyMergeability(world, true);
    conflict();
    const sweeper = follower();
    await sweeper.sweep();
    expect(world.item('acme/api', 2)!.comments).toEqual([]);
    expect((await record()).gate).not.toBe('needs_human');
    await sweeper.sweep();
    expect(world.item('acme/api', 2)!.comments).toHaveLength(1);
    expect((await record()).gate).toBe('needs_human');
  });
});

describe('a moving base', () => {
  it('behind, green, update_branch: GitHub merges the base into the branch; curupira marks that head its own', async () => {
    settings = { update_branch: true };
    const head = await tip(BRANCH);
    const base = commitToBranch(gitDir, 'main', { 'other.txt': 'elsewhere\n' });
    const sweeper = follower();
    await sweeper.sweep();
    const updated = await tip(BRANCH);
    expect(updated).not.toBe(head);
    expect((await git(['show', '-s', '--format=%P', updated], { cwd: gitDir })).trim().split(' ')).toEqual([
      head,
      base,
    ]);
    expect(writes(/update-branch$/)).toHaveLength(1);
    expect(await store.getPullRequestMark(runId, ownHeadMark(updated))).toMatchObject({
      value: 'update-branch',
    });
    expect((await record()).gate).toBe('behind');
    // Up to date now: not asked again, and ready.
    await sweeper.sweep();
    expect(writes(/update-branch$/)).toHaveLength(1);
    expect((await record()).gate).toBe('ready');
    expect(forcedUpdates(gitDir)).toEqual([]);
  });

  it('behind without update_branch, or with checks not green: gate behind, the branch stays', async () => {
    const head = await tip(BRANCH);
    commitToBranch(gitDir, 'main', { 'other.txt': 'elsewhere\n' });
    await follower().sweep();
    expect(await record()).toMatchObject({
      gate: 'behind',
      gateDetail: 'behind main by 1 commit (update_branch is off)',
    });
    settings = { update_branch: true };
    readiness = { ...GREEN_APPROVED, checks: 'pending', pending: ['build'] };
    await follower().sweep();
    expect((await record()).gateDetail).toContain(
      'updating once checks are green (waiting for checks: build)',
    );
    expect(await tip(BRANCH)).toBe(head);
    expect(writes(/update-branch$/)).toEqual([]);
  });

  it('someone else pushed after the update was asked: not marked as curupira’s own', async () => {
    settings = { update_branch: true };
    commitToBranch(gitDir, 'main', { 'other.txt': 'elsewhere\n' });
    // GitHub will not have updated yet: the head moves by a person's push instead.
    const head = await tip(BRANCH);
    await store.setPullRequestMark(runId, 'update-branch:pending', JSON.stringify({ head, base: 'x' }));
    const pushed = commitToBranch(gitDir, BRANCH, { 'mine.txt': 'a person\n' });
    await follower().sweep();
    expect(await store.getPullRequestMark(runId, ownHeadMark(pushed))).toBeUndefined();
    // The new pair is updated in turn, and that update is curupira's.
    const updated = await tip(BRANCH);
    expect((await git(['show', '-s', '--format=%P', updated], { cwd: gitDir })).trim()).toMatch(
      new RegExp(`^${pushed} `),
    );
    expect(await store.getPullRequestMark(runId, ownHeadMark(updated))).toBeDefined();
  });
});

describe('merging', () => {
  it('merge = auto, approved and green: merged with the head sha (squash), then the delivery ends merged and the issue closes', async () => {
    settings = { merge: 'auto' };
    const head = await tip(BRANCH);
    const sweeper = follower();
    await sweeper.sweep();
    const merges = writes(/\/pulls\/2\/merge$/);
    expect(merges).toHaveLength(1);
    expect(merges[0]!.body).toEqual({ merge_method: 'squash', sha: head });
    expect((await git(['show', 'main:app.txt'], { cwd: gitDir })).trim()).toBe('one\nTWO\nthree');
    expect(
      (await git(['show', '-s', '--format=%P', 'main'], { cwd: gitDir })).trim().split(' '),
    ).toHaveLength(1);
    await sweeper.sweep();
    expect((await record()).state).toBe('merged');
    expect((await store.getRun(runId))!.status).toBe('merged');
    expect(world.issue('acme/api', 1)).toMatchObject({ state: 'CLOSED' });
    expect(forcedUpdates(gitDir)).toEqual([]);
  });

  it('merge_method = merge makes a merge commit', async () => {
    settings = { merge: 'auto', merge_method: 'merge' };
    const head = await tip(BRANCH);
    await follower().sweep();
    expect((await git(['show', '-s', '--format=%P', 'main'], { cwd: gitDir })).trim().split(' ')[1]).toBe(
      head,
    );
  });

  it('human_merge_paths: a matching file keeps curupira from merging', async () => {
    settings = { merge: 'auto', human_merge_paths: ['*.sql', 'src/'] };
    await follower().sweep();
    expect(writes(/\/merge$/)).toEqual([]);
    expect(await record()).toMatchObject({
      gate: 'ready',
      gateDetail: 'a person merges: touches src/fix.ts (human_merge_paths src/)',
    });
  });

  it('not approved, changes requested, failing checks, merge off: no merge, and the gate says why', async () => {
    settings = { merge: 'auto' };
    const cases: [Partial<Readiness>, string, RegExp][] = [
      [{ review: 'review_required', approvers: [] }, 'awaiting_review', /^no approval yet/],
      [{ review: 'changes_requested', requesters: ['bob'] }, 'changes_requested', /bob/],
      [{ checks: 'failure', failing: ['test'] }, 'ci_failing', /failing: test/],
      [{ checks: 'pending', pending: ['build'] }, 'open', /waiting for checks: build/],
    ];
    for (const [over, gate, detail] of cases) {
      readiness = { ...GREEN_APPROVED, ...over };
      await follower().sweep();
      expect(await record()).toMatchObject({ gate });
      expect((await record()).gateDetail).toMatch(detail);
    }
    settings = { merge: 'off' };
    readiness = GREEN_APPROVED;
    await follower().sweep();
    expect((await record()).gateDetail).toContain('a person merges (merge is off)');
    expect(writes(/\/merge$/)).toEqual([]);
  });

  it('a draft is never merged', async () => {
    settings = { merge: 'auto' };
    world.pullRequest('acme/api', 2)!.isDraft = true;
    await follower().sweep();
    expect(writes(/\/merge$/)).toEqual([]);
    expect((await record()).gateDetail).toContain('curupira does not merge a draft');
  });

  it('a push between the look and the merge: GitHub refuses (409), nothing merged, asked once for that head', async () => {
    settings = { merge: 'auto' };
    // The head moves after the pull request was read: the follower's sha is stale.
    const stale = await tip(BRANCH);
    const steps = [
      async () => {
        commitToBranch(gitDir, BRANCH, { 'late.txt': 'late\n' });
        return undefined;
      },
    ];
    const base = await tip('main');
    const f = createFollower({
      store,
      clock: systemClock,
      log: silentLogger(),
      github: github(),
      intervalSeconds: () => 0,
      config: () => ({ merge: 'auto' }) as unknown as AutomationConfig,
      steps: [...steps, mergeStep({ readiness: async () => GREEN_APPROVED })],
    });
    await f.sweep();
    expect(writes(/\/merge$/)[0]!.body).toMatchObject({ sha: stale });
    expect(await tip('main')).toBe(base);
    expect((await record()).gateDetail).toContain('GitHub refused the merge');
  });
});

describe('killed half-way (kill -9 between a write and its mark)', () => {
  it('after the conflict notice was queued: the next process sends one comment and one notification id', async () => {
    conflict();
    await follower(dyingAt('conflict-notice:')).sweep();
    await follower().sweep();
    await follower().sweep();
    expect(world.item('acme/api', 2)!.comments).toHaveLength(1);
    expect(new Set(notified.map((e) => e.id)).size).toBe(1);
    expect((await record()).gate).toBe('needs_human');
  });

  it('after GitHub was asked to update the branch: the next process knows the update as its own and does not ask again', async () => {
    settings = { update_branch: true };
    const head = await tip(BRANCH);
    commitToBranch(gitDir, 'main', { 'other.txt': 'elsewhere\n' });
    await follower(dyingAt('update-branch:')).sweep();
    // The pending mark could not be set: nothing was asked.
    expect(writes(/update-branch$/)).toEqual([]);
    expect(await tip(BRANCH)).toBe(head);
    // Killed right after the request (before the requested mark and the own head).
    await follower(dyingAt('update-branch:' + head)).sweep();
    expect(writes(/update-branch$/)).toHaveLength(1);
    const updated = await tip(BRANCH);
    expect(updated).not.toBe(head);
    expect(await store.getPullRequestMark(runId, ownHeadMark(updated))).toBeUndefined();
    await follower().sweep();
    expect(await store.getPullRequestMark(runId, ownHeadMark(updated))).toMatchObject({
      value: 'update-branch',
    });
    expect(writes(/update-branch$/)).toHaveLength(1);
    expect(forcedUpdates(gitDir)).toEqual([]);
  });

  it('after the merge request: the next sweep sees it merged; nothing asked twice', async () => {
    settings = { merge: 'auto' };
    await follower(dyingAt('merge:')).sweep();
    expect(writes(/\/merge$/)).toHaveLength(1);
    await follower().sweep();
    expect((await record()).state).toBe('merged');
    expect(writes(/\/merge$/)).toHaveLength(1);
  });
});
