import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { ensureCheckout } from './checkout.js';
import { emptyPools } from './gc.js';
import { branchExists, currentBranch, git, listWorktrees, revParse, statusPorcelain } from './git.js';
import { worktreePath } from './paths.js';
import { forgetSweep, poolDir, REPOINT_MARKER } from './pool.js';
import { commitFiles, createOrigin, isolateGitForTests, type OriginRepo } from './testing.js';
import { finishWorktree, prepareWorktree, worktreeGitDir } from './worktree.js';

const log = silentLogger();
let origin: OriginRepo | undefined;

beforeAll(() => isolateGitForTests());
afterEach(async () => {
  if (origin) forgetSweep(origin.checkoutPath);
  await origin?.cleanup();
  origin = undefined;
});

async function cloned(): Promise<OriginRepo> {
  origin = await createOrigin({
    files: { 'README.md': '# sample\n', 'old.txt': 'goes away\n', '.gitignore': 'build/\n*.log\n' },
  });
  await ensureCheckout({
    alias: 'sample',
    remote: origin.url,
    path: origin.checkoutPath,
    timeoutMs: 20_000,
    log,
  });
  return origin;
}

function task(repo: OriginRepo, taskId: string) {
  return {
    checkoutPath: repo.checkoutPath,
    automationId: 'triage',
    taskType: 'github-issues',
    taskId,
    log,
    reuse: true,
  };
}

async function finish(path: string, branch: string, repo: OriginRepo, pool = 4) {
  return finishWorktree({ checkoutPath: repo.checkoutPath, path, branch, log, pool });
}

/** The pooled worktree folders (`wt-…`) and their ready records. */
async function poolEntries(repo: OriginRepo): Promise<{ slots: string[]; ready: string[] }> {
  const names = await readdir(poolDir(repo.checkoutPath)).catch(() => [] as string[]);
  return {
    slots: names.filter((n) => /^wt-[0-9a-f]+$/.test(n)),
    ready: names.filter((n) => n.endsWith('.ready')),
  };
}

/** A finished run's clean worktree, pooled; returns where its git folder is. */
async function pooledOne(repo: OriginRepo, taskId = '1'): Promise<string> {
  const first = await prepareWorktree(task(repo, taskId));
  const gitDir = (await worktreeGitDir(first.path))!;
  const result = await finish(first.path, first.branch, repo);
  expect(result).toMatchObject({ kept: false, pooled: true, removed: true });
  return gitDir;
}

/** Several finished runs' clean worktrees, pooled together; returns their git folders. */
async function pooledMany(repo: OriginRepo, taskIds: string[]): Promise<string[]> {
  const prepared = [];
  for (const id of taskIds) prepared.push(await prepareWorktree(task(repo, id)));
  const gitDirs = [];
  for (const wt of prepared) {
    gitDirs.push((await worktreeGitDir(wt.path))!);
    expect(await finish(wt.path, wt.branch, repo)).toMatchObject({ pooled: true });
  }
  return gitDirs;
}

describe('worktree reuse', () => {
  it('pools a clean finished worktree and re-points it for the next task: new branch, fresh base, ignored files gone', async () => {
    const repo = await cloned();
    const first = await prepareWorktree(task(repo, '1'));
    expect(first.recycled).toBe(false);
    const gitDir = (await worktreeGitDir(first.path))!;
    // What an agent leaves that git ignores: build output, a log.
    await mkdir(join(first.path, 'build'), { recursive: true });
    await writeFile(join(first.path, 'build', 'out.js'), 'compiled\n');
    await writeFile(join(first.path, 'debug.log'), 'secret-ish\n');
    await writeFile(`${first.path}.opencode.db`, 'sessions\n');

    const finished = await finish(first.path, first.branch, repo);
    expect(finished).toMatchObject({
      kept: false,
      removed: true,
      pooled: true,
      dirty: false,
      unpushedCommits: 0,
    });
    expect(existsSync(first.path)).toBe(false);
    expect(existsSync(`${first.path}.opencode.db`)).toBe(false);
    expect(await branchExists(repo.checkoutPath, first.branch)).toBe(false);
    const pool = await poolEntries(repo);
    expect(pool.slots).toHaveLength(1);
    expect(pool.ready).toEqual([`${pool.slots[0]}.ready`]);
    // Git still knows the pooled worktree where it now is, so a prune cannot forget it.
    await git(['worktree', 'prune'], { cwd: repo.checkoutPath });
    const listed = (await listWorktrees(repo.checkoutPath)).map((w) => w.path);
    expect(listed).toContain(join(poolDir(repo.checkoutPath), pool.slots[0]!));

    const latest = await repo.push({ 'README.md': '# changed upstream\n', 'new.txt': 'new\n' });
    await git(['rm', '-q', 'old.txt'], { cwd: join(repo.dir, 'seed') });
    const newest = await repo.push({}, 'remove old.txt');
    expect(newest).not.toBe(latest);

    const second = await prepareWorktree(task(repo, '2'));
    expect(second).toMatchObject({ recycled: true, reused: false, reusedBranch: false, baseCommit: newest });
    expect(second.path).toBe(worktreePath(repo.checkoutPath, 'triage', 'github-issues', '2'));
    // The same worktree (its git folder), re-pointed.
    expect(await worktreeGitDir(second.path)).toBe(gitDir);
    expect(await currentBranch(second.path)).toBe(second.branch);
    expect(await revParse(second.path, 'HEAD')).toBe(newest);
    expect(await readFile(join(second.path, 'README.md'), 'utf8')).toBe('# changed upstream\n');
    expect(existsSync(join(second.path, 'new.txt'))).toBe(true);
    expect(existsSync(join(second.path, 'old.txt'))).toBe(false);
    expect(existsSync(join(second.path, 'build'))).toBe(false);
    expect(existsSync(join(second.path, 'debug.log'))).toBe(false);
    expect(await statusPorcelain(second.path)).toEqual([]);
    expect(existsSync(join(gitDir, REPOINT_MARKER))).toBe(false);
    expect(await poolEntries(repo)).toEqual({ slots: [], ready: [] });
    // It finishes like any other worktree: the agent's commit keeps it.
    await commitFiles(second.path, { 'fix.txt': 'fixed\n' });
    const kept = await finish(second.path, second.branch, repo);
    expect(kept).toMatchObject({ kept: true, unpushedCommits: 1 });
    expect(kept.pooled).toBeUndefined();
  });

  it('runs no `git clean` when its status showed nothing ignored, and one when it did', async () => {
    const repo = await cloned();
    const traced = join(repo.dir, 'trace');
    await mkdir(traced);
    const cleans = async (): Promise<number> => {
      let count = 0;
      for (const name of await readdir(traced)) {
        const text = await readFile(join(traced, name), 'utf8');
        if (/"event":"cmd_name"[^\n]*"name":"clean"/.test(text)) count += 1;
      }
      return count;
    };
    const saved = process.env.GIT_TRACE2_EVENT;
    process.env.GIT_TRACE2_EVENT = traced;
    try {
      const plain = await prepareWorktree(task(repo, '1'));
      expect(await finish(plain.path, plain.branch, repo)).toMatchObject({ pooled: true });
      expect(await cleans()).toBe(0);
      const built = await prepareWorktree(task(repo, '2'));
      expect(built.recycled).toBe(true);
      await mkdir(join(built.path, 'build'), { recursive: true });
      await writeFile(join(built.path, 'build', 'out.js'), 'compiled\n');
      expect(await finish(built.path, built.branch, repo)).toMatchObject({ pooled: true });
      expect(await cleans()).toBe(1);
    } finally {
      if (saved === undefined) delete process.env.GIT_TRACE2_EVENT;
      else process.env.GIT_TRACE2_EVENT = saved;
    }
    const again = await prepareWorktree(task(repo, '3'));
    expect(again.recycled).toBe(true);
    expect(existsSync(join(again.path, 'build'))).toBe(false);
    expect(await statusPorcelain(again.path)).toEqual([]);
  });

  it('never pools a worktree that holds work: untracked or changed files, or unpushed commits', async () => {
    const repo = await cloned();
    const untracked = await prepareWorktree(task(repo, '1'));
    await writeFile(join(untracked.path, 'notes.txt'), 'agent notes\n');
    const changed = await prepareWorktree(task(repo, '2'));
    await writeFile(join(changed.path, 'README.md'), 'edited\n');
    const committed = await prepareWorktree(task(repo, '3'));
    await commitFiles(committed.path, { 'fix.txt': 'fixed\n' });

    for (const wt of [untracked, changed, committed]) {
      const result = await finish(wt.path, wt.branch, repo);
      expect(result).toMatchObject({ kept: true, removed: false });
      expect(result.pooled).toBeUndefined();
      expect(existsSync(wt.path)).toBe(true);
      expect(await branchExists(repo.checkoutPath, wt.branch)).toBe(true);
    }
    expect(await poolEntries(repo)).toEqual({ slots: [], ready: [] });
    expect(await readFile(join(untracked.path, 'notes.txt'), 'utf8')).toBe('agent notes\n');
  });

  it('never re-points a pooled worktree over a branch with unpushed commits: the branch is continued', async () => {
    const repo = await cloned();
    // An earlier run of task 2 left its branch with a commit, its worktree deleted by hand.
    const earlier = await prepareWorktree(task(repo, '2'));
    const work = await commitFiles(earlier.path, { 'fix.txt': 'fixed\n' });
    await rm(earlier.path, { recursive: true, force: true });
    await git(['worktree', 'prune'], { cwd: repo.checkoutPath });
    await pooledOne(repo, '1');

    const again = await prepareWorktree(task(repo, '2'));
    expect(again).toMatchObject({ recycled: false, reusedBranch: true });
    expect(await revParse(again.path, 'HEAD')).toBe(work);
    // The pooled worktree was given up (it could not take the branch), not left half moved.
    expect(await poolEntries(repo)).toEqual({ slots: [], ready: [] });
    const paths = (await listWorktrees(repo.checkoutPath)).map((w) => w.path);
    expect(paths.filter((p) => p.includes('.pool'))).toEqual([]);
  });

  it('removes, never reuses, a pooled worktree with the crash marker or one that does not match its record', async () => {
    const repo = await cloned();
    const [marked, mismatched] = (await pooledMany(repo, ['1', '2'])) as [string, string];
    expect((await poolEntries(repo)).ready).toHaveLength(2);
    // A kill while one moved (its marker left), and one whose HEAD no longer is what was recorded.
    await writeFile(join(marked, REPOINT_MARKER), 'into the pool from somewhere\n');
    await writeFile(join(mismatched, 'HEAD'), 'ref: refs/heads/main\n');
    forgetSweep(repo.checkoutPath); // a restart

    const next = await prepareWorktree(task(repo, '3'));
    expect(next.recycled).toBe(false);
    expect(await worktreeGitDir(next.path)).not.toBe(marked);
    expect(await worktreeGitDir(next.path)).not.toBe(mismatched);
    expect(await poolEntries(repo)).toEqual({ slots: [], ready: [] });
    const paths = (await listWorktrees(repo.checkoutPath)).map((w) => w.path);
    expect(paths.filter((p) => p.includes('.pool'))).toEqual([]);
    expect(await statusPorcelain(next.path)).toEqual([]);
  });

  it('removes a worktree a kill left half moved into the pool (no record) at the next start', async () => {
    const repo = await cloned();
    const gitDir = await pooledOne(repo, '1');
    const { slots } = await poolEntries(repo);
    // The kill came after the rename, before the record: no `.ready`, the marker still there.
    await rm(join(poolDir(repo.checkoutPath), `${slots[0]}.ready`));
    await writeFile(join(gitDir, REPOINT_MARKER), 'into the pool\n');
    forgetSweep(repo.checkoutPath);

    const next = await prepareWorktree(task(repo, '2'));
    expect(next.recycled).toBe(false);
    expect(existsSync(join(poolDir(repo.checkoutPath), slots[0]!))).toBe(false);
    expect(existsSync(gitDir)).toBe(false);
  });

  it('recreates a worktree a kill left half moved out of the pool (the marker at the task path)', async () => {
    const repo = await cloned();
    await pooledOne(repo, '1');
    const taken = await prepareWorktree(task(repo, '2'));
    expect(taken.recycled).toBe(true);
    const gitDir = (await worktreeGitDir(taken.path))!;
    // As if the kill came before the marker was removed: the checkout may be half written.
    await writeFile(join(gitDir, REPOINT_MARKER), `out of the pool to ${taken.path}\n`);
    await writeFile(join(taken.path, 'README.md'), 'half written\n');
    forgetSweep(repo.checkoutPath);

    const again = await prepareWorktree(task(repo, '2'));
    expect(again).toMatchObject({ reused: false, recycled: false });
    expect(await readFile(join(again.path, 'README.md'), 'utf8')).toBe('# sample\n');
    expect(await statusPorcelain(again.path)).toEqual([]);
    expect(await worktreeGitDir(again.path)).not.toBe(gitDir);
  });

  it('gives concurrent tasks on one checkout different pooled worktrees, and adds new ones when the pool runs out', async () => {
    const repo = await cloned();
    const firsts = await Promise.all(['1', '2', '3'].map((id) => prepareWorktree(task(repo, id))));
    const pooledDirs = await Promise.all(firsts.map(async (wt) => (await worktreeGitDir(wt.path))!));
    // Packed branches: each deletion (outside the checkout's lock) rewrites packed-refs at once.
    await git(['pack-refs', '--all'], { cwd: repo.checkoutPath });
    const finished = await Promise.all(firsts.map((wt) => finish(wt.path, wt.branch, repo)));
    expect(finished.every((r) => r.pooled === true && r.removed)).toBe(true);
    for (const wt of firsts) expect(await branchExists(repo.checkoutPath, wt.branch)).toBe(false);
    expect((await poolEntries(repo)).ready).toHaveLength(3);

    const next = await Promise.all(['4', '5', '6', '7'].map((id) => prepareWorktree(task(repo, id))));
    expect(next.filter((wt) => wt.recycled)).toHaveLength(3);
    const dirs = await Promise.all(next.map(async (wt) => (await worktreeGitDir(wt.path))!));
    expect(new Set(dirs).size).toBe(4);
    expect(dirs.filter((d) => pooledDirs.includes(d)).sort()).toEqual([...pooledDirs].sort());
    for (const wt of next) {
      expect(await currentBranch(wt.path)).toBe(wt.branch);
      expect(await statusPorcelain(wt.path)).toEqual([]);
    }
    expect(await poolEntries(repo)).toEqual({ slots: [], ready: [] });
  });

  it('keeps at most `pool` worktrees and removes the rest as before', async () => {
    const repo = await cloned();
    const a = await prepareWorktree(task(repo, '1'));
    const b = await prepareWorktree(task(repo, '2'));
    expect(await finish(a.path, a.branch, repo, 1)).toMatchObject({ pooled: true });
    const second = await finish(b.path, b.branch, repo, 1);
    expect(second).toMatchObject({ kept: false, removed: true });
    expect(second.pooled).toBeUndefined();
    expect(existsSync(b.path)).toBe(false);
    expect(await branchExists(repo.checkoutPath, b.branch)).toBe(false);
    expect((await poolEntries(repo)).slots).toHaveLength(1);
  });

  it('empties the pool at the next start when reuse is off', async () => {
    const repo = await cloned();
    await pooledOne(repo, '1');
    forgetSweep(repo.checkoutPath);
    const next = await prepareWorktree({ ...task(repo, '2'), reuse: false });
    expect(next.recycled).toBe(false);
    expect(await poolEntries(repo)).toEqual({ slots: [], ready: [] });
    const paths = (await listWorktrees(repo.checkoutPath)).map((w) => w.path);
    expect(paths.filter((p) => p.includes('.pool'))).toEqual([]);
  });

  it('`gc --all` empties the pool (emptyPools), and git forgets the pooled worktrees', async () => {
    const repo = await cloned();
    await pooledMany(repo, ['1', '2']);
    expect(await emptyPools([repo.checkoutPath])).toBe(2);
    expect(existsSync(poolDir(repo.checkoutPath))).toBe(false);
    const paths = (await listWorktrees(repo.checkoutPath)).map((w) => w.path);
    expect(paths).toEqual([repo.checkoutPath]);
    expect(await emptyPools([repo.checkoutPath])).toBe(0);
  });

  it("runs none of the repository's hooks when it re-points a worktree (as `worktree add --no-checkout` + `reset` runs none)", async () => {
    const repo = await cloned();
    const ran = join(repo.dir, 'post-checkout-ran');
    const hook = join(repo.checkoutPath, '.git', 'hooks', 'post-checkout');
    await mkdir(dirname(hook), { recursive: true });
    await writeFile(hook, `#!/bin/sh\ntouch '${ran}'\n`, { mode: 0o755 });
    await pooledOne(repo, '1');
    const taken = await prepareWorktree(task(repo, '2'));
    expect(taken.recycled).toBe(true);
    expect(existsSync(ran)).toBe(false);
    // The hook itself works: git runs it on an ordinary checkout.
    await git(['checkout', '-q', '--detach'], { cwd: taken.path });
    expect(existsSync(ran)).toBe(true);
  });

  it('never pools a worktree whose git folder holds an operation in progress or settings of its own', async () => {
    const repo = await cloned();
    for (const [id, file] of [
      ['1', 'MERGE_HEAD'],
      ['2', 'config.worktree'],
    ] as const) {
      const wt = await prepareWorktree(task(repo, id));
      const gitDir = (await worktreeGitDir(wt.path))!;
      await writeFile(
        join(gitDir, file),
        file === 'MERGE_HEAD' ? `${await revParse(wt.path, 'HEAD')}\n` : '',
      );
      const result = await finish(wt.path, wt.branch, repo);
      expect(result).toMatchObject({ kept: false, removed: true });
      expect(result.pooled).toBeUndefined();
      expect(existsSync(wt.path)).toBe(false);
    }
    expect(await poolEntries(repo)).toEqual({ slots: [], ready: [] });
  });
});
