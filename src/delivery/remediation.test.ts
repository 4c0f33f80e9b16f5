/**
 * The remediator against the simulator (a pull request backed by a real bare repository) and real
 * git; the run itself is a stand-in for the executor that commits in the worktree it is given and
 * pushes through the remediation's own hook (the whole path with a fake agent CLI is in
 * test/e2e/remediation.test.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { ResolvedAutomation } from '../config/types.js';
import { systemClock } from '../core/clock.js';
import { taskOfRun } from '../core/task-fields.js';
import type { RunRecord } from '../core/types.js';
import type { RemediationRun } from '../engine/executor.js';
import { runInit } from '../engine/task.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { git, gitResult } from '../workspace/git.js';
import { ensureCheckout } from '../workspace/index.js';
import { branchName, worktreePath } from '../workspace/paths.js';
import { commitFiles, createOrigin, isolateGitForTests, type OriginRepo } from '../workspace/testing.js';
import { pushBranch } from './push.js';
import { createRemediator, REMEDIATION_MARKS, type Remediator } from './remediation.js';
import { ownHeadMark, type RemediationRequest } from './remediation-types.js';

const TOKEN = 'ghp_remediationTestToken0000000000000001';
const BRANCH = branchName('fix', 'github-issues', '1');
let dir: string;
let origin: OriginRepo;
let sim: Simulator;
let world: SimWorld;
let store: Store;
let automation: ResolvedAutomation;
let deliveryId: string;
let firstHead: string;

interface Call {
  remediation: RemediationRun;
  run: RunRecord;
  /** HEAD of the worktree when the run started. */
  head: string;
}
let calls: Call[];
/** What the stand-in run does: commit and push, or stop as if cut short (a kill, a stop). */
/** `unstarted`: the engine stopped before the run's turn came (execute answers undefined). */
let behaviour: 'commit' | 'cut' | 'unstarted';
let hold: Promise<void> | undefined;

beforeAll(() => isolateGitForTests());

function settingsText(budget: number): string {
  return `[settings]
workspace_dir = "${join(dir, 'workspaces')}"
state_db_path = "${join(dir, 'state.sqlite3')}"
[settings.github]
api_url = "${sim.url}"
[repositories.api]
remote = "file://${origin.url}"
[agents.defaults]
profile = "main"
[agents.profiles.main]
provider = "claude"
[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix it"
deliver = "pr"
remediation_budget = ${budget}
`;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-remediation-'));
  origin = await createOrigin();
  world = new SimWorld();
  world.addToken(TOKEN, 'octocat');
  world.addRepo('acme/api', { gitDir: origin.url });
  world.addIssue('acme/api', { title: 'Crash', author: 'octocat' });
  sim = await startSimulator({ world });
  store = await openStore(join(dir, 'state.sqlite3'));
  automation = loadSettingsFromText(settingsText(2), join(dir, 'settings.toml')).settings.automations[0]!;
  calls = [];
  behaviour = 'commit';
  hold = undefined;

  // The delivery: a run whose worktree committed, pushed its branch and opened pull request #2;
  // its worktree is gone (everything was pushed).
  const checkout = automation.repository.checkoutPath;
  await ensureCheckout({
    alias: 'api',
    remote: automation.repository.remote,
    path: checkout,
    timeoutMs: 60_000,
    log: silentLogger(),
  });
  const path = worktreePath(checkout, 'fix', 'github-issues', '1');
  await git(['worktree', 'add', '-q', '-b', BRANCH, path, 'origin/main'], { cwd: checkout });
  firstHead = await commitFiles(path, { 'fix.txt': 'first\n' });
  await pushBranch({ cwd: path, remote: automation.repository.remote, branch: BRANCH });
  await git(['worktree', 'remove', '--force', path], { cwd: checkout });
  await git(['branch', '-D', BRANCH], { cwd: checkout });
  world.addPullRequest('acme/api', {
    title: 'Fix',
    author: 'octocat',
    headRefName: BRANCH,
    baseRefName: 'main',
  });
  const run = await store.createRun({
    ...runInit(
      automation,
      taskOfRun({
        automationId: 'fix',
        taskKey: 'k1',
        repo: 'acme/api',
        taskType: 'github-issues',
        itemId: '1',
        itemKey: 'issue:1',
        itemTitle: 'Crash',
        itemUrl: 'https://github.com/acme/api/issues/1',
      } as RunRecord),
      'succeeded',
    ),
    sessionId: 'session-of-the-delivery',
  });
  await store.updateRun(run.id, { worktreePath: path, branch: BRANCH, worktreeKept: false });
  deliveryId = run.id;
  await store.beginPullRequest({
    runId: run.id,
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: BRANCH,
  });
  await store.updatePullRequest(run.id, { number: 2, state: 'open', headSha: firstHead, baseBranch: 'main' });
});

afterEach(async () => {
  await store.close();
  await sim.close();
  await origin.cleanup();
  await rm(dir, { recursive: true, force: true });
});

function remediator(over: ResolvedAutomation = automation): Remediator {
  return createRemediator({
    store,
    clock: systemClock,
    log: silentLogger(),
    github: createGitHubClient({ apiUrl: sim.url, tokens: staticTokenSource(TOKEN), maxAttempts: 1 }),
    automation: () => over,
    execute: async (auto, task, remediation, onRun) => {
      if (behaviour === 'unstarted') return undefined;
      const iso = () => new Date().toISOString();
      let run = await store.createRun({
        ...runInit(auto, task, 'running'),
        resumed: true,
        sessionId: remediation.sessionId,
        upstreamRunId: remediation.deliveryRunId,
        prompt: remediation.prompt,
      });
      run = await store.updateRun(run.id, {
        worktreePath: remediation.worktree.path,
        branch: remediation.worktree.branch,
      });
      onRun(run);
      const head = (await git(['rev-parse', 'HEAD'], { cwd: remediation.worktree.path })).trim();
      calls.push({ remediation, run, head });
      await hold;
      if (behaviour === 'cut') return store.updateRun(run.id, { status: 'cancelled', finishedAt: iso() });
      await commitFiles(remediation.worktree.path, { 'fix.txt': `remediation ${calls.length}\n` });
      const pushed = await remediation.push(run);
      return store.updateRun(run.id, {
        status: pushed.failed ? 'failed' : 'succeeded',
        reason: pushed.failed ?? null,
        finishedAt: iso(),
        sessionId: `${remediation.sessionId}+`,
      });
    },
  });
}

function request(key: string, text = 'Please rename parse() to parseLine().'): RemediationRequest {
  return {
    cause: 'review',
    key,
    budgeted: true,
    instructions: 'A reviewer asked for changes; address them and commit.',
    untrusted: [{ label: 'review by @alice on acme/api#2', text }],
  };
}

async function remoteHead(): Promise<string> {
  return (await git(['rev-parse', `refs/heads/${BRANCH}`], { cwd: origin.url })).trim();
}

async function record() {
  return (await store.getPullRequest(deliveryId))!;
}

describe('the remediator', () => {
  it('resumes the delivery session in a worktree recreated from the head, pushes fast-forward to the same branch, and records the head as its own', async () => {
    const r = remediator();
    expect(await r.remediate(await record(), request('review:10'))).toBe('started');
    await r.idle();

    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call!.remediation.sessionId).toBe('session-of-the-delivery');
    expect(call!.head).toBe(firstHead);
    expect(call!.remediation.worktree.branch).toBe(BRANCH);
    // The review text is fenced (a nonce per run), the instructions are not.
    const prompt = call!.remediation.prompt;
    expect(prompt.startsWith('A reviewer asked for changes')).toBe(true);
    expect(prompt).toMatch(
      /----- BEGIN UNTRUSTED DATA [0-9a-f]{16} -----\nPlease rename parse\(\) to parseLine\(\)\.\n----- END UNTRUSTED DATA [0-9a-f]{16} -----/,
    );
    const run = (await store.getRun(call!.run.id))!;
    expect(run).toMatchObject({
      status: 'succeeded',
      upstreamRunId: deliveryId,
      automationId: 'fix',
      taskKey: 'k1',
    });

    const head = await remoteHead();
    expect(head).not.toBe(firstHead);
    expect(
      (await gitResult(['merge-base', '--is-ancestor', firstHead, head], { cwd: origin.url })).exitCode,
    ).toBe(0);
    expect(world.pullRequest('acme/api', 2)!.headRefName).toBe(BRANCH);
    const after = await record();
    expect(after.headSha).toBe(head);
    expect(await store.getPullRequestMark(deliveryId, ownHeadMark(head))).toBeDefined();
    expect((await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.handled('review:10')))!.value).toBe(
      run.id,
    );
    expect(await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.action)).toBeUndefined();
    expect((await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.session))!.value).toBe(
      'session-of-the-delivery+',
    );
    // Still one delivery row, followed as before.
    expect((await store.listPullRequests()).map((p) => p.runId)).toEqual([deliveryId]);

    // The same key again: handled. A new one resumes the newest session, in the worktree again.
    expect(await r.remediate(after, request('review:10'))).toBe('handled');
    expect(await r.remediate(after, request('review:11'))).toBe('started');
    await r.idle();
    expect(calls[1]!.remediation.sessionId).toBe('session-of-the-delivery+');
    expect(calls[1]!.head).toBe(head);
  });

  it('one action in flight per pull request: a second request is busy', async () => {
    let release!: () => void;
    hold = new Promise((resolve) => {
      release = resolve;
    });
    const r = remediator();
    expect(await r.remediate(await record(), request('review:10'))).toBe('started');
    expect(await r.remediate(await record(), request('ci:abc'))).toBe('busy');
    expect(await r.resumeInFlight(await record())).toBe('running');
    release();
    await r.idle();
    expect(calls).toHaveLength(1);
    expect(await r.resumeInFlight(await record())).toBe('none');
  });

  it("budget: spent after remediation_budget rounds; curupira's own pushes give none back, a human push does", async () => {
    automation = loadSettingsFromText(settingsText(1), join(dir, 'settings.toml')).settings.automations[0]!;
    const r = remediator();
    expect(await r.remediate(await record(), request('review:10'))).toBe('started');
    await r.idle();
    expect(await r.remediate(await record(), request('review:11'))).toBe('exhausted');
    // A conflict resolution does not count against the budget.
    expect(
      await r.remediate(await record(), { ...request('conflict:x..y'), cause: 'conflict', budgeted: false }),
    ).toBe('started');
    await r.idle();
    expect(await r.remediate(await record(), request('review:11'))).toBe('exhausted');

    // A person pushes to the branch: the count starts again.
    const work = join(dir, 'human');
    await git(['clone', '-q', '--branch', BRANCH, origin.url, work], { cwd: dir });
    await commitFiles(work, { 'human.txt': 'by hand\n' });
    await git(['push', '-q', 'origin', BRANCH], { cwd: work });
    expect(await r.remediate(await record(), request('review:11'))).toBe('started');
    await r.idle();
    expect(calls).toHaveLength(3);
  });

  it("refused when the checkout's origin is not the pull request's repository", async () => {
    await git(['remote', 'set-url', 'origin', 'https://github.com/evil/fork.git'], {
      cwd: automation.repository.checkoutPath,
    });
    const r = remediator();
    expect(await r.remediate(await record(), request('review:10'))).toBe('refused');
    expect(calls).toEqual([]);
    expect(await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.action)).toBeUndefined();
  });

  it('crash-safe: an action whose run was cut short starts once more, then is given up', async () => {
    behaviour = 'cut';
    const first = remediator();
    expect(await first.remediate(await record(), request('review:10'))).toBe('started');
    await first.idle();
    // Cut short (not by a stop of this engine): handled, not in flight.
    expect(await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.handled('review:10'))).toBeDefined();

    // As a kill -9 leaves it: the action mark, its run unfinished.
    await store.deletePullRequestMark(deliveryId, REMEDIATION_MARKS.handled('review:11'));
    const orphan = await store.createRun({
      ...runInit(automation, taskOfRun((await store.getRun(deliveryId))!), 'running'),
      upstreamRunId: deliveryId,
      sessionId: 'session-of-the-delivery',
    });
    await store.setPullRequestMark(
      deliveryId,
      REMEDIATION_MARKS.action,
      JSON.stringify({
        key: 'review:11',
        runId: orphan.id,
        request: request('review:11'),
        sessionId: 'session-of-the-delivery',
        attempt: 1,
      }),
    );
    behaviour = 'commit';
    const restarted = remediator();
    expect(await restarted.resumeInFlight(await record())).toBe('resumed');
    await restarted.idle();
    expect(calls).toHaveLength(2);
    expect(await restarted.resumeInFlight(await record())).toBe('none');
    expect(await restarted.remediate(await record(), request('review:11'))).toBe('handled');
    expect(calls).toHaveLength(2);

    // Cut short on its second attempt too: given up, never a third run.
    await store.setPullRequestMark(
      deliveryId,
      REMEDIATION_MARKS.action,
      JSON.stringify({
        key: 'review:12',
        runId: orphan.id,
        request: request('review:12'),
        sessionId: 's',
        attempt: 2,
      }),
    );
    expect(await remediator().resumeInFlight(await record())).toBe('settled');
    expect(calls).toHaveLength(2);
    expect(await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.handled('review:12'))).toBeDefined();
  });

  it('never started (the engine stopped while it waited its turn): still in flight, then run on the next start as the same attempt', async () => {
    behaviour = 'unstarted';
    const first = remediator();
    expect(await first.remediate(await record(), request('review:10'))).toBe('started');
    await first.idle();
    expect(calls).toHaveLength(0);
    expect(
      await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.handled('review:10')),
    ).toBeUndefined();
    const left = JSON.parse((await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.action))!.value);
    expect(left).toMatchObject({ key: 'review:10', runId: null, attempt: 1, unstarted: true });

    // Even on a second attempt, a run that never started is not given up.
    await store.setPullRequestMark(
      deliveryId,
      REMEDIATION_MARKS.action,
      JSON.stringify({ ...left, attempt: 2 }),
    );
    behaviour = 'commit';
    const restarted = remediator();
    expect(await restarted.resumeInFlight(await record())).toBe('resumed');
    await restarted.idle();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.run.status).toBe('running');
    expect(await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.handled('review:10'))).toBeDefined();
    expect(await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.action)).toBeUndefined();
    expect(await restarted.remediate(await record(), request('review:10'))).toBe('handled');
  });

  it('a finished run whose push a kill cut off is pushed on the next look, not run again', async () => {
    // The run committed in the kept worktree and succeeded; the process died before the push.
    const path = (await store.getRun(deliveryId))!.worktreePath!;
    await git(['worktree', 'add', '-q', '-b', BRANCH, path, firstHead], {
      cwd: automation.repository.checkoutPath,
    });
    const committed = await commitFiles(path, { 'fix.txt': 'unpushed\n' });
    const done = await store.createRun({
      ...runInit(automation, taskOfRun((await store.getRun(deliveryId))!), 'succeeded'),
      upstreamRunId: deliveryId,
    });
    await store.updateRun(done.id, {
      worktreePath: path,
      branch: BRANCH,
      finishedAt: new Date().toISOString(),
    });
    await store.setPullRequestMark(
      deliveryId,
      REMEDIATION_MARKS.action,
      JSON.stringify({
        key: 'review:10',
        runId: done.id,
        request: request('review:10'),
        sessionId: 's',
        attempt: 1,
      }),
    );
    const r = remediator();
    expect(await r.resumeInFlight(await record())).toBe('settled');
    expect(calls).toEqual([]);
    expect(await remoteHead()).toBe(committed);
    expect((await record()).headSha).toBe(committed);
    expect(await store.getPullRequestMark(deliveryId, ownHeadMark(committed))).toBeDefined();
    expect(existsSync(path)).toBe(true);
  });

  it("a finished run killed after its push, before headSha moved: the next look takes the pushed head as the delivery's", async () => {
    // The run committed and pushed (its head marked as ours before the push), then the process
    // died; the restart's cleanup removed the worktree (nothing unpushed was left in it).
    const path = join(dir, 'pushed');
    await git(['worktree', 'add', '-q', '--detach', path, firstHead], {
      cwd: automation.repository.checkoutPath,
    });
    const pushed = await commitFiles(path, { 'fix.txt': 'pushed\n' });
    await git(['push', '-q', automation.repository.remote, `${pushed}:refs/heads/${BRANCH}`], { cwd: path });
    await git(['worktree', 'remove', '--force', path], { cwd: automation.repository.checkoutPath });
    await store.setPullRequestMark(deliveryId, ownHeadMark(pushed), 'pushed');
    const done = await store.createRun({
      ...runInit(automation, taskOfRun((await store.getRun(deliveryId))!), 'succeeded'),
      upstreamRunId: deliveryId,
    });
    await store.updateRun(done.id, {
      worktreePath: path,
      branch: BRANCH,
      finishedAt: new Date().toISOString(),
    });
    const action = (key: string) =>
      JSON.stringify({ key, runId: done.id, request: request(key), sessionId: 's', attempt: 1 });
    await store.setPullRequestMark(deliveryId, REMEDIATION_MARKS.action, action('review:10'));
    expect((await record()).headSha).toBe(firstHead);
    expect(await remediator().resumeInFlight(await record())).toBe('settled');
    expect(calls).toEqual([]);
    expect((await record()).headSha).toBe(pushed);

    // A head a person pushed (not marked as ours) is never taken for curupira's.
    const work = join(dir, 'human');
    await git(['clone', '-q', '--branch', BRANCH, origin.url, work], { cwd: dir });
    await commitFiles(work, { 'human.txt': 'by hand\n' });
    await git(['push', '-q', 'origin', BRANCH], { cwd: work });
    await store.setPullRequestMark(deliveryId, REMEDIATION_MARKS.action, action('review:11'));
    expect(await remediator().resumeInFlight(await record())).toBe('settled');
    expect((await record()).headSha).toBe(pushed);
  });
});
