/**
 * One worktree per task, beside the checkout, on a branch of its own cut from origin's default
 * branch. After the run the worktree and branch are removed, unless they hold work that exists
 * nowhere else (commits on no remote, uncommitted or untracked files): then both are kept. With
 * `pool` / `reuse` (`reuse_worktrees`), a clean one goes into the checkout's pool instead and the
 * next task re-points it (pool.ts).
 */
import { rmdirSync, rmSync } from 'node:fs';
import { lstat, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage, WorkspaceError } from '../core/errors.js';
import type { Logger } from '../log.js';
import { runCommand } from '../process/command.js';
import {
  branchExists,
  countUnpushedCommits,
  git,
  gitResult,
  listTreeFiles,
  listWorktrees,
  revParse,
  scrub,
  statusPorcelain,
  statusWithBranch,
  type WorktreeEntry,
} from './git.js';
import { repoLockKey, withLock } from './lock.js';
import {
  assertInside,
  branchName,
  canonicalPath,
  companionFiles,
  isLexicallyInside,
  worktreePath,
  worktreesRoot,
} from './paths.js';
import {
  type ClaimedWorktree,
  cleanForPool,
  deleteRunBranch,
  dropClaimed,
  poolHasRoom,
  poolWorktree,
  REPOINT_MARKER,
  sweepPool,
  switchClaimed,
  takeFromPool,
  worktreeGitDir,
} from './pool.js';
import { pathExists, removeTree } from './remove.js';

export { worktreeGitDir } from './pool.js';

const DEFAULT_FETCH_TIMEOUT_MS = 5 * 60_000;
const BRANCH_PREFIX = 'curupira/';
/** `<automation dir>/.<name>.stale-<time>`: a folder moved out of a task's way, for `gc`. */
const STALE_INFIX = '.stale-';

export interface PrepareWorktreeOptions {
  checkoutPath: string;
  /**
   * Told the worktree's path as soon as it is registered there (its folder and git directories in
   * place, its files still being written), so that work that needs only the path can start
   * meanwhile (a sandbox's start); told null when that registration is dropped and redone.
   */
  onLocated?(path: string | null): void;
  automationId: string;
  taskType: string;
  taskId: string;
  log: Logger;
  /** Deadline for each network step (fetch, set-head), default 5 minutes. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Epoch milliseconds (the time the task was discovered): a fetch of this checkout that this
   * process started at or after it, less than a minute ago, is fresh enough and is not repeated, so
   * the tasks one poll round found share one fetch. Without it, every call fetches.
   */
  freshSince?: number;
  /**
   * Take a clean worktree a finished run left in the checkout's pool (see pool.ts) instead of adding
   * a new one, when there is one (`reuse_worktrees`). Without it, the pool is emptied.
   */
  reuse?: boolean;
  /**
   * A restart on another host (issue 17): when the remote has the task's branch (the last pushed
   * checkpoint of the lost attempt), a new branch starts at its tip instead of the base.
   */
  continuePushed?: boolean;
  /** The branch checkpoints are pushed to (a delivery's readable name); default the task's branch. */
  pushedBranch?: string;
  /**
   * Cut the new branch from another commit than origin's default branch (issue 25): a remote ref
   * fetched into a remote-tracking ref (`refs/pull/7/head` → `refs/remotes/origin/pull/7/head`, or a
   * `pr_base_branch`), at `commit` when that commit is there (the head the prompt names), else at
   * the ref's tip. A missing ref is an error that names it.
   */
  markReviewed?: StartFrom;
}

export interface StartFrom {
  /** The ref on the remote: `refs/pull/7/head`, `refs/heads/release`. */
  remoteRef: string;
  /** Where it is fetched to: `refs/remotes/origin/pull/7/head`, `refs/remotes/origin/release`. */
  trackingRef: string;
  /** The commit to start at, when it is in what was fetched (else the tip). */
  commit?: string;
  /** What it is, for messages: `pull request #7's head`, `pr_base_branch release`. */
  label: string;
}

export interface PreparedWorktree {
  path: string;
  branch: string;
  /** The worktree folder already existed and was reused as it is (a resumed run); nothing was fetched. */
  reused: boolean;
  /** The branch already existed with commits on no remote, so the new worktree continues it. */
  reusedBranch: boolean;
  /** A finished run's clean worktree was taken from the pool and re-pointed: a new branch, fresh files. */
  recycled: boolean;
  /** The remote-tracking ref the branch was cut from (`origin/main`); null when reused and unknown. */
  baseRef: string | null;
  /** The commit of `baseRef` when the worktree was prepared. */
  baseCommit: string | null;
}

export interface DefaultBranch {
  /** `origin/main`. */
  ref: string;
  /** `refs/remotes/origin/main`. */
  fullRef: string;
  commit: string;
}

/**
 * The longest a fetch serves later tasks, however early they were found: a task that waited in the
 * queue (behind agents that take minutes) still starts from a recent origin.
 */
const FETCH_REUSE_MS = 60_000;

/** Per checkout: when this process last started a fetch that succeeded, and the base it found. */
const lastFetch = new Map<string, { startedAt: number; base: DefaultBranch }>();

/** Forgets the last fetch of `checkout` (it was cloned again), so the next task fetches. */
export function forgetFetch(checkout: string): void {
  lastFetch.delete(resolve(checkout));
}

/**
 * origin's default branch after a fetch: the last one, when it started at or after `freshSince`,
 * else a new one. Called under the checkout's lock, so concurrent tasks wait for one fetch.
 */
async function fetchedBase(
  checkout: string,
  freshSince: number | undefined,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<DefaultBranch> {
  const last = lastFetch.get(checkout);
  const startedAt = Date.now();
  if (
    last &&
    freshSince !== undefined &&
    last.startedAt >= freshSince &&
    startedAt - last.startedAt <= FETCH_REUSE_MS
  )
    return last.base;
  await git(['fetch', 'origin'], { cwd: checkout, ...options });
  const base = await resolveDefaultBranch(checkout, { network: true, ...options });
  lastFetch.set(checkout, { startedAt, base });
  return base;
}

/**
 * Fetches origin (once per poll round, see `freshSince`) and adds the task's worktree at its fixed path and branch, or reuses the worktree
 * when its folder is already there. A branch left behind by an earlier run is continued when it holds
 * commits that are on no remote (they are never thrown away), and otherwise re-cut from the fresh
 * default branch, since it holds nothing worth keeping and a stale base only confuses the agent.
 */
/** The tip of `origin/<branch>` after a fetch, or null when the remote has no such branch. */
async function remoteBranchTip(checkout: string, branch: string): Promise<string | null> {
  const found = await gitResult(
    ['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${branch}^{commit}`],
    {
      cwd: checkout,
    },
  );
  return found.exitCode === 0 ? found.stdout.trim() || null : null;
}

export async function prepareWorktree(options: PrepareWorktreeOptions): Promise<PreparedWorktree> {
  let registered = await registerWorktree(options);
  const { claimed } = registered;
  if (claimed) {
    // The slow part of taking a pooled worktree, the checkout, runs without the lock, so that
    // concurrent tasks of one checkout switch their worktrees at once.
    const { prepared } = registered;
    const fields = { automation: options.automationId, path: prepared.path, branch: prepared.branch };
    const switching = switchClaimed(claimed, prepared.branch, prepared.baseCommit ?? 'HEAD', options.log);
    options.onLocated?.(prepared.path);
    if (await switching) {
      options.log.debug({ ...fields, base: prepared.baseRef }, 'Prepared worktree from the pool');
      return prepared;
    }
    options.onLocated?.(null);
    const checkout = resolve(options.checkoutPath);
    await withLock(repoLockKey(checkout), () => dropClaimed(checkout, claimed));
    registered = await registerWorktree(options, false);
  }
  const { prepared, unpopulated } = registered;
  // Writing the files, the slow part, needs no lock: the worktree is registered and unlocked, and
  // only this task uses it. A kill here leaves it without an index, which the next attempt finds
  // (`halfMadeReason`) and recreates.
  if (unpopulated) {
    const writing = git(['reset', '--hard', '--no-recurse-submodules', '--quiet'], { cwd: prepared.path });
    options.onLocated?.(prepared.path);
    await writing;
    options.log.debug(
      {
        automation: options.automationId,
        path: prepared.path,
        branch: prepared.branch,
        base: prepared.baseRef,
      },
      'Prepared worktree',
    );
  }
  return prepared;
}

/**
 * The part of `prepareWorktree` that takes the checkout's lock. In the common case the worktree is
 * registered without its files (`unpopulated`), which the caller writes after the lock is released.
 */
async function registerWorktree(
  options: PrepareWorktreeOptions,
  pool = options.reuse === true,
): Promise<{ prepared: PreparedWorktree; unpopulated: boolean; claimed?: ClaimedWorktree }> {
  const { automationId, taskType, taskId, log, signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const checkout = resolve(options.checkoutPath);
  const branch = branchName(automationId, taskType, taskId);
  const target = worktreePath(checkout, automationId, taskType, taskId);
  await assertInside(worktreesRoot(checkout), target, 'worktree path');
  const fields = { automation: automationId, path: target, branch };

  return withLock(repoLockKey(checkout), async () => {
    // Once per process: pooled worktrees a kill left half moved are removed (all of them without reuse).
    await sweepPool(checkout, log, options.reuse === true);
    // Only when the folder is already there does anything beyond the one `worktree add` run.
    if (await pathExists(target)) {
      const entry = await findWorktree(checkout, target);
      if (entry && !entry.prunable) {
        const damage = await halfMadeReason(target, entry, log);
        if (damage === null) {
          const base = await resolveDefaultBranch(checkout, { network: false }).catch(() => null);
          log.info(fields, 'Reusing existing worktree');
          const prepared = {
            path: target,
            branch,
            reused: true,
            reusedBranch: false,
            recycled: false,
            baseRef: base?.ref ?? null,
            baseCommit: base?.commit ?? null,
          };
          return { prepared, unpopulated: false };
        }
        await discardHalfMade(checkout, target, entry, damage, log);
      } else {
        await clearUnknownFolder(target, log);
      }
    }

    const fetched = await fetchedBase(checkout, options.freshSince, {
      timeoutMs,
      ...(signal ? { signal } : {}),
    });
    const start = options.markReviewed
      ? await fetchStart(checkout, options.markReviewed, { timeoutMs, ...(signal ? { signal } : {}) })
      : fetched;
    const pushedTip = options.continuePushed
      ? await remoteBranchTip(checkout, options.pushedBranch ?? branch)
      : null;
    if (pushedTip) log.info({ ...fields, commit: pushedTip }, 'Continuing from the pushed checkpoint');
    const base = pushedTip ? { ...start, commit: pushedTip } : start;
    // With reuse, a finished run's clean worktree from the pool: moved here under the lock, then
    // switched to a new branch at the commit the fetch found outside it (`prepareWorktree`), writing
    // only the files that differ.
    const claimed = pool ? await takeFromPool({ checkout, target, log }) : null;
    if (claimed) {
      const prepared = {
        path: target,
        branch,
        reused: false,
        reusedBranch: false,
        recycled: true,
        baseRef: base.ref,
        baseCommit: base.commit,
      };
      return { prepared, unpopulated: false, claimed };
    }
    // The common case in one step: a new branch and worktree, at the commit the fetch found, its
    // files written after the lock is released. When that fails (a branch or a registration left
    // behind by an earlier run), take the careful path.
    const fresh = await gitResult(
      ['worktree', 'add', '--no-checkout', '--no-track', '-b', branch, target, base.commit],
      { cwd: checkout },
    );
    if (fresh.exitCode === 0) {
      const prepared = {
        path: target,
        branch,
        reused: false,
        reusedBranch: false,
        recycled: false,
        baseRef: base.ref,
        baseCommit: base.commit,
      };
      return { prepared, unpopulated: true };
    }
    lastFetch.delete(checkout); // the next task fetches again, whatever went wrong here
    // Forget registrations whose folders were deleted by hand; they would block `worktree add`.
    await git(['worktree', 'prune'], { cwd: checkout });
    // A registration `git worktree add` left locked ("initializing") survives the prune; unlock it.
    const stuck = await findWorktree(checkout, target);
    if (stuck?.locked && !(await pathExists(target))) {
      await unlockRegistration(checkout, target);
      await git(['worktree', 'prune'], { cwd: checkout });
    }

    let reusedBranch = false;
    if (!(await branchExists(checkout, branch))) {
      await git(['worktree', 'add', '--no-track', '-b', branch, target, base.commit], { cwd: checkout });
    } else if ((await countUnpushedCommits(checkout, [`refs/heads/${branch}`])) > 0) {
      await git(['worktree', 'add', target, branch], { cwd: checkout });
      reusedBranch = true;
      log.info(fields, 'Continuing existing branch with unpushed commits');
    } else {
      await git(['worktree', 'add', '--no-track', '-B', branch, target, base.commit], { cwd: checkout });
    }
    log.debug({ ...fields, base: base.ref }, 'Prepared worktree');
    const prepared = {
      path: target,
      branch,
      reused: false,
      reusedBranch,
      recycled: false,
      baseRef: base.ref,
      baseCommit: base.commit,
    };
    return { prepared, unpopulated: false };
  });
}

/** The commit of `origin/<branch>` as last fetched, or null. */
export async function remoteTrackingCommit(checkout: string, branch: string): Promise<string | null> {
  return revParse(checkout, `refs/remotes/origin/${branch}`);
}

/** The commit a `markReviewed` names, fetched from origin into its remote-tracking ref. */
async function fetchStart(
  checkout: string,
  start: StartFrom,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<DefaultBranch> {
  const fetched = await gitResult(
    ['fetch', '--quiet', '--no-tags', 'origin', `+${start.remoteRef}:${start.trackingRef}`],
    { cwd: checkout, ...options },
  );
  if (fetched.exitCode !== 0) {
    throw new WorkspaceError(
      `could not fetch ${start.label} (${start.remoteRef}) from origin: ${scrub(fetched.stderr.trim()) || `git exited ${fetched.exitCode}`}`,
    );
  }
  const tip = await revParse(checkout, start.trackingRef);
  if (!tip) throw new WorkspaceError(`${start.label} (${start.remoteRef}) is not on origin`);
  let commit = tip;
  if (start.commit && start.commit !== tip) {
    const known = await gitResult(['cat-file', '-e', `${start.commit}^{commit}`], { cwd: checkout });
    if (known.exitCode === 0) commit = start.commit;
  }
  return { ref: start.trackingRef.replace(/^refs\/remotes\//, ''), fullRef: start.trackingRef, commit };
}

/**
 * origin's default branch: `refs/remotes/origin/HEAD`; when that is unset, ask the remote
 * (`git remote set-head origin --auto`, only with `network`); then `origin/main`, then `origin/master`.
 */
export async function resolveDefaultBranch(
  checkout: string,
  options: { network: boolean; timeoutMs?: number; signal?: AbortSignal },
): Promise<DefaultBranch> {
  // One process for the usual case: origin/HEAD's target and its commit.
  const quick = await gitResult(
    ['rev-parse', 'refs/remotes/origin/HEAD^{commit}', '--symbolic-full-name', 'refs/remotes/origin/HEAD'],
    { cwd: checkout },
  );
  const [commit, target] = quick.stdout.trim().split('\n');
  if (quick.exitCode === 0 && commit && target?.startsWith('refs/remotes/origin/')) {
    return { ref: target.replace(/^refs\/remotes\//, ''), fullRef: target, commit };
  }
  let head = await originHead(checkout);
  if (head === null && options.network) {
    await gitResult(['remote', 'set-head', 'origin', '--auto'], {
      cwd: checkout,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    head = await originHead(checkout);
  }
  const candidates = [head, 'refs/remotes/origin/main', 'refs/remotes/origin/master'];
  for (const fullRef of candidates) {
    if (fullRef === null) continue;
    const commit = await revParse(checkout, fullRef);
    if (commit) return { ref: fullRef.replace(/^refs\/remotes\//, ''), fullRef, commit };
  }
  throw new WorkspaceError(
    `could not find origin's default branch in ${checkout}: refs/remotes/origin/HEAD is not set and neither origin/main nor origin/master exists; run 'git remote set-head origin --auto' there`,
  );
}

async function originHead(checkout: string): Promise<string | null> {
  const result = await gitResult(['symbolic-ref', '--quiet', 'refs/remotes/origin/HEAD'], { cwd: checkout });
  const ref = result.stdout.trim();
  return result.exitCode === 0 && ref.startsWith('refs/remotes/origin/') ? ref : null;
}

/** The entry git keeps for the worktree at `path` in the repository at `checkout`, if any. */
export async function findWorktree(checkout: string, path: string): Promise<WorktreeEntry | null> {
  const wanted = await canonicalPath(path);
  for (const entry of await listWorktrees(checkout)) {
    if ((await canonicalPath(entry.path)) === wanted) return entry;
  }
  return null;
}

export interface WorktreeInspection {
  /** Commits reachable from the branch or the worktree's HEAD that are on no remote-tracking ref. */
  unpushedCommits: number;
  /** Staged, unstaged or untracked changes (files matched by `.gitignore` do not count). */
  dirty: boolean;
  changedFiles: string[];
  /** The commit HEAD names, or null when it is unborn. */
  head: string | null;
  /**
   * False when its status showed no file `.gitignore` hides, so there is nothing for `git clean` to
   * remove before it is pooled; absent when not known.
   */
  ignored?: boolean;
}

/**
 * What the worktree holds that exists nowhere else. HEAD counts as well as the branch, so commits
 * an agent made after switching or detaching are not missed. One `git status` in the usual case:
 * `rev-list` runs only when HEAD moved from `baseCommit` (the commit the worktree was cut from, which
 * came from origin) or is not on the task's branch.
 */
export async function inspectWorktree(
  path: string,
  branch: string,
  baseCommit?: string | null,
): Promise<WorktreeInspection> {
  // A `.git` entry at `path` makes it the top level for git; without one, git would answer for
  // whatever repository encloses the folder.
  if (!(await pathExists(join(path, '.git')))) {
    throw new WorkspaceError(`not a Git worktree: ${path}`, { code: 'workspace_path' });
  }
  const status = await statusWithBranch(path);
  let refs: string[];
  if (status.branch === branch) refs = ['HEAD'];
  else {
    refs = status.head ? ['HEAD'] : [];
    if (await branchExists(path, branch)) refs.push(`refs/heads/${branch}`);
  }
  const atBase = status.branch === branch && status.head !== null && status.head === baseCommit;
  const unpushedCommits = atBase ? 0 : await countUnpushedCommits(path, refs);
  return {
    unpushedCommits,
    dirty: status.changedFiles.length > 0,
    changedFiles: status.changedFiles,
    head: status.head,
    ignored: status.ignored,
  };
}

export interface FinishWorktreeOptions {
  checkoutPath: string;
  path: string;
  branch: string;
  log: Logger;
  /** What to call the task in log lines (its identity key); defaults to the branch. */
  key?: string;
  /** The commit the worktree was cut from, when known: spares a `rev-list` when HEAD is still there. */
  baseCommit?: string | null;
  /**
   * Keep up to this many clean finished worktrees in the checkout's pool for later tasks
   * (`reuse_worktrees`; pool.ts) instead of deleting them; 0 or absent: delete as before.
   */
  pool?: number;
  /** Keep the worktree and its branch whatever they hold (`keep_worktree = "always"`): never pooled or removed. */
  keepAlways?: boolean;
}

export interface FinishedWorktree extends WorktreeInspection {
  /** Worktree and branch were left in place because they hold work found nowhere else. */
  kept: boolean;
  /** The (clean) worktree went into the checkout's pool; its branch was deleted as usual. */
  pooled?: boolean;
  /** Both the worktree and the branch are gone. */
  removed: boolean;
  /** Why it was kept, in words for the run record. */
  reason?: string;
  /** Kept because `keepAlways` asked, whatever it holds. */
  forInspection?: boolean;
}

/**
 * Removes the task's worktree and branch, or keeps both when they hold unpushed commits or
 * uncommitted changes. Cleanup failures are logged, never thrown; a worktree that cannot be
 * inspected is kept rather than risk deleting work.
 */
export async function finishWorktree(options: FinishWorktreeOptions): Promise<FinishedWorktree> {
  const { branch, log } = options;
  const checkout = resolve(options.checkoutPath);
  const path = resolve(options.path);
  const root = worktreesRoot(checkout);
  if (!branch.startsWith(BRANCH_PREFIX)) {
    throw new WorkspaceError(`refusing to delete branch ${branch}: not a curupira branch`, {
      code: 'workspace_path',
    });
  }
  await assertInside(root, path, 'worktree path');
  const key = options.key ?? branch;
  const fields = { key, path, branch };

  // Looking needs no lock (only this run uses its worktree; git reads nothing another command
  // half-writes), so tasks on one checkout inspect theirs at the same time.
  const present = await pathExists(path);
  let inspection: WorktreeInspection;
  try {
    inspection = await inspectForFinish(checkout, path, branch, present, options.baseCommit);
  } catch (error) {
    const reason = `could not inspect the worktree: ${errorMessage(error)}`;
    log.warn({ ...fields, error: errorMessage(error) }, `Could not clean up worktree for ${key}`);
    const nothing = { unpushedCommits: 0, dirty: false, changedFiles: [], head: null };
    return { kept: true, removed: false, ...nothing, reason };
  }
  if (options.keepAlways && present) {
    log.info({ ...fields }, 'Kept worktree for inspection (keep_worktree = "always")');
    const reason = 'kept for inspection (keep_worktree = "always")';
    return { kept: true, removed: false, forInspection: true, ...inspection, reason };
  }
  if (inspection.unpushedCommits > 0 || inspection.dirty) {
    const reason = describeKept(inspection);
    const counts = {
      unpushedCommits: inspection.unpushedCommits,
      changedFiles: inspection.changedFiles.length,
    };
    log.info({ ...fields, ...counts }, 'Kept worktree with unpushed work');
    return { kept: true, removed: false, ...inspection, reason };
  }

  const pooled =
    present && (options.pool ?? 0) > 0 && inspection.head !== null
      ? await intoPool(checkout, path, branch, { ...inspection, head: inspection.head }, options.pool!, log)
      : null;
  if (pooled !== null) return { kept: false, removed: pooled.branchDeleted, pooled: true, ...inspection };
  return removeWorktree(checkout, path, branch, present, { log, fields, key, root, inspection });
}

/**
 * Puts a clean finished worktree into the pool: its ignored files removed outside the lock (only
 * this run uses it; no `git clean` when its status listed none), then moved under it, then its
 * branch deleted outside it. Null when it was not pooled (the pool is full, or git could not clean
 * it): the caller removes it as usual.
 */
async function intoPool(
  checkout: string,
  path: string,
  branch: string,
  inspection: WorktreeInspection & { head: string },
  max: number,
  log: Logger,
): Promise<{ branchDeleted: boolean } | null> {
  const { head } = inspection;
  // A full pool (looked at again under the lock) spares the clean: the worktree is removed anyway.
  if (!(await poolHasRoom(checkout, max))) return null;
  // Nothing ignored in the status just taken (the run is over, nothing writes here any more):
  // nothing for `git clean` to remove, so no process for it.
  if (inspection.ignored !== false && !(await cleanForPool(path))) return null;
  const result = await withLock(repoLockKey(checkout), async () => {
    const moved = await poolWorktree({ checkout, path, branch, head, max, log });
    if (moved.pooled) await removeEmptyParents(path, worktreesRoot(checkout));
    return moved;
  }).catch((error: unknown) => {
    log.warn({ path, error: errorMessage(error) }, 'Could not move a worktree into the pool');
    return null;
  });
  if (!result?.pooled) return null;
  const [branchDeleted] = await Promise.all([
    deleteRunBranch(checkout, branch, log),
    removeCompanions(path, log),
  ]);
  return { branchDeleted };
}

interface RemoveContext {
  log: Logger;
  fields: Record<string, string>;
  key: string;
  root: string;
  inspection: WorktreeInspection;
}

/**
 * Removes a clean worktree and its branch. Its folder is first renamed out of git's sight (one
 * rename, no lock): git's records then name a folder that is gone, and a kill leaves a `.stale-`
 * folder that `curupira gc` lists and removes, never a worktree with part of its files. Under the
 * checkout's lock only `worktree prune` and `branch -D` run; deleting the files needs no lock, so
 * finishing tasks on one checkout delete theirs at the same time.
 */
async function removeWorktree(
  checkout: string,
  path: string,
  branch: string,
  present: boolean,
  context: RemoveContext,
): Promise<FinishedWorktree> {
  const { log, fields, key, root, inspection } = context;
  const warn = (error: unknown): void =>
    log.warn({ ...fields, error: errorMessage(error) }, `Could not clean up worktree for ${key}`);
  let aside: string | null = null;
  if (present) aside = await moveAside(path).catch(() => null);
  let removed = await withLock(repoLockKey(checkout), async () => {
    let done = true;
    try {
      // The rename failed: let git remove it in place (under the lock, as before).
      if (present && aside === null) await git(['worktree', 'remove', '--force', path], { cwd: checkout });
      else await git(['worktree', 'prune'], { cwd: checkout });
    } catch (error) {
      done = false;
      warn(error);
    }
    try {
      const deleted = await gitResult(['branch', '-D', branch], { cwd: checkout });
      if (deleted.exitCode !== 0 && (await branchExists(checkout, branch))) {
        throw new WorkspaceError(`git branch -D ${branch} failed: ${deleted.stderr.trim()}`);
      }
    } catch (error) {
      done = false;
      warn(error);
    }
    return done;
  });
  if (aside !== null) {
    try {
      await deleteFolder(aside, dirname(path));
    } catch (error) {
      removed = false;
      warn(error);
    }
  }
  if (!(await pathExists(path))) await removeCompanions(path, log);
  // Under the lock: another task's `worktree add` may be about to create its folder in these.
  await withLock(repoLockKey(checkout), () => removeEmptyParents(path, root));
  return { kept: false, removed, ...inspection };
}

/**
 * Deletes a folder taken out of git's sight with `rm -rf` (started by the command helper, so the
 * thousands of unlinks cost this process nothing); `removeTree` when that fails.
 */
async function deleteFolder(folder: string, parent: string): Promise<void> {
  await assertInside(parent, folder, 'refusing to delete');
  const result = await runCommand('rm', ['-r', '-f', '--', folder]).catch(() => null);
  if (result?.exitCode === 0 && !(await pathExists(folder))) return;
  await removeTree(folder, parent);
}

/** The worktree's inspection; when its folder is gone, what its branch alone holds. */
async function inspectForFinish(
  checkout: string,
  path: string,
  branch: string,
  present: boolean,
  baseCommit: string | null | undefined,
): Promise<WorktreeInspection> {
  if (present) return inspectWorktree(path, branch, baseCommit);
  const unpushedCommits = (await branchExists(checkout, branch))
    ? await countUnpushedCommits(checkout, [`refs/heads/${branch}`])
    : 0;
  return { unpushedCommits, dirty: false, changedFiles: [], head: null };
}

function describeKept(inspection: WorktreeInspection): string {
  const parts: string[] = [];
  const commits = inspection.unpushedCommits;
  if (commits > 0) parts.push(`${commits} unpushed commit${commits === 1 ? '' : 's'}`);
  const files = inspection.changedFiles.length;
  if (inspection.dirty) parts.push(`${files} uncommitted change${files === 1 ? '' : 's'}`);
  return `worktree holds ${parts.join(' and ')}`;
}

/** Removes the files that live beside a worktree (OpenCode's database) once the worktree is gone. */
export async function removeCompanions(path: string, log?: Logger): Promise<void> {
  // Synchronous: most often none exists, and a lookup is cheaper than the threadpool's round trip.
  for (const file of companionFiles(path)) {
    try {
      rmSync(file, { force: true });
    } catch (error) {
      log?.warn({ path: file, error: errorMessage(error) }, 'Could not remove a file beside the worktree');
    }
  }
}

/** Removes `<root>/<automation>` and `<root>` once the last worktree in them is gone. */
export async function removeEmptyParents(path: string, root: string): Promise<void> {
  for (const dir of [dirname(path), root]) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
  }
}

/**
 * Why a registered worktree folder cannot be handed to an agent as it is, or null when it can. A
 * kill during `git worktree add` leaves it locked "initializing", without an index (or with a stale
 * `index.lock`) and with only part of the files: git then sees most of the repository as staged
 * deletions. The usual case costs a few file lookups and no git process.
 */
async function halfMadeReason(target: string, entry: WorktreeEntry, log: Logger): Promise<string | null> {
  if (entry.lockReason === 'initializing') return "'git worktree add' never finished (locked initializing)";
  const gitDir = await worktreeGitDir(target);
  if (gitDir === null) return 'its .git file does not name a git directory';
  if (await pathExists(join(gitDir, REPOINT_MARKER))) return 'moving it out of the pool never finished';
  if (!(await pathExists(join(gitDir, 'index')))) return 'its checkout never finished (no index)';
  await removeStaleRefLocks(gitDir, entry.branch, target, log);
  const indexLock = join(gitDir, 'index.lock');
  if (!(await pathExists(indexLock))) return null;
  const status = await statusPorcelain(target).catch(() => null);
  if (status === null) return 'git cannot read its status';
  const deletions = status.filter((entry) => entry.code === 'D ').length;
  if (deletions > 0 && status.every((entry) => entry.code === 'D ' || entry.code === '??')) {
    return `its checkout never finished (${deletions} files missing, index.lock left behind)`;
  }
  // A complete worktree with a lock left by a killed git (an agent's commit): no git runs in this
  // task's worktree while its run is being prepared, so the lock is stale.
  await rm(indexLock, { force: true });
  log.warn({ path: target }, 'Removed a stale index.lock from the worktree');
  return null;
}

/**
 * A git killed while it moved the task's branch (an agent's `git commit` under kill -9) leaves
 * `refs/heads/<branch>.lock` in the repository and `HEAD.lock` in the worktree's git folder, and
 * every later commit on that branch fails with "cannot lock ref". The branch and the worktree
 * belong to this one task, and no git runs in them while its run is being prepared (the
 * repository lock is held), so such locks are stale. Git writes the new commit id into the lock
 * before renaming it into place: when the lock holds a commit that descends from the branch's tip,
 * the interrupted update is finished (the agent's commit is kept), else the lock is removed. Two
 * file lookups when there are no locks.
 */
async function removeStaleRefLocks(
  gitDir: string,
  branch: string | null,
  target: string,
  log: Logger,
): Promise<void> {
  const headLock = join(gitDir, 'HEAD.lock');
  if (await pathExists(headLock)) {
    await rm(headLock, { force: true });
    log.warn({ path: target, lock: headLock }, 'Removed a stale git lock left by a killed git');
  }
  if (branch === null || basename(dirname(gitDir)) !== 'worktrees') return;
  const heads = join(dirname(dirname(gitDir)), 'refs', 'heads');
  const refLock = join(heads, `${branch}.lock`);
  if (!isLexicallyInside(heads, refLock) || !(await pathExists(refLock))) return;
  const pending = (await readFile(refLock, 'utf8').catch(() => '')).trim();
  await rm(refLock, { force: true });
  const finished = /^[0-9a-f]{40,64}$/.test(pending) && (await finishRefUpdate(target, branch, pending));
  log.warn(
    { path: target, lock: refLock, ...(finished ? { commit: pending } : {}) },
    finished
      ? 'Finished a branch update a killed git left half done (its commit is kept)'
      : 'Removed a stale git lock left by a killed git',
  );
}

/** Moves `branch` to `commit` when that commit exists and descends from the branch's tip. */
async function finishRefUpdate(cwd: string, branch: string, commit: string): Promise<boolean> {
  const ref = `refs/heads/${branch}`;
  const exists = await gitResult(['cat-file', '-e', `${commit}^{commit}`], { cwd });
  if (exists.exitCode !== 0) return false;
  const tip = (await gitResult(['rev-parse', '--verify', '--quiet', ref], { cwd })).stdout.trim();
  if (tip === commit) return false;
  if (tip !== '') {
    const descends = await gitResult(['merge-base', '--is-ancestor', tip, commit], { cwd });
    if (descends.exitCode !== 0) return false;
  }
  const update = await gitResult(['update-ref', ref, commit, ...(tip === '' ? [] : [tip])], { cwd });
  return update.exitCode === 0;
}

/**
 * Takes a half-made worktree out of the way. Commits on its branch stay (the branch is kept and the
 * new worktree continues it); files that are not part of HEAD's tree (work of an agent that ran in
 * it before this check existed) are kept in a `.stale` sibling folder; the rest is a partial
 * checkout and is deleted.
 */
async function discardHalfMade(
  checkout: string,
  target: string,
  entry: WorktreeEntry,
  reason: string,
  log: Logger,
): Promise<void> {
  const foreign = await foreignFiles(target, entry.head);
  await unlockRegistration(checkout, target);
  if (foreign.length > 0) {
    const aside = await moveAside(target);
    log.warn(
      { path: target, reason, movedTo: aside, files: foreign.length },
      'Moved a half-made worktree aside; it held files that are not in the repository',
    );
  } else {
    log.warn({ path: target, reason }, 'Recreating a half-made worktree');
    const removed = await gitResult(['worktree', 'remove', '--force', '--force', target], { cwd: checkout });
    if (removed.exitCode !== 0 && (await pathExists(target))) await removeTree(target, dirname(target));
  }
  await git(['worktree', 'prune'], { cwd: checkout });
}

/**
 * A folder at the task's path that git does not know (a kill between `mkdir` and git's records, or a
 * worktree whose `.git` file was deleted): nothing git could call work lives there, but its files
 * may still matter to someone. An empty folder, or one holding only a `.git` file, is removed;
 * anything else is moved to a `.stale` sibling that `curupira gc` lists and removes.
 */
async function clearUnknownFolder(target: string, log: Logger): Promise<void> {
  const info = await lstat(target);
  const names = info.isDirectory() ? await readdir(target) : null;
  const onlyGitFile =
    names !== null &&
    (names.length === 0 ||
      (names.length === 1 && names[0] === '.git' && (await lstat(join(target, '.git'))).isFile()));
  if (onlyGitFile) {
    await removeTree(target, dirname(target));
    log.info({ path: target }, 'Removed an empty folder git does not know at the worktree path');
    return;
  }
  const aside = await moveAside(target);
  log.warn(
    { path: target, movedTo: aside },
    "Moved aside a folder git does not know at the worktree path; 'curupira gc' lists it",
  );
}

/** `<dir>/.<name>.stale-<UTC time>`: a sibling `curupira gc` recognises. Returns the new path. */
async function moveAside(target: string): Promise<string> {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const base = join(dirname(target), `.${basename(target)}${STALE_INFIX}${stamp}`);
  for (let attempt = 1; ; attempt++) {
    const candidate = attempt === 1 ? base : `${base}-${attempt}`;
    if (await pathExists(candidate)) continue;
    await rename(target, candidate);
    return candidate;
  }
}

/** Untracked files (not ignored) that are not in `head`'s tree; all of them when HEAD is unknown. */
async function foreignFiles(target: string, head: string | null): Promise<string[]> {
  const status = await statusPorcelain(target).catch(() => null);
  if (status === null) {
    // Killed before HEAD was written: nothing was checked out yet, so only the .git file is ours.
    const names = await readdir(target).catch(() => ['(unreadable)']);
    return names.filter((name) => name !== '.git');
  }
  const untracked = status.filter((entry) => entry.code === '??').map((entry) => entry.path);
  if (untracked.length === 0) return [];
  const tree = head ? new Set(await listTreeFiles(target, head).catch(() => [])) : new Set<string>();
  return untracked.filter((path) => !tree.has(path));
}

/** Deletes the `locked` file of the registration git keeps for `target`, so git can prune or remove it. */
async function unlockRegistration(checkout: string, target: string): Promise<void> {
  const admin = await registrationDir(checkout, target);
  if (admin) await rm(join(admin, 'locked'), { force: true });
}

/** `<checkout>/.git/worktrees/<id>`, the folder whose `gitdir` file points at `<target>/.git`. */
async function registrationDir(checkout: string, target: string): Promise<string | null> {
  const parent = join(checkout, '.git', 'worktrees');
  const wanted = await canonicalPath(join(target, '.git'));
  for (const id of await readdir(parent).catch(() => [] as string[])) {
    const recorded = await readFile(join(parent, id, 'gitdir'), 'utf8').catch(() => null);
    if (recorded !== null && (await canonicalPath(recorded.trim())) === wanted) return join(parent, id);
  }
  return null;
}
