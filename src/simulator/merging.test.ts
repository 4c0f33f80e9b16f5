import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { git } from '../workspace/git.js';
import { createOrigin, isolateGitForTests, type OriginRepo } from '../workspace/testing.js';
import { commitToBranch, forcedUpdates, setLazyMergeability } from './merging.js';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

const TOKEN = 'merging-token';
let sim: Simulator;
let world: SimWorld;
let origin: OriginRepo;
let gitDir: string;

async function api(path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `bearer ${TOKEN}`, accept: 'application/vnd.github+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function gitOut(args: string[]): Promise<string> {
  return (await git(args, { cwd: gitDir })).trim();
}

beforeAll(() => isolateGitForTests());

beforeEach(async () => {
  origin = await createOrigin({ files: { 'README.md': '# sample\n', 'app.txt': 'one\ntwo\nthree\n' } });
  gitDir = origin.url;
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addUser('alice');
  world.addRepo('acme/api', { gitDir });
  world.addIssue('acme/api', { title: 'Crash', author: 'alice' });
  sim = await startSimulator({ world });
});

afterEach(async () => {
  await sim.close();
  await origin.cleanup();
});

/** A branch with one commit changing `app.txt` and adding `src/fix.ts`, and its open pull request #2. */
async function openPullRequest(branch = 'curupira/fix/x'): Promise<string> {
  commitToBranch(
    gitDir,
    branch,
    { 'app.txt': 'one\nTWO\nthree\n', 'src/fix.ts': 'export {};\n' },
    {
      from: 'main',
      message: 'fix the crash',
    },
  );
  const created = await api('/repos/acme/api/pulls', 'POST', {
    title: 'Fix the crash',
    head: branch,
    base: 'main',
    body: 'Closes #1',
  });
  expect(created.status).toBe(201);
  return created.body.head.sha as string;
}

describe('mergeability computed by git', () => {
  test('clean, then behind when the base moves, then dirty on a conflict', async () => {
    const head = await openPullRequest();
    expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({
      mergeable: true,
      mergeable_state: 'clean',
      head: { sha: head },
    });
    commitToBranch(gitDir, 'main', { 'other.txt': 'unrelated\n' }, { message: 'elsewhere' });
    expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({
      mergeable: true,
      mergeable_state: 'behind',
    });
    const compared = await api(`/repos/acme/api/compare/main...curupira/fix/x`);
    expect(compared.body).toMatchObject({ status: 'diverged', ahead_by: 1, behind_by: 1, total_commits: 1 });
    commitToBranch(gitDir, 'main', { 'app.txt': 'one\nzwei\nthree\n' }, { message: 'conflicting' });
    expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({
      mergeable: false,
      mergeable_state: 'dirty',
    });
  });

  test('lazily: the first read of a new (head, base) pair is unknown, as on GitHub', async () => {
    await openPullRequest();
    setLazyMergeability(world, true);
    expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({
      mergeable: null,
      mergeable_state: 'unknown',
    });
    expect((await api('/repos/acme/api/pulls/2')).body.mergeable).toBe(true);
    commitToBranch(gitDir, 'main', { 'app.txt': 'conflict\n' });
    expect((await api('/repos/acme/api/pulls/2')).body.mergeable).toBeNull();
    expect((await api('/repos/acme/api/pulls/2')).body.mergeable).toBe(false);
  });

  test('GraphQL reads the same: mergeable and mergeStateStatus from git', async () => {
    await openPullRequest();
    const read = async () =>
      (
        await postGraphQL<{ repository: { pullRequest: { mergeable: string; mergeStateStatus: string } } }>(
          sim.url,
          TOKEN,
          '{ repository(owner: "acme", name: "api") { pullRequest(number: 2) { mergeable mergeStateStatus } } }',
        )
      ).body.data?.repository.pullRequest;
    expect(await read()).toEqual({ mergeable: 'MERGEABLE', mergeStateStatus: 'CLEAN' });
    commitToBranch(gitDir, 'main', { 'other.txt': 'elsewhere\n' });
    expect(await read()).toEqual({ mergeable: 'MERGEABLE', mergeStateStatus: 'BEHIND' });
    commitToBranch(gitDir, 'main', { 'app.txt': 'conflict\n' });
    expect(await read()).toEqual({ mergeable: 'CONFLICTING', mergeStateStatus: 'DIRTY' });
  });

  test('draft pull requests say so', async () => {
    commitToBranch(gitDir, 'wip', { 'wip.txt': 'x\n' }, { from: 'main' });
    await api('/repos/acme/api/pulls', 'POST', { title: 'WIP', head: 'wip', base: 'main', draft: true });
    expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({
      mergeable: true,
      mergeable_state: 'draft',
    });
  });

  test('the files of a pull request come from git diff base...head', async () => {
    await openPullRequest();
    commitToBranch(gitDir, 'main', { 'other.txt': 'base moved\n' });
    const files = await api('/repos/acme/api/pulls/2/files');
    expect(files.status).toBe(200);
    expect(
      files.body.map((f: { filename: string; status: string; additions: number; deletions: number }) => [
        f.filename,
        f.status,
        f.additions,
        f.deletions,
      ]),
    ).toEqual([
      ['app.txt', 'modified', 1, 1],
      ['src/fix.ts', 'added', 1, 0],
    ]);
    expect(files.body[1].sha).toMatch(/^[0-9a-f]{40}$/);
    expect((await api('/repos/acme/api/pulls/2/files?per_page=1&page=2')).body).toHaveLength(1);
  });
});

describe('merging in the bare repository', () => {
  test.each(['merge', 'squash', 'rebase'] as const)(
    '%s: the base gets the change, the pull request is merged, the linked issue closes',
    async (method) => {
      const head = await openPullRequest();
      const moved = commitToBranch(gitDir, 'main', { 'other.txt': 'base moved\n' });
      const merged = await api('/repos/acme/api/pulls/2/merge', 'PUT', { merge_method: method, sha: head });
      expect(merged.status).toBe(200);
      expect(merged.body).toMatchObject({ merged: true, message: 'Pull Request successfully merged' });
      const tip = await gitOut(['rev-parse', 'refs/heads/main']);
      expect(merged.body.sha).toBe(tip);
      expect(await gitOut(['show', 'main:app.txt'])).toBe('one\nTWO\nthree');
      expect(await gitOut(['show', 'main:other.txt'])).toBe('base moved');
      const parents = (await gitOut(['show', '-s', '--format=%P', tip])).split(' ');
      if (method === 'merge') expect(parents).toEqual([moved, head]);
      if (method === 'squash') {
        expect(parents).toEqual([moved]);
        expect(await gitOut(['show', '-s', '--format=%s', tip])).toBe('Fix the crash (#2)');
      }
      if (method === 'rebase') {
        expect(parents).toEqual([moved]);
        expect(tip).not.toBe(head);
        expect(await gitOut(['show', '-s', '--format=%s %an', tip])).toBe('fix the crash Simulated Pusher');
        expect(await gitOut(['worktree', 'list', '--porcelain'])).not.toContain('curupira-sim-rebase');
      }
      expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({ state: 'closed', merged: true });
      expect(world.issue('acme/api', 1)!.state).toBe('CLOSED');
      expect((await api('/repos/acme/api/pulls/2/merge', 'PUT', { merge_method: method })).status).toBe(405);
      expect(forcedUpdates(gitDir)).toEqual([]);
    },
  );

  test('refuses a stale sha (409), a conflict (405), a draft (405), an unknown method (422)', async () => {
    const head = await openPullRequest();
    const stale = await api('/repos/acme/api/pulls/2/merge', 'PUT', { sha: 'f'.repeat(40) });
    expect(stale.status).toBe(409);
    commitToBranch(gitDir, 'main', { 'app.txt': 'conflict\n' });
    const conflict = await api('/repos/acme/api/pulls/2/merge', 'PUT', { sha: head });
    expect(conflict).toMatchObject({ status: 405, body: { message: 'Pull Request is not mergeable' } });
    expect(world.pullRequest('acme/api', 2)!.state).toBe('OPEN');
    commitToBranch(gitDir, 'wip', { 'wip.txt': 'x\n' }, { from: 'main' });
    await api('/repos/acme/api/pulls', 'POST', { title: 'WIP', head: 'wip', base: 'main', draft: true });
    expect((await api('/repos/acme/api/pulls/3/merge', 'PUT', {})).body.message).toBe(
      'Pull Request is still a draft',
    );
    expect((await api('/repos/acme/api/pulls/2/merge', 'PUT', { merge_method: 'octopus' })).status).toBe(422);
  });
});

describe('updating the branch', () => {
  test('a real merge commit of the base into the head, fast-forward only (no forced update in the reflogs)', async () => {
    const head = await openPullRequest();
    expect((await api('/repos/acme/api/pulls/2/update-branch', 'PUT', {})).body.message).toBe(
      'There are no new commits on the base branch.',
    );
    const moved = commitToBranch(gitDir, 'main', { 'other.txt': 'base moved\n' });
    const stale = await api('/repos/acme/api/pulls/2/update-branch', 'PUT', { expected_head_sha: moved });
    expect(stale.status).toBe(422);
    const updated = await api('/repos/acme/api/pulls/2/update-branch', 'PUT', { expected_head_sha: head });
    expect(updated).toMatchObject({ status: 202, body: { message: 'Updating pull request branch.' } });
    const tip = await gitOut(['rev-parse', 'refs/heads/curupira/fix/x']);
    expect((await gitOut(['show', '-s', '--format=%P', tip])).split(' ')).toEqual([head, moved]);
    expect(await gitOut(['show', '-s', '--format=%s', tip])).toBe("Merge branch 'main' into curupira/fix/x");
    expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({
      mergeable_state: 'clean',
      head: { sha: tip },
    });
    expect(forcedUpdates(gitDir)).toEqual([]);
  });

  test('a conflict is refused with 422 and the branch stays', async () => {
    const head = await openPullRequest();
    commitToBranch(gitDir, 'main', { 'app.txt': 'conflict\n' });
    const refused = await api('/repos/acme/api/pulls/2/update-branch', 'PUT', { expected_head_sha: head });
    expect(refused).toMatchObject({ status: 422, body: { message: 'merge conflict between base and head' } });
    expect(await gitOut(['rev-parse', 'refs/heads/curupira/fix/x'])).toBe(head);
  });

  test('forcedUpdates sees a forced push in the reflogs (the check can fail)', async () => {
    const head = await openPullRequest();
    expect(forcedUpdates(gitDir)).toEqual([]);
    const rewritten = await gitOut(['commit-tree', `${head}^{tree}`, '-p', 'main', '-m', 'rewritten']);
    await git(['update-ref', 'refs/heads/curupira/fix/x', rewritten], { cwd: gitDir });
    expect(forcedUpdates(gitDir)).toEqual([
      expect.objectContaining({ ref: 'refs/heads/curupira/fix/x', old: head, new: rewritten }),
    ]);
  });
});
