import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { ensureCheckout } from './checkout.js';
import { listKeptWorktrees, removeWorktrees } from './gc.js';
import { branchExists, currentBranch, git, revParse, statusPorcelain } from './git.js';
import { branchName, worktreePath } from './paths.js';
import { poolDir } from './pool.js';
import {
  commitFiles,
  createOrigin,
  isolateGitForTests,
  type OriginOptions,
  type OriginRepo,
} from './testing.js';
import { finishWorktree, inspectWorktree, prepareWorktree } from './worktree.js';

const log = silentLogger();
let origin: OriginRepo | undefined;

beforeAll(() => isolateGitForTests());
afterEach(async () => {
  await origin?.cleanup();
  origin = undefined;
});

async function cloned(options: OriginOptions = {}): Promise<OriginRepo> {
  origin = await createOrigin(options);
  await ensureCheckout({
    alias: 'sample',
    remote: origin.url,
    path: origin.checkoutPath,
    timeoutMs: 20_000,
    log,
  });
  return origin;
}

function task(repo: OriginRepo, taskId = '45') {
  return { checkoutPath: repo.checkoutPath, automationId: 'triage', taskType: 'github-issues', taskId, log };
}

describe('prepareWorktree', () => {
  it('adds the worktree at the documented path on its own branch from the freshly fetched default branch', async () => {
    const repo = await cloned();
    const latest = await repo.push({ 'CHANGELOG.md': 'pushed after the clone\n' });
    const prepared = await prepareWorktree(task(repo));

    expect(prepared.path).toBe(worktreePath(repo.checkoutPath, 'triage', 'github-issues', '45'));
    expect(prepared.path.startsWith(`${repo.checkoutPath}.worktrees/triage/github-issues-`)).toBe(true);
    expect(prepared.branch).toBe(branchName('triage', 'github-issues', '45'));
    expect(prepared).toMatchObject({
      reused: false,
      reusedBranch: false,
      baseRef: 'origin/main',
      baseCommit: latest,
    });
    expect(await currentBranch(prepared.path)).toBe(prepared.branch);
    expect(await revParse(prepared.path, 'HEAD')).toBe(latest);
    expect(await readFile(join(prepared.path, 'CHANGELOG.md'), 'utf8')).toBe('pushed after the clone\n');
    // The user's checkout is untouched: same branch, the new commit not checked out there.
    expect(await currentBranch(repo.checkoutPath)).toBe('main');
    expect(existsSync(join(repo.checkoutPath, 'CHANGELOG.md'))).toBe(false);
    // The branch does not track origin's default branch, so a stray `git push` cannot land there.
    const upstream = await git(['config', '--get-regexp', '^branch\\..*\\.merge$'], {
      cwd: repo.checkoutPath,
    }).catch(() => '');
    expect(upstream).not.toContain(prepared.branch);
  });

  it('follows origin when its default branch is not main', async () => {
    const repo = await cloned({ defaultBranch: 'trunk' });
    const prepared = await prepareWorktree(task(repo));
    expect(prepared.baseRef).toBe('origin/trunk');
    expect(await revParse(prepared.path, 'HEAD')).toBe(await revParse(repo.checkoutPath, 'origin/trunk'));
  });

  it('finds the default branch again when origin/HEAD was removed locally', async () => {
    const repo = await cloned({ defaultBranch: 'trunk' });
    await git(['remote', 'set-head', 'origin', '--delete'], { cwd: repo.checkoutPath });
    const prepared = await prepareWorktree(task(repo));
    expect(prepared.baseRef).toBe('origin/trunk');
  });

  it('reuses an existing worktree as it is, for a resumed run', async () => {
    const repo = await cloned();
    const first = await prepareWorktree(task(repo));
    await writeFile(join(first.path, 'half-done.txt'), 'in progress');
    const second = await prepareWorktree(task(repo));
    expect(second).toMatchObject({ path: first.path, branch: first.branch, reused: true });
    expect(await readFile(join(second.path, 'half-done.txt'), 'utf8')).toBe('in progress');
  });

  it('continues a leftover branch that holds unpushed commits instead of discarding them', async () => {
    const repo = await cloned();
    const first = await prepareWorktree(task(repo));
    const work = await commitFiles(first.path, { 'fix.txt': 'the fix' });
    await rm(first.path, { recursive: true, force: true });

    const again = await prepareWorktree(task(repo));
    expect(again).toMatchObject({ reused: false, reusedBranch: true });
    expect(await revParse(again.path, 'HEAD')).toBe(work);
    expect(await readFile(join(again.path, 'fix.txt'), 'utf8')).toBe('the fix');
  });

  it('re-cuts a leftover branch with nothing unpushed from the current default branch', async () => {
    const repo = await cloned();
    const first = await prepareWorktree(task(repo));
    await rm(first.path, { recursive: true, force: true });
    const latest = await repo.push({ 'new.txt': 'new upstream work\n' });

    const again = await prepareWorktree(task(repo));
    expect(again).toMatchObject({ reused: false, reusedBranch: false });
    expect(await revParse(again.path, 'HEAD')).toBe(latest);
  });

  it('moves a non-empty folder git does not know aside, keeping its files, and prepares the worktree', async () => {
    const repo = await cloned();
    const target = worktreePath(repo.checkoutPath, 'triage', 'github-issues', '45');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, 'someone-elses.txt'), 'keep me');
    await writeFile(join(target, '.git'), 'gitdir: /nowhere/at/all\n');

    const prepared = await prepareWorktree(task(repo));
    expect(prepared).toMatchObject({ path: target, reused: false });
    expect(await statusPorcelain(target)).toEqual([]);
    expect(existsSync(join(target, 'someone-elses.txt'))).toBe(false);
    const aside = (await readdir(dirname(target))).filter((name) => name.includes('.stale-'));
    expect(aside).toHaveLength(1);
    expect(aside[0]).toMatch(/^\.github-issues-[0-9a-f]{64}\.stale-\d{8}T\d{6}Z$/);
    expect(await readFile(join(dirname(target), aside[0]!, 'someone-elses.txt'), 'utf8')).toBe('keep me');
  });

  it('removes a folder git does not know that holds only a .git file pointing nowhere', async () => {
    const repo = await cloned();
    const target = worktreePath(repo.checkoutPath, 'triage', 'github-issues', '45');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, '.git'), 'gitdir: /nowhere/at/all\n');
    const prepared = await prepareWorktree(task(repo));
    expect(prepared.reused).toBe(false);
    expect(await readdir(dirname(target))).toEqual([basename(target)]);
    expect(await readFile(join(target, 'README.md'), 'utf8')).toBe('# sample\n');
  });

  it('lets the tasks one poll found share one fetch, and fetches again for tasks found later', async () => {
    const repo = await cloned();
    const polled = Date.now();
    const first = await prepareWorktree({ ...task(repo, '1'), freshSince: polled });
    const pushed = await repo.push({ 'late.txt': 'pushed after the first fetch\n' });
    // Found by the same poll: the fetch the first task made serves it.
    const second = await prepareWorktree({ ...task(repo, '2'), freshSince: polled });
    expect(second.baseCommit).toBe(first.baseCommit);
    expect(await revParse(second.path, 'HEAD')).toBe(first.baseCommit);
    // Found by a later poll, or given no discovery time: fetched again.
    const third = await prepareWorktree({ ...task(repo, '3'), freshSince: Date.now() + 1 });
    expect(third.baseCommit).toBe(pushed);
    const late = await repo.push({ 'later.txt': 'and another\n' });
    expect((await prepareWorktree(task(repo, '4'))).baseCommit).toBe(late);
  });

  it('prepares worktrees for several tasks at once without git lock errors', async () => {
    const repo = await cloned();
    const prepared = await Promise.all(['1', '2', '3', '4'].map((id) => prepareWorktree(task(repo, id))));
    expect(new Set(prepared.map((p) => p.path)).size).toBe(4);
    for (const p of prepared) {
      expect(await currentBranch(p.path)).toBe(p.branch);
      expect(await statusPorcelain(p.path)).toEqual([]);
      expect(existsSync(join(p.path, 'README.md'))).toBe(true);
    }
  });
});

describe('finishWorktree', () => {
  it('removes a clean worktree and its branch', async () => {
    const repo = await cloned();
    const prepared = await prepareWorktree(task(repo));
    const finished = await finishWorktree({ checkoutPath: repo.checkoutPath, ...prepared, log });
    expect(finished).toMatchObject({ kept: false, removed: true, unpushedCommits: 0, dirty: false });
    expect(existsSync(prepared.path)).toBe(false);
    expect(existsSync(`${repo.checkoutPath}.worktrees`)).toBe(false);
    expect(await branchExists(repo.checkoutPath, prepared.branch)).toBe(false);
  });

  it('finishes several clean worktrees of one checkout at once, leaving no folder, registration or branch', async () => {
    const repo = await cloned();
    const prepared = await Promise.all(['1', '2', '3', '4'].map((id) => prepareWorktree(task(repo, id))));
    const finished = await Promise.all(
      prepared.map((p) => finishWorktree({ checkoutPath: repo.checkoutPath, ...p, log })),
    );
    for (const f of finished) expect(f).toMatchObject({ kept: false, removed: true });
    expect(existsSync(`${repo.checkoutPath}.worktrees`)).toBe(false);
    const registered = await git(['worktree', 'list', '--porcelain'], { cwd: repo.checkoutPath });
    expect(registered.match(/^worktree /gm)).toHaveLength(1);
    for (const p of prepared) expect(await branchExists(repo.checkoutPath, p.branch)).toBe(false);
  });

  it('keeps a worktree with an unpushed commit, and its branch, and says why', async () => {
    const repo = await cloned();
    const prepared = await prepareWorktree(task(repo));
    await commitFiles(prepared.path, { 'fix.txt': 'the fix' });
    const finished = await finishWorktree({ checkoutPath: repo.checkoutPath, ...prepared, log });
    expect(finished).toMatchObject({ kept: true, unpushedCommits: 1, dirty: false });
    expect(finished.reason).toBe('worktree holds 1 unpushed commit');
    expect(existsSync(join(prepared.path, 'fix.txt'))).toBe(true);
    expect(await branchExists(repo.checkoutPath, prepared.branch)).toBe(true);
  });

  it('keeps a clean worktree and its branch with keepAlways (never pooled), for gc to list and remove', async () => {
    const repo = await cloned();
    const prepared = await prepareWorktree(task(repo));
    const finished = await finishWorktree({
      checkoutPath: repo.checkoutPath,
      ...prepared,
      log,
      pool: 2,
      keepAlways: true,
    });
    expect(finished).toMatchObject({ kept: true, removed: false, forInspection: true, dirty: false });
    expect(finished.pooled).toBeUndefined();
    expect(finished.reason).toBe('kept for inspection (keep_worktree = "always")');
    expect(existsSync(prepared.path)).toBe(true);
    expect(existsSync(poolDir(repo.checkoutPath))).toBe(false);
    expect(await branchExists(repo.checkoutPath, prepared.branch)).toBe(true);
    const kept = await listKeptWorktrees([repo.checkoutPath]);
    expect(kept.map((w) => w.path)).toEqual([prepared.path]);
    const gc = await removeWorktrees(kept, { dryRun: false });
    expect(gc.failed).toEqual([]);
    expect(existsSync(prepared.path)).toBe(false);
    expect(await branchExists(repo.checkoutPath, prepared.branch)).toBe(false);
  });

  it('keeps a worktree whose only change is an untracked file', async () => {
    const repo = await cloned();
    const prepared = await prepareWorktree(task(repo));
    await writeFile(join(prepared.path, 'notes.txt'), 'draft');
    expect(await inspectWorktree(prepared.path, prepared.branch)).toEqual({
      unpushedCommits: 0,
      dirty: true,
      changedFiles: ['notes.txt'],
      head: prepared.baseCommit,
      ignored: false,
    });
    const finished = await finishWorktree({ checkoutPath: repo.checkoutPath, ...prepared, log });
    expect(finished).toMatchObject({
      kept: true,
      unpushedCommits: 0,
      dirty: true,
      changedFiles: ['notes.txt'],
    });
    expect(finished.reason).toBe('worktree holds 1 uncommitted change');
    expect(existsSync(join(prepared.path, 'notes.txt'))).toBe(true);
  });

  it('finds commits and changes from one status when HEAD left the base, with renames and spaces', async () => {
    const repo = await cloned({ files: { 'README.md': '# sample\n', 'old name.txt': 'x\n' } });
    const prepared = await prepareWorktree(task(repo));
    const base = prepared.baseCommit;
    expect((await inspectWorktree(prepared.path, prepared.branch, base)).unpushedCommits).toBe(0);
    await commitFiles(prepared.path, { 'fix.txt': 'the fix\n' });
    await git(['mv', 'old name.txt', 'new name.txt'], { cwd: prepared.path });
    await writeFile(join(prepared.path, 'README.md'), 'edited\n');
    await writeFile(join(prepared.path, 'draft notes.md'), 'draft\n');
    const inspection = await inspectWorktree(prepared.path, prepared.branch, base);
    expect(inspection.unpushedCommits).toBe(1);
    expect(inspection.head).toBe(await revParse(prepared.path, 'HEAD'));
    expect(inspection.changedFiles.sort()).toEqual(['README.md', 'draft notes.md', 'new name.txt']);
    // Detached on the base with the commit left on the branch: the branch still counts.
    await git(['checkout', '-q', '-f', '--detach', base!], { cwd: prepared.path });
    await git(['clean', '-qfd'], { cwd: prepared.path });
    expect(await inspectWorktree(prepared.path, prepared.branch, base)).toMatchObject({
      unpushedCommits: 1,
      dirty: false,
      head: base,
    });
  });

  it('does not count commits the agent pushed, nor files .gitignore hides', async () => {
    const repo = await cloned({ files: { 'README.md': '# sample\n', '.gitignore': '*.log\n' } });
    const prepared = await prepareWorktree(task(repo));
    await commitFiles(prepared.path, { 'fix.txt': 'the fix' });
    await git(['push', '-q', 'origin', prepared.branch], { cwd: prepared.path });
    await writeFile(join(prepared.path, 'debug.log'), 'noise');
    const finished = await finishWorktree({ checkoutPath: repo.checkoutPath, ...prepared, log });
    expect(finished).toMatchObject({ kept: false, removed: true, unpushedCommits: 0, dirty: false });
    expect(existsSync(prepared.path)).toBe(false);
  });

  it('still sees commits made after the agent switched to another branch', async () => {
    const repo = await cloned();
    const prepared = await prepareWorktree(task(repo));
    await git(['switch', '-q', '-c', 'my-own-name'], { cwd: prepared.path });
    await commitFiles(prepared.path, { 'fix.txt': 'the fix' });
    const finished = await finishWorktree({ checkoutPath: repo.checkoutPath, ...prepared, log });
    expect(finished).toMatchObject({ kept: true, unpushedCommits: 1 });
  });

  it('refuses paths outside the worktrees folder and branches that are not curupira’s', async () => {
    const repo = await cloned();
    const prepared = await prepareWorktree(task(repo));
    await expect(
      finishWorktree({
        checkoutPath: repo.checkoutPath,
        path: repo.checkoutPath,
        branch: prepared.branch,
        log,
      }),
    ).rejects.toThrow(/is outside/);
    await expect(
      finishWorktree({ checkoutPath: repo.checkoutPath, path: prepared.path, branch: 'main', log }),
    ).rejects.toThrow(/not a curupira branch/);
    expect(existsSync(prepared.path)).toBe(true);
    expect(await branchExists(repo.checkoutPath, 'main')).toBe(true);
  });
});
