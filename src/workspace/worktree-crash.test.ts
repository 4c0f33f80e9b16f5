/**
 * What a kill -9 in the middle of `git worktree add` leaves behind, made two ways: by really killing
 * git (its whole process group, as a crash of curupira's process tree would) and by hand, and what
 * `prepareWorktree` makes of it. The repository has a few thousand files so the checkout takes long
 * enough to be interrupted.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { ensureCheckout } from './checkout.js';
import { git, listWorktrees, revParse, statusPorcelain } from './git.js';
import { branchName, worktreePath } from './paths.js';
import { commitFiles, createOrigin, isolateGitForTests, type OriginRepo } from './testing.js';
import { prepareWorktree, worktreeGitDir } from './worktree.js';

const log = silentLogger();
/** Enough files that a real checkout takes long enough to be killed half-way. */
const BIG = 2000;
/** For states built by hand: the same shape, fewer files, a faster test. */
const SMALL = 60;
let origin: OriginRepo | undefined;

beforeAll(() => isolateGitForTests());
afterEach(async () => {
  await origin?.cleanup();
  origin = undefined;
});

async function clone(count: number): Promise<OriginRepo> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`src/d${i % 25}/f${i}.txt`] = `file ${i}\n`;
  const repo = await createOrigin({ files });
  origin = repo;
  await ensureCheckout({ alias: 'big', remote: repo.url, path: repo.checkoutPath, timeoutMs: 60_000, log });
  return repo;
}

function task(repo: OriginRepo) {
  return {
    checkoutPath: repo.checkoutPath,
    automationId: 'triage',
    taskType: 'github-issues',
    taskId: '7',
    log,
  };
}

async function countFiles(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && entry.name !== '.git').length;
}

/** Runs `git args` in its own process group and SIGKILLs the group once `ready()` holds. */
async function killGitWhen(args: string[], cwd: string, ready: () => boolean): Promise<void> {
  const child = spawn('git', args, { cwd, detached: true, stdio: 'ignore' });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  while (!gone && !ready()) await new Promise((wake) => setImmediate(wake));
  if (!gone) process.kill(-child.pid!, 'SIGKILL');
  await exited;
}

/** Makes a complete worktree look like one `git worktree add` was killed in: lock, no index, files gone. */
async function breakLikeAKill(path: string): Promise<void> {
  const gitDir = (await worktreeGitDir(path))!;
  await writeFile(join(gitDir, 'locked'), 'initializing');
  await writeFile(join(gitDir, 'index.lock'), '');
  await rm(join(gitDir, 'index'));
  for (let d = 3; d < 25; d++) await rm(join(path, 'src', `d${d}`), { recursive: true });
}

describe('prepareWorktree after a kill during git worktree add', () => {
  it('recreates the worktree a real SIGKILL of git worktree add left half checked out', async () => {
    const repo = await clone(BIG);
    const target = worktreePath(repo.checkoutPath, 'triage', 'github-issues', '7');
    const branch = branchName('triage', 'github-issues', '7');
    await git(['fetch', 'origin'], { cwd: repo.checkoutPath });
    await killGitWhen(
      ['worktree', 'add', '--no-track', '-b', branch, target, 'origin/main'],
      repo.checkoutPath,
      () => existsSync(join(target, 'src')),
    );
    // The state the issue describes: locked "initializing", only part of the files, git sees deletions.
    const [, entry] = await listWorktrees(repo.checkoutPath);
    expect(entry).toMatchObject({ locked: true, lockReason: 'initializing' });
    expect(await countFiles(target)).toBeLessThan(BIG);
    const before = await statusPorcelain(target);
    expect(before.filter((e) => e.code === 'D ').length).toBeGreaterThan(0);

    const prepared = await prepareWorktree(task(repo));
    expect(prepared).toMatchObject({ path: target, branch, reused: false, reusedBranch: false });
    expect(await statusPorcelain(target)).toEqual([]);
    expect(await countFiles(target)).toBe(BIG);
    const after = (await listWorktrees(repo.checkoutPath)).find((w) => w.branch === branch);
    expect(after).toMatchObject({ locked: false, lockReason: null });
    expect(existsSync(join((await worktreeGitDir(target))!, 'index.lock'))).toBe(false);
    // Nothing of the half-made checkout was kept aside: it held only repository files.
    expect((await readdir(dirname(target))).filter((n) => n.includes('.stale-'))).toEqual([]);
  });

  it('recreates a half-made worktree built by hand instead of reusing it', async () => {
    const repo = await clone(SMALL);
    const first = await prepareWorktree(task(repo));
    await breakLikeAKill(first.path);
    expect((await statusPorcelain(first.path)).filter((e) => e.code === 'D ').length).toBe(SMALL);

    const again = await prepareWorktree(task(repo));
    expect(again).toMatchObject({ path: first.path, reused: false });
    expect(await statusPorcelain(again.path)).toEqual([]);
    expect(await countFiles(again.path)).toBe(SMALL);
  });

  it('recreates a worktree registered but killed before its files were written (no index)', async () => {
    const repo = await clone(SMALL);
    const target = worktreePath(repo.checkoutPath, 'triage', 'github-issues', '7');
    const branch = branchName('triage', 'github-issues', '7');
    // What a kill between prepareWorktree's two steps leaves: the registration, no files, no index.
    await git(['worktree', 'add', '--no-checkout', '--no-track', '-b', branch, target, 'origin/main'], {
      cwd: repo.checkoutPath,
    });

    const again = await prepareWorktree(task(repo));
    expect(again).toMatchObject({ path: target, reused: false });
    expect(await statusPorcelain(again.path)).toEqual([]);
    expect(await countFiles(again.path)).toBe(SMALL);
  });

  it('prepares the task again after a kill between moving a finished worktree aside and forgetting it', async () => {
    const repo = await clone(SMALL);
    const first = await prepareWorktree(task(repo));
    // What finishWorktree's rename leaves when the process dies before `worktree prune`.
    const aside = join(dirname(first.path), '.moved.stale-20260101T000000Z');
    await rename(first.path, aside);

    const again = await prepareWorktree(task(repo));
    expect(again).toMatchObject({ path: first.path, reused: false, reusedBranch: false });
    expect(await statusPorcelain(again.path)).toEqual([]);
    expect(await countFiles(again.path)).toBe(SMALL);
    // The folder moved aside is left for `curupira gc`, which lists `.stale-` folders.
    expect(existsSync(aside)).toBe(true);
  });

  it('keeps the commits on a half-made worktree’s branch and re-adds the worktree from that branch', async () => {
    const repo = await clone(SMALL);
    const first = await prepareWorktree(task(repo));
    const work = await commitFiles(first.path, { 'fix.txt': 'the fix\n' });
    await breakLikeAKill(first.path);

    const again = await prepareWorktree(task(repo));
    expect(again).toMatchObject({ reused: false, reusedBranch: true });
    expect(await revParse(again.path, 'HEAD')).toBe(work);
    expect(await readFile(join(again.path, 'fix.txt'), 'utf8')).toBe('the fix\n');
    expect(await statusPorcelain(again.path)).toEqual([]);
    expect(await countFiles(again.path)).toBe(SMALL + 1);
  });

  it('moves files that are not in the repository to a .stale sibling before recreating', async () => {
    const repo = await clone(SMALL);
    const first = await prepareWorktree(task(repo));
    await writeFile(join(first.path, 'notes.txt'), 'an agent wrote this');
    await breakLikeAKill(first.path);

    const again = await prepareWorktree(task(repo));
    expect(again.reused).toBe(false);
    expect(await statusPorcelain(again.path)).toEqual([]);
    const aside = (await readdir(dirname(first.path))).filter((n) => n.includes('.stale-'));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(dirname(first.path), aside[0]!, 'notes.txt'), 'utf8')).toBe(
      'an agent wrote this',
    );
  });

  it('reuses a complete worktree that only has a stale index.lock, after removing the lock', async () => {
    const repo = await clone(SMALL);
    const first = await prepareWorktree(task(repo));
    await writeFile(join(first.path, 'half-done.txt'), 'in progress');
    const lock = join((await worktreeGitDir(first.path))!, 'index.lock');
    await writeFile(lock, '');

    const again = await prepareWorktree(task(repo));
    expect(again.reused).toBe(true);
    expect(existsSync(lock)).toBe(false);
    expect(await readFile(join(again.path, 'half-done.txt'), 'utf8')).toBe('in progress');
    await git(['add', 'half-done.txt'], { cwd: again.path });
  });

  it('removes the ref and HEAD locks a git killed mid-commit left, so the next commit on the branch works', async () => {
    const repo = await clone(SMALL);
    const first = await prepareWorktree(task(repo));
    const gitDir = (await worktreeGitDir(first.path))!;
    const refLock = join(repo.checkoutPath, '.git', 'refs', 'heads', `${first.branch}.lock`);
    await writeFile(refLock, '');
    await writeFile(join(gitDir, 'HEAD.lock'), '');
    await writeFile(join(first.path, 'work.txt'), 'agent work');
    await git(['add', 'work.txt'], { cwd: first.path });
    // As the agent of the next run would find it: git refuses to move the branch.
    await expect(
      git(['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'x'], { cwd: first.path }),
    ).rejects.toThrow(/lock/);

    const again = await prepareWorktree(task(repo));
    expect(again.reused).toBe(true);
    expect(existsSync(refLock)).toBe(false);
    expect(existsSync(join(gitDir, 'HEAD.lock'))).toBe(false);
    await git(['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'x'], {
      cwd: again.path,
    });
  });

  it('finishes the branch update a git killed mid-commit left: the commit the lock names is kept', async () => {
    const repo = await clone(SMALL);
    const first = await prepareWorktree(task(repo));
    const gitDir = (await worktreeGitDir(first.path))!;
    const cwd = { cwd: first.path };
    await writeFile(join(first.path, 'work.txt'), 'agent work');
    await git(['add', 'work.txt'], cwd);
    // What `git commit` had done when it was killed: the commit object written, its id in the lock.
    const tree = (await git(['write-tree'], cwd)).trim();
    const env = {
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    };
    const commit = (
      await git(['commit-tree', tree, '-p', 'HEAD', '-m', 'agent commit'], {
        ...cwd,
        env: { ...process.env, ...env },
      })
    ).trim();
    const refLock = join(repo.checkoutPath, '.git', 'refs', 'heads', `${first.branch}.lock`);
    await writeFile(refLock, `${commit}\n`);

    const again = await prepareWorktree(task(repo));
    expect(again.reused).toBe(true);
    expect(existsSync(refLock)).toBe(false);
    expect((await git(['rev-parse', 'HEAD'], { cwd: again.path })).trim()).toBe(commit);
    expect(await statusPorcelain(again.path)).toEqual([]);
    expect(existsSync(join(gitDir, 'HEAD.lock'))).toBe(false);
  });
});
