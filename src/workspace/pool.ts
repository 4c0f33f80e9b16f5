/**
 * Reusing finished worktrees instead of deleting them and writing a new one (`reuse_worktrees`).
 * A clean worktree of a finished run (nothing uncommitted or untracked, no commit on no remote) has
 * its ignored files removed (`git clean -ffdx`, only when its last status listed any), is renamed
 * into the checkout's pool (`<checkout>.worktrees/.pool/<slot>`) and detached at its commit, and
 * its run's branch is deleted as before (after the checkout's lock is released: the pooled worktree
 * no longer has it checked out). A kill between the two leaves the branch, which holds nothing
 * (the worktree was clean, its commits on a remote): a later run of the task re-cuts it, as it
 * does any branch an earlier run left. The next task on the checkout takes one from the pool: renamed to the task's own path,
 * then `git checkout -f -b <task branch> <fresh base commit>` in it, which writes only the files
 * that differ. Git's records follow every rename (the registration's `gitdir` file, the documented
 * back-pointer of a linked worktree), so `git worktree prune` never forgets a pooled worktree.
 *
 * What a kill can leave is never reused:
 * - A worktree is ready in the pool only while `<slot>.ready` (its commit and registration) exists;
 *   the record is written last and a task claims it by deleting it, so two tasks (or processes)
 *   never take one slot.
 * - While a worktree moves into or out of the pool, a marker (`curupira-repoint`) sits in its git
 *   folder (`.git/worktrees/<id>/`), written before the first step and removed after the last. A
 *   pooled worktree with the marker, without a record, or whose HEAD or registration does not match
 *   its record is removed (the first time a process touches the pool, and when a task would take
 *   it); a worktree at a task's path with the marker is half made (`halfMadeReason`) and recreated.
 *
 * The small files of a move (records, markers, git's `gitdir` and `HEAD`) are read and written with
 * the synchronous calls: a few microseconds each on a local disk, where each call through the
 * threadpool cost a round trip of the event loop, and a run's move makes about twenty.
 *
 * Only the files of a finished clean run are ever deleted here (its ignored files, or the whole
 * pooled copy): never a worktree that holds work, which `finishWorktree` keeps before it gets here.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../log.js';
import { gitResult } from './git.js';
import { canonicalPath, worktreesRoot } from './paths.js';
import { pathExists, removeTree } from './remove.js';

/** The marker in a worktree's git folder while it moves into or out of the pool. */
export const REPOINT_MARKER = 'curupira-repoint';
const READY_SUFFIX = '.ready';
/**
 * What a worktree's own git folder may hold that would follow it to the next task: an operation in
 * progress (a merge, rebase, cherry-pick, revert, bisect) or settings of its own. A worktree with
 * any of them is removed as before, never pooled.
 */
const CARRIED_STATE = [
  'MERGE_HEAD',
  'rebase-merge',
  'rebase-apply',
  'CHERRY_PICK_HEAD',
  'REVERT_HEAD',
  'sequencer',
  'BISECT_LOG',
  'config.worktree',
] as const;
const SLOT = /^wt-[0-9a-f]{12}$/;

/** `<checkout>.worktrees/.pool`: not a name an automation can have, so `gc` and tasks never meet it. */
export function poolDir(checkout: string): string {
  return join(worktreesRoot(checkout), '.pool');
}

interface PoolRecord {
  /** The commit the pooled worktree's HEAD is detached at. */
  head: string;
  /** Its git folder (`<checkout>/.git/worktrees/<id>`). */
  gitDir: string;
}

/** The git directory a linked worktree's `.git` file names, or null when there is none. */
export async function worktreeGitDir(path: string): Promise<string | null> {
  const text = readText(join(path, '.git'));
  const named = text === null ? undefined : /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  return named ? resolve(path, named) : null;
}

/** `<checkout>/.git/worktrees/<id>` of the worktree at `path`, or null when it is not one of the checkout's. */
async function ownGitDir(checkout: string, path: string): Promise<string | null> {
  const named = await worktreeGitDir(path);
  if (named === null) return null;
  const gitDir = await canonicalPath(named);
  if (dirname(gitDir) !== (await canonicalPath(join(checkout, '.git', 'worktrees')))) return null;
  return gitDir;
}

/** The text of a small file, or null when it cannot be read. */
function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The names in a folder, or null when it cannot be read. */
function namesIn(dir: string): string[] | null {
  try {
    return readdirSync(dir);
  } catch {
    return null;
  }
}

/** Points git's registration at the worktree's new folder (what `git worktree move` writes). */
async function recordLocation(gitDir: string, path: string): Promise<void> {
  writeFileSync(join(gitDir, 'gitdir'), `${join(await canonicalPath(path), '.git')}\n`);
}

async function readRecord(file: string): Promise<PoolRecord | null> {
  const text = readText(file);
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as Partial<PoolRecord>;
    if (typeof value.head === 'string' && typeof value.gitDir === 'string') {
      return { head: value.head, gitDir: value.gitDir };
    }
  } catch {
    // A torn record: the slot is not ready.
  }
  return null;
}

/** Checkouts whose pool this process has swept (at its first use of the pool). */
const swept = new Set<string>();

/**
 * Once per process and checkout, under the checkout's lock: removes every pooled worktree that is
 * not ready (no record, a marker, a record that does not match), and records without a worktree.
 * With `keep` false (reuse turned off), removes every pooled worktree.
 */
export async function sweepPool(checkout: string, log: Logger, keep = true): Promise<void> {
  if (swept.has(checkout)) return;
  swept.add(checkout);
  const dir = poolDir(checkout);
  const names = await readdir(dir).catch(() => null);
  if (names === null) return;
  let removed = 0;
  for (const name of names) {
    const path = join(dir, name);
    if (name.endsWith(READY_SUFFIX)) {
      const slot = name.slice(0, -READY_SUFFIX.length);
      if (!keep || !SLOT.test(slot) || !(await pathExists(join(dir, slot)))) await rm(path, { force: true });
      continue;
    }
    if (!SLOT.test(name)) continue;
    const record = keep ? await readRecord(join(dir, `${name}${READY_SUFFIX}`)) : null;
    if (record !== null && (await readyProblem(checkout, path, record)) === null) continue;
    await rm(join(dir, `${name}${READY_SUFFIX}`), { force: true });
    await discardPooled(checkout, path, log);
    removed += 1;
  }
  if (removed > 0) {
    await gitResult(['worktree', 'prune'], { cwd: checkout });
    log.info(
      { checkout, removed },
      keep ? 'Removed half-made worktrees from the pool' : 'Emptied the worktree pool',
    );
  }
}

/** Forgets that this process swept `checkout`'s pool (tests simulate a restart with it). */
export function forgetSweep(checkout: string): void {
  swept.delete(resolve(checkout));
}

/** Why the pooled worktree at `path` does not match its record, or null when it does. A few file reads. */
async function readyProblem(checkout: string, path: string, record: PoolRecord): Promise<string | null> {
  const gitDir = await ownGitDir(checkout, path);
  if (gitDir === null || gitDir !== record.gitDir) return 'its .git file does not name its registration';
  // One listing of its git folder instead of a lookup per name.
  const names = new Set(namesIn(gitDir) ?? []);
  if (names.has(REPOINT_MARKER)) return 'a move into or out of the pool never finished';
  if (names.has('locked')) return 'it is locked';
  if (!names.has('index')) return 'it has no index';
  for (const lock of ['index.lock', 'HEAD.lock']) {
    if (names.has(lock)) return `${lock} is left in its git folder`;
  }
  const head = (readText(join(gitDir, 'HEAD')) ?? '').trim();
  if (head !== record.head) return 'its HEAD is not the commit it was pooled at';
  const location = (readText(join(gitDir, 'gitdir')) ?? '').trim();
  if (resolve(location) !== join(await canonicalPath(path), '.git')) {
    return "git's registration names another folder";
  }
  return null;
}

/** Removes a pooled (or half-pooled) worktree's folder; the caller prunes git's records afterwards. */
async function discardPooled(checkout: string, path: string, log: Logger): Promise<void> {
  const gitDir = await ownGitDir(checkout, path);
  if (gitDir !== null) await rm(join(gitDir, 'locked'), { force: true });
  try {
    await removeTree(path, poolDir(checkout));
  } catch (error) {
    log.warn({ path, error: errorMessage(error) }, 'Could not remove a worktree from the pool');
  }
}

/** True when the pool holds fewer than `max` ready worktrees (one folder read, no lock needed to look). */
export async function poolHasRoom(checkout: string, max: number): Promise<boolean> {
  return max > 0 && (await readyCount(checkout)) < max;
}

async function readyCount(checkout: string): Promise<number> {
  const names = namesIn(poolDir(checkout)) ?? [];
  return names.filter((name) => name.endsWith(READY_SUFFIX)).length;
}

/**
 * Step 1 of pooling, outside the lock: removes the ignored files of a clean finished worktree
 * (untracked ones were ruled out by its inspection). False when git could not remove them all.
 */
export async function cleanForPool(path: string): Promise<boolean> {
  const result = await gitResult(['clean', '-ffdxq'], { cwd: path }).catch(() => null);
  return result?.exitCode === 0;
}

export interface PoolInResult {
  pooled: boolean;
}

/**
 * Step 2, under the checkout's lock: moves the cleaned worktree at `path` into the pool, detached
 * at `head`, ready for the next task. Not pooled (the caller removes it as usual) when the pool
 * already holds `max` worktrees or the worktree is not one of the checkout's own. The run's branch,
 * which no worktree has checked out any more, is deleted after the lock (`deleteRunBranch`).
 */
export async function poolWorktree(options: {
  checkout: string;
  path: string;
  branch: string;
  head: string;
  max: number;
  log: Logger;
}): Promise<PoolInResult> {
  const { checkout, path, branch, head, log } = options;
  await sweepPool(checkout, log);
  const no = { pooled: false };
  if ((await readyCount(checkout)) >= options.max) return no;
  const gitDir = await ownGitDir(checkout, path);
  if (gitDir === null || !/^[0-9a-f]{40,64}$/.test(head)) return no;
  const held = new Set(namesIn(gitDir) ?? []);
  for (const name of CARRIED_STATE) if (held.has(name)) return no;
  const dir = poolDir(checkout);
  const slot = `wt-${randomBytes(6).toString('hex')}`;
  const target = join(dir, slot);
  // From here until the record is written, a kill leaves a worktree the sweep removes.
  writeFileSync(join(gitDir, REPOINT_MARKER), `into the pool from ${path}\n`);
  try {
    mkdirSync(dir, { recursive: true });
    renameSync(path, target);
  } catch (error) {
    rmSync(join(gitDir, REPOINT_MARKER), { force: true });
    log.debug({ path, error: errorMessage(error) }, 'Could not move a worktree into the pool');
    return no;
  }
  await recordLocation(gitDir, target);
  // Detached at its commit, so the branch can go (what `git checkout --detach` writes).
  writeFileSync(join(gitDir, 'HEAD'), `${head}\n`);
  const record: PoolRecord = { head, gitDir };
  const temporary = join(dir, `.${slot}.tmp`);
  writeFileSync(temporary, `${JSON.stringify(record)}\n`);
  renameSync(temporary, join(dir, `${slot}${READY_SUFFIX}`));
  rmSync(join(gitDir, REPOINT_MARKER), { force: true });
  log.debug({ path, pooled: target, branch }, 'Moved a clean worktree into the pool');
  return { pooled: true };
}

/**
 * Step 3, without the checkout's lock: deletes the branch of a run whose worktree went into the
 * pool. No worktree has it checked out any more (the pooled one is detached) and no other task uses
 * it, and git locks the refs it changes itself (waiting `core.packedRefsTimeout` for another
 * command's), so concurrent runs of a checkout delete theirs at once. True when the branch is gone.
 */
export async function deleteRunBranch(checkout: string, branch: string, log: Logger): Promise<boolean> {
  const deleted = await gitResult(['branch', '-D', branch], { cwd: checkout });
  const branchDeleted =
    deleted.exitCode === 0 ||
    (await gitResult(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { cwd: checkout }))
      .exitCode !== 0;
  if (!branchDeleted) {
    log.warn({ checkout, branch, error: deleted.stderr.trim() }, `Could not delete branch ${branch}`);
  }
  return branchDeleted;
}

/**
 * A pooled worktree claimed and moved to its task's path, not yet switched to the task's branch
 * (`switchClaimed`, which needs no lock). Its move marker stays until the switch succeeds.
 */
export interface ClaimedWorktree {
  target: string;
  gitDir: string;
}

/**
 * Claims a clean worktree from the checkout's pool and moves it to `target`. Called under the
 * checkout's lock (a move changes the worktree's registration); the checkout of the task's branch,
 * the slow part, follows outside it (`switchClaimed`). Null when the pool has none.
 */
export async function takeFromPool(options: {
  checkout: string;
  target: string;
  log: Logger;
}): Promise<ClaimedWorktree | null> {
  const { checkout, target, log } = options;
  await sweepPool(checkout, log);
  const dir = poolDir(checkout);
  const names = namesIn(dir) ?? [];
  let discarded = false;
  try {
    for (const name of names.sort()) {
      if (!name.endsWith(READY_SUFFIX)) continue;
      const slot = name.slice(0, -READY_SUFFIX.length);
      if (!SLOT.test(slot)) continue;
      const recordFile = join(dir, name);
      const record = await readRecord(recordFile);
      // The claim: only the one that deletes the record takes the slot.
      try {
        rmSync(recordFile);
      } catch {
        continue;
      }
      const path = join(dir, slot);
      const problem =
        record === null ? 'its record is unreadable' : await readyProblem(checkout, path, record);
      if (problem !== null || record === null) {
        log.warn({ path, reason: problem }, 'Removed a pooled worktree that does not match its record');
        await discardPooled(checkout, path, log);
        discarded = true;
        continue;
      }
      if (await moveOutOfPool(checkout, path, target, record, log)) return { target, gitDir: record.gitDir };
      discarded = true;
      return null;
    }
    return null;
  } finally {
    if (discarded) await gitResult(['worktree', 'prune'], { cwd: checkout });
  }
}

/** Moves a claimed pooled worktree to `target`, its move marker written first. */
async function moveOutOfPool(
  checkout: string,
  path: string,
  target: string,
  record: PoolRecord,
  log: Logger,
): Promise<boolean> {
  writeFileSync(join(record.gitDir, REPOINT_MARKER), `out of the pool to ${target}\n`);
  try {
    mkdirSync(dirname(target), { recursive: true });
    renameSync(path, target);
  } catch (error) {
    log.warn({ path, target, error: errorMessage(error) }, 'Could not move a worktree out of the pool');
    await discardPooled(checkout, path, log);
    return false;
  }
  await recordLocation(record.gitDir, target);
  return true;
}

/**
 * Checks out a new `branch` at `commit` in a claimed worktree; no lock needed (only this task uses
 * it, and a checkout in one worktree changes only that worktree's HEAD and index and a new ref).
 * False when git refused (most often the branch exists: an earlier run left it); the caller then
 * removes the worktree under the lock (`dropClaimed`) and takes the usual path.
 */
export async function switchClaimed(
  claimed: ClaimedWorktree,
  branch: string,
  commit: string,
  log: Logger,
): Promise<boolean> {
  // No hooks: a `post-checkout` of the repository (husky's, say) must not run in curupira's place;
  // `git worktree add --no-checkout` + `reset --hard`, the usual path, runs none either.
  const checkedOut = await gitResult(
    [
      ...['-c', 'core.hooksPath=/dev/null', 'checkout', '-f', '-q', '--no-recurse-submodules'],
      ...['--no-track', '-b', branch, commit],
    ],
    { cwd: claimed.target },
  );
  if (checkedOut.exitCode !== 0) {
    log.debug(
      { target: claimed.target, branch, error: checkedOut.stderr.trim() },
      'Could not re-point a pooled worktree',
    );
    return false;
  }
  rmSync(join(claimed.gitDir, REPOINT_MARKER), { force: true });
  return true;
}

/** Removes a claimed worktree whose switch failed. Called under the checkout's lock. */
export async function dropClaimed(checkout: string, claimed: ClaimedWorktree): Promise<void> {
  const { target } = claimed;
  const removed = await gitResult(['worktree', 'remove', '--force', '--force', target], { cwd: checkout });
  if (removed.exitCode !== 0 && (await pathExists(target))) await removeTree(target, dirname(target));
  await gitResult(['worktree', 'prune'], { cwd: checkout });
}

/**
 * `curupira gc --all`: removes every ready pooled worktree of `checkout`, claiming each as a task
 * would (so a daemon running at the same time never loses one it took), under the checkout's lock
 * in this process. Returns how many were removed.
 */
export async function emptyPool(checkout: string, log: Logger): Promise<number> {
  const dir = poolDir(checkout);
  const names = await readdir(dir).catch(() => [] as string[]);
  let removed = 0;
  for (const name of names) {
    const slot = name.slice(0, -READY_SUFFIX.length);
    if (!name.endsWith(READY_SUFFIX) || !SLOT.test(slot)) continue;
    try {
      await rm(join(dir, name));
    } catch {
      continue;
    }
    await discardPooled(checkout, join(dir, slot), log);
    removed += 1;
  }
  if (removed > 0) await gitResult(['worktree', 'prune'], { cwd: checkout }).catch(() => null);
  await rmdir(dir).catch(() => undefined); // only when empty
  return removed;
}
