/**
 * Issue 25, items 1, 2, 6, 7 and 11, end to end (the simulator, real git, the fake agents):
 *
 * - `worktree_from = "head"`: a pull-request automation's agent works on the pull request's own
 *   code (fetched as `pull/<n>/head`, a fork's too), the run records base and head commits, and
 *   `deliver = "head"` pushes back to a same-repository head branch, never to a fork's.
 * - `once = "head"`: an unchanged pull request is not run again after a restart; a new commit is.
 * - `pr_base_branch`: the worktree starts from that branch, so the pull request carries only the
 *   agent's commits.
 * - Delivered pull requests: a readable branch name, a body with the change and the agent's final
 *   message, and a run summary that names the pull request.
 * - `checkout = "main"` with `deliver` is a validation error that says why.
 */

import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { summarizeRuns } from '../../src/cli/run.js';
import { loadSettings } from '../../src/config/load.js';
import { git } from '../../src/workspace/git.js';
import { commitFiles } from '../../src/workspace/testing.js';
import { createHarness, type Harness, issueAutomation, onlyRun, runBuiltCli } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** Commits `files` on top of `from` in a clone of origin and pushes that commit to `ref`; returns it. */
async function pushCommit(
  harness: Harness,
  from: string,
  ref: string,
  files: Record<string, string>,
  message = 'contributor work',
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'curupira-contrib-'));
  try {
    await git(['clone', '-q', harness.origin.url, dir], { cwd: tmpdir() });
    await git(['checkout', '-q', '--detach', from], { cwd: dir });
    const sha = await commitFiles(dir, files, message);
    await git(['push', '-q', 'origin', `${sha}:${ref}`], { cwd: dir });
    return sha;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function reviewAutomation(
  extra: string,
  prompt = 'Review #${pull_request_number} at ${pull_request_head_sha} [[fake:commit]]',
): string {
  return `[automations.review]
trigger_type = "github-pull-requests"
repository = "api"
repo = "acme/api"
prompt = ${JSON.stringify(prompt)}
${extra}
`;
}

async function mainSha(harness: Harness): Promise<string> {
  return (await git(['rev-parse', 'refs/heads/main'], { cwd: harness.origin.url })).trim();
}

async function remoteSha(harness: Harness, ref: string): Promise<string | null> {
  const out = await git(['for-each-ref', '--format=%(objectname)', ref], { cwd: harness.origin.url });
  return out.trim() || null;
}

describe('worktree_from = "head" (item 1)', () => {
  it("gives the agent the pull request's own code and records base and head commits", async () => {
    h = await createHarness({ issues: [], automation: reviewAutomation('worktree_from = "head"') });
    const base = await mainSha(h);
    const head = await pushCommit(h, base, 'refs/heads/coupons', { 'coupons.js': 'export const x = 1;\n' });
    h.world.addPullRequest('acme/api', {
      title: 'Coupons [[fake:commit]]',
      body: 'Adds coupons.',
      author: 'octocat',
      headRefName: 'coupons',
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.headCommit).toBe(head);
    expect(run.baseCommit).toBe(base);
    // The agent's commit sits on the pull request's head (it saw coupons.js), kept: nothing pushed.
    expect(run.worktreeKept).toBe(true);
    expect(existsSync(join(run.worktreePath!, 'coupons.js'))).toBe(true);
    const parent = (await git(['rev-parse', 'HEAD^'], { cwd: run.worktreePath! })).trim();
    expect(parent).toBe(head);
    // The prompt named that head commit.
    expect(run.prompt).toContain(head);
    // `runs show` says which code the agent saw.
    const shown = await runBuiltCli(['--config', h.settingsFile, 'runs', 'show', run.id], { env: h.env });
    expect(shown.stdout).toContain(
      `code:        pull request #1’s head ${head.slice(0, 12)} (base ${base.slice(0, 12)})`,
    );
  }, 60_000);

  it("works on a fork's pull request (pull/<n>/head) and never pushes to the fork", async () => {
    h = await createHarness({
      issues: [],
      automation: reviewAutomation('worktree_from = "head"\ndeliver = "head"'),
    });
    const base = await mainSha(h);
    // The fork's commit reaches the repository only as the pull request's ref.
    const head = await pushCommit(h, base, 'refs/forks/contributor', { 'fork.js': 'fork\n' });
    h.world.addPullRequest('acme/api', {
      title: 'From a fork [[fake:commit]]',
      author: 'octocat',
      headRefName: 'main',
      headRefOid: head,
      isCrossRepository: true,
    });
    await git(['update-ref', '-d', 'refs/forks/contributor'], { cwd: h.origin.url });
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.headCommit).toBe(head);
    expect(run.reason).toContain('fork');
    expect(existsSync(join(run.worktreePath!, 'fork.js'))).toBe(true);
    // Nothing was pushed: main did not move, and the only pull ref is GitHub's own.
    expect(await mainSha(h)).toBe(base);
    expect(await remoteSha(h, 'refs/pull/1/head')).toBe(head);
    expect(run.worktreeKept).toBe(true);
  }, 60_000);

  it('with deliver = "head", pushes the agent\'s commit to the same-repository head branch (fast-forward)', async () => {
    h = await createHarness({
      issues: [],
      automation: reviewAutomation('worktree_from = "head"\ndeliver = "head"'),
    });
    const base = await mainSha(h);
    const head = await pushCommit(h, base, 'refs/heads/deps', { 'package.json': '{"v": 2}\n' });
    h.world.addPullRequest('acme/api', {
      title: 'Bump deps [[fake:commit]]',
      author: 'octocat',
      headRefName: 'deps',
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    const pushed = await remoteSha(h, 'refs/heads/deps');
    expect(pushed).not.toBe(head);
    expect((await git(['rev-parse', `${pushed}^`], { cwd: h.origin.url })).trim()).toBe(head);
    expect(run.reason).toContain(`pushed ${pushed!.slice(0, 12)} to pull request #1's branch deps`);
    expect(run.worktreeKept).toBe(false);
    // No pull request of its own, no delivery branch.
    expect(h.world.allItems().filter((i) => i.__typename === 'PullRequest')).toHaveLength(1);
  }, 60_000);

  it('validate --explain and run --dry-run say which code the agent sees', async () => {
    h = await createHarness({
      issues: [],
      automation: `${reviewAutomation('worktree_from = "head"')}
[automations.plain]
trigger_type = "github-pull-requests"
repository = "api"
repo = "acme/api"
labels = ["nothing-has-this"]
prompt = "Review"
`,
    });
    h.world.addPullRequest('acme/api', { title: 'Change', author: 'octocat', headRefName: 'x' });
    const explain = await runBuiltCli(['--config', h.settingsFile, 'validate', '--explain'], { env: h.env });
    expect(explain.code, explain.stderr).toBe(0);
    expect(explain.stdout).toContain(
      'the agent sees the pull request’s own code: a new branch at its head commit (fetched as pull/<number>/head, forks included)',
    );
    expect(explain.stdout).toContain('NOT the pull request’s own code (set worktree_from = "head" for that)');
    const dry = await runBuiltCli(['--config', h.settingsFile, 'run', '--dry-run'], { env: h.env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/code: {5}pull request #1’s head [0-9a-f]{12} \(x\); base main/);
  }, 60_000);
});

describe('once = "head" (item 2)', () => {
  it('runs an unchanged pull request once across restarts, and again after a new commit', async () => {
    h = await createHarness({ issues: [], automation: reviewAutomation('once = "head"') });
    const base = await mainSha(h);
    await pushCommit(h, base, 'refs/heads/feature', { 'a.txt': 'a\n' });
    h.world.addPullRequest('acme/api', { title: 'Feature', author: 'octocat', headRefName: 'feature' });
    expect(onlyRun((await h.run()).runs).status).toBe('succeeded');
    // Two restarts, nothing changed on GitHub: no agent starts.
    expect((await h.run()).runs).toHaveLength(0);
    expect((await h.run()).runs).toHaveLength(0);
    expect(h.agentRuns('claude')).toHaveLength(1);
    // A new commit on the pull request: it runs again, once.
    const tip = (await remoteSha(h, 'refs/heads/feature'))!;
    await pushCommit(h, tip, 'refs/heads/feature', { 'b.txt': 'b\n' });
    expect(onlyRun((await h.run()).runs).status).toBe('succeeded');
    expect((await h.run()).runs).toHaveLength(0);
    expect(h.agentRuns('claude')).toHaveLength(2);
    const explain = await runBuiltCli(['--config', h.settingsFile, 'validate', '--explain'], { env: h.env });
    expect(explain.stdout).toContain('a pull request runs once per head commit');
  }, 90_000);

  it('says plainly in validate --explain when an automation runs again after a restart', async () => {
    h = await createHarness({ issues: [], automation: reviewAutomation('') });
    const explain = await runBuiltCli(['--config', h.settingsFile, 'validate', '--explain'], { env: h.env });
    expect(explain.stdout).toContain(
      'none: every start of `run`, `run --watch` or `serve` runs each matching pull request again',
    );
  }, 30_000);
});

describe('pr_base_branch (item 6)', () => {
  it("cuts the worktree from the base the pull request targets: only the agent's commit is in it", async () => {
    h = await createHarness({
      issues: [{ title: 'Release fix [[fake:commit]]', body: 'Fix it.', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', {
        prompt: '${issue_title}',
        extra: 'deliver = "pr"\npr_base_branch = "release"',
      }),
    });
    const root = await mainSha(h);
    await pushCommit(h, root, 'refs/heads/release', { 'RELEASE.md': 'r\n' });
    await h.origin.push({ 'MAIN-ONLY.md': 'main moved on\n' });
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    const pr = h.world.pullRequest('acme/api', 2)!;
    expect(pr.baseRefName).toBe('release');
    const headSha = (await remoteSha(h, `refs/heads/${pr.headRefName}`))!;
    const commits = (await git(['rev-list', '--count', `release..${headSha}`], { cwd: h.origin.url })).trim();
    expect(commits).toBe('1');
    const files = (await git(['diff', '--name-only', `release...${headSha}`], { cwd: h.origin.url }))
      .trim()
      .split('\n');
    expect(files).toHaveLength(1);
    expect(files).not.toContain('MAIN-ONLY.md');
  }, 60_000);
});

describe('the pull requests curupira opens (item 11)', () => {
  it("pushes a readable branch, writes the change and the agent's final message, and names the pull request", async () => {
    h = await createHarness({
      issues: [
        {
          title: 'Broken login: ÉCRAN blank! [[fake:commit]]',
          body: 'SECRET-ISSUE-TEXT',
          labels: ['agent-ready'],
        },
      ],
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: 'deliver = "pr"' }),
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    const pr = h.world.pullRequest('acme/api', 2)!;
    expect(pr.headRefName).toBe('curupira/fix/1-broken-login-ecran-blank-fake-commit');
    expect(await remoteSha(h, `refs/heads/${pr.headRefName}`)).toBe(pr.headRefOid);
    // The local branch keeps seed 000's formula; the remote has no such branch.
    expect(run.branch).toMatch(/^curupira\/fix\/github-issues-[0-9a-f]{64}$/);
    expect(await remoteSha(h, `refs/heads/${run.branch}`)).toBeNull();
    expect(pr.body).toContain('Closes #1');
    expect(pr.body).toMatch(/\*\*Files changed \(1\):\*\*/);
    expect(pr.body).toContain('**The agent’s final message:**');
    expect(pr.body).toMatch(/\n> \S/);
    expect(pr.body).not.toContain('SECRET-ISSUE-TEXT');
    expect(run.reason).toBe(
      `opened pull request #2 https://github.com/acme/api/pull/2 (branch ${pr.headRefName})`,
    );
    expect(summarizeRuns([run]).join('\n')).toContain('opened pull request #2');
  }, 60_000);
});

describe('checkout = "main" with deliver (item 7)', () => {
  it('is a validation error that says why', async () => {
    h = await createHarness({
      automation: issueAutomation('fix', {
        prompt: '${issue_title}',
        extra: 'checkout = "main"\ndeliver = "pr"',
      }),
    });
    expect(() => loadSettings(h!.settingsFile)).toThrow(
      /deliver = "pr" pushes the run's own branch, but checkout = "main" works in the shared checkout on no branch of its own/,
    );
    const result = await runBuiltCli(['--config', h.settingsFile, 'validate'], { env: h.env });
    expect(result.code).toBe(2);
  }, 30_000);

  it('deliver = "head" needs worktree_from = "head"', async () => {
    h = await createHarness({ issues: [], automation: reviewAutomation('deliver = "head"') });
    expect(() => loadSettings(h!.settingsFile)).toThrow(/deliver = "head" .* needs worktree_from = "head"/);
  }, 30_000);
});
