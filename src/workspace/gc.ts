/**
 * Kept worktrees: the ones a run left behind because they held unpushed work, folders at a worktree
 * path that git does not know (left by a kill), and `.stale-` folders a run moved out of its way.
 * `curupira gc` lists them (`listKeptWorktrees`), picks some (`selectForGc`, pure) and removes them
 * (`removeWorktrees`). Only folders shaped `<checkout>.worktrees/<automation>/<name>` are ever
 * considered, and only the branch curupira named for that folder is ever deleted. Stray files that
 * lived beside a worktree that is gone (OpenCode's `<worktree>.opencode.db`) are listed apart
 * (`listStrayFiles`) and removed with `removeStrayFiles`.
 */
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { errorMessage, UsageError, WorkspaceError } from '../core/errors.js';
import { type Logger, silentLogger } from '../log.js';
import {
  branchExists,
  countUnpushedCommits,
  git,
  isGitCheckout,
  listWorktrees,
  runMaintenance,
  type WorktreeEntry,
} from './git.js';
import { repoLockKey, withLock } from './lock.js';
import {
  assertInside,
  COMPANION_SUFFIXES,
  canonicalPath,
  isSafeSegment,
  STALE_FOLDER,
  worktreesRoot,
} from './paths.js';
import { emptyPool } from './pool.js';
import { pathExists, removeTree } from './remove.js';
import { findWorktree, inspectWorktree, removeCompanions, removeEmptyParents } from './worktree.js';

/**
 * `worktree`: a worktree git knows; `unregistered`: a folder at a worktree path that git does not
 * know (or whose registration is broken); `stale`: a folder a run moved aside (`.<name>.stale-<time>`).
 */
export type KeptKind = 'worktree' | 'unregistered' | 'stale';

/** How long a worktree may stay locked "initializing" before gc takes it for a killed `worktree add`. */
const STUCK_INITIALIZING_MS = 10 * 60_000;

export interface KeptWorktree {
  kind: KeptKind;
  /** The base checkout the worktree belongs to. */
  checkoutPath: string;
  path: string;
  automationId: string;
  /** `<task_type>-<sha256(task_id)>` (for a stale folder, its own name `.<that>.stale-<time>`). */
  name: string;
  /** The branch checked out there, else curupira's branch for the folder if it exists, else null. */
  branch: string | null;
  /** Latest change seen on the folder or on git's records of it (commits, index, HEAD moves). */
  modifiedAt: Date;
  ageMs: number;
  unpushedCommits: number;
  /** Uncommitted or untracked changes; null when git no longer knows the folder and cannot say. */
  dirty: boolean | null;
  changedFiles: string[];
  /** Git still lists the folder as a worktree of the checkout. */
  registered: boolean;
  /** Locked with `git worktree lock`; never selected for removal. */
  locked: boolean;
}

/**
 * Work that exists nowhere else, or that git cannot vouch for (a folder it does not know): what
 * `curupira gc`, the board and the API remove only after an explicit confirmation.
 */
export function holdsWork(worktree: Pick<KeptWorktree, 'unpushedCommits' | 'dirty'>): boolean {
  return worktree.unpushedCommits > 0 || worktree.dirty !== false;
}

/** Every worktree folder under the given checkouts' `.worktrees` folders, newest first. */
export async function listKeptWorktrees(
  checkoutPaths: readonly string[],
  options: { now?: number } = {},
): Promise<KeptWorktree[]> {
  const now = options.now ?? Date.now();
  const found: KeptWorktree[] = [];
  for (const checkoutPath of new Set(checkoutPaths.map((p) => resolve(p)))) {
    found.push(...(await listForCheckout(checkoutPath, now)));
  }
  return found.sort((a, b) => b.modifiedAt.getTime() - a.modifiedAt.getTime());
}

async function listForCheckout(checkout: string, now: number): Promise<KeptWorktree[]> {
  const root = worktreesRoot(checkout);
  const automations = await directories(root);
  if (automations.length === 0) return [];
  const isRepo = await isGitCheckout(checkout);
  const known = new Map<string, WorktreeEntry>();
  if (isRepo) {
    for (const entry of await listWorktrees(checkout)) known.set(await canonicalPath(entry.path), entry);
  }

  const out: KeptWorktree[] = [];
  for (const automationId of automations) {
    for (const name of await directories(join(root, automationId))) {
      const path = join(root, automationId, name);
      const entry = known.get(await canonicalPath(path));
      const registered = entry !== undefined && !entry.prunable;
      const ownBranch = `curupira/${automationId}/${name}`;
      const ownBranchExists = isRepo && (await branchExists(checkout, ownBranch));
      // Read times before inspecting: looking must not make a worktree look fresh.
      const modifiedAt = await lastModified(path);

      let unpushedCommits = 0;
      let dirty: boolean | null = null;
      let changedFiles: string[] = [];
      if (registered) {
        try {
          ({ unpushedCommits, dirty, changedFiles } = await inspectWorktree(path, ownBranch));
        } catch {
          dirty = null;
        }
      } else if (ownBranchExists) {
        unpushedCommits = await countUnpushedCommits(checkout, [`refs/heads/${ownBranch}`]);
      }
      out.push({
        kind: registered ? 'worktree' : 'unregistered',
        checkoutPath: checkout,
        path,
        automationId,
        name,
        branch: entry?.branch ?? (ownBranchExists ? ownBranch : null),
        modifiedAt,
        ageMs: Math.max(0, now - modifiedAt.getTime()),
        unpushedCommits,
        dirty,
        changedFiles,
        registered,
        // A registration left locked "initializing" by a killed `git worktree add` is not a lock a
        // person set; once it is older than any real `worktree add`, it may go.
        locked:
          (entry?.locked ?? false) &&
          !(entry?.lockReason === 'initializing' && now - modifiedAt.getTime() > STUCK_INITIALIZING_MS),
      });
    }
    for (const name of await staleFolders(join(root, automationId))) {
      const path = join(root, automationId, name);
      const modifiedAt = await lastModified(path);
      out.push({
        kind: 'stale',
        checkoutPath: checkout,
        path,
        automationId,
        name,
        branch: null,
        modifiedAt,
        ageMs: Math.max(0, now - modifiedAt.getTime()),
        unpushedCommits: 0,
        dirty: null,
        changedFiles: [],
        registered: false,
        locked: false,
      });
    }
  }
  return out;
}

/** `.<name>.stale-<time>` folders (not symlinks) in `dir`. */
async function staleFolders(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: string[] = [];
  for (const name of names.sort()) {
    if (!STALE_FOLDER.test(name)) continue;
    const info = await lstat(join(dir, name)).catch(() => null);
    if (info?.isDirectory()) out.push(name);
  }
  return out;
}

export interface StrayFile {
  checkoutPath: string;
  path: string;
  /** The worktree folder the file belonged to, which no longer exists. */
  worktreePath: string;
  sizeBytes: number;
  modifiedAt: Date;
}

/**
 * Files left beside a worktree that is gone (`<root>/<automation>/<name>.opencode.db`, `-shm`,
 * `-wal`): OpenCode 1.x's per-task database, orphaned when an older curupira removed the worktree.
 */
export async function listStrayFiles(checkoutPaths: readonly string[]): Promise<StrayFile[]> {
  const out: StrayFile[] = [];
  for (const checkoutPath of new Set(checkoutPaths.map((p) => resolve(p)))) {
    const root = worktreesRoot(checkoutPath);
    for (const automationId of await directories(root)) {
      const dir = join(root, automationId);
      for (const name of (await readdir(dir).catch(() => [] as string[])).sort()) {
        const suffix = COMPANION_SUFFIXES.find((s) => name.endsWith(s));
        if (!suffix) continue;
        const owner = name.slice(0, -suffix.length);
        if (!isSafeSegment(owner)) continue;
        const worktreePath = join(dir, owner);
        if (await pathExists(worktreePath)) continue;
        const info = await lstat(join(dir, name)).catch(() => null);
        if (!info?.isFile()) continue;
        out.push({
          checkoutPath,
          path: join(dir, name),
          worktreePath,
          sizeBytes: info.size,
          modifiedAt: new Date(info.mtimeMs),
        });
      }
    }
  }
  return out;
}

/** Removes stray files (only ones shaped as `listStrayFiles` finds them, inside their root). */
export async function removeStrayFiles(
  list: readonly StrayFile[],
  options: { dryRun: boolean },
): Promise<{ removed: StrayFile[]; failed: { file: StrayFile; error: string }[] }> {
  const result: { removed: StrayFile[]; failed: { file: StrayFile; error: string }[] } = {
    removed: [],
    failed: [],
  };
  for (const file of list) {
    try {
      const root = worktreesRoot(file.checkoutPath);
      const name = basename(file.path);
      if (
        !COMPANION_SUFFIXES.some((s) => name.endsWith(s)) ||
        dirname(dirname(resolve(file.path))) !== root
      ) {
        throw new WorkspaceError(
          `refusing to remove ${file.path}: not a file curupira left beside a worktree`,
          {
            code: 'workspace_path',
          },
        );
      }
      await assertInside(root, file.path, 'stray file');
      if (!options.dryRun) {
        await removeTree(file.path, root);
        await removeEmptyParents(file.path, root);
      }
      result.removed.push(file);
    } catch (error) {
      result.failed.push({ file, error: errorMessage(error) });
    }
  }
  return result;
}

/** Real sub-folders (not symlinks) of `dir` whose names curupira could have made. */
async function directories(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names.sort()) {
    if (!isSafeSegment(name)) continue;
    const info = await lstat(join(dir, name)).catch(() => null);
    if (info?.isDirectory()) out.push(name);
  }
  return out;
}

/** The newest of the folder's own time and git's per-worktree records (HEAD, its log, the index). */
async function lastModified(path: string): Promise<Date> {
  let newest = (await lstat(path)).mtimeMs;
  const gitdir = await readFile(join(path, '.git'), 'utf8')
    .then((text) => /^gitdir: (.+)$/m.exec(text)?.[1]?.trim() ?? null)
    .catch(() => null);
  if (gitdir) {
    for (const file of ['HEAD', 'index', join('logs', 'HEAD')]) {
      const info = await stat(join(gitdir, file)).catch(() => null);
      if (info && info.mtimeMs > newest) newest = info.mtimeMs;
    }
  }
  return new Date(newest);
}

export interface GcSelection {
  /** Select worktrees unchanged for at least this long. */
  olderThanMs?: number;
  /** Select every worktree. */
  all?: boolean;
  now: number;
}

/** Which kept worktrees `curupira gc` should remove. Locked worktrees are never selected. */
export function selectForGc(list: readonly KeptWorktree[], selection: GcSelection): KeptWorktree[] {
  const { olderThanMs, all, now } = selection;
  if (all && olderThanMs !== undefined) throw new UsageError('choose either --all or --older-than, not both');
  if (!all && olderThanMs === undefined)
    throw new UsageError('choose which worktrees to remove: --older-than <duration> or --all');
  const unlocked = list.filter((worktree) => !worktree.locked);
  if (all) return unlocked;
  return unlocked.filter((worktree) => now - worktree.modifiedAt.getTime() >= olderThanMs!);
}

export interface GcResult {
  /** What was removed (or, in a dry run, what would have been). */
  removed: KeptWorktree[];
  failed: { worktree: KeptWorktree; error: string }[];
}

/** Removes each worktree and its curupira branch; with `dryRun`, only reports what it would remove. */
export async function removeWorktrees(
  list: readonly KeptWorktree[],
  options: { dryRun: boolean; log?: Logger },
): Promise<GcResult> {
  const result: GcResult = { removed: [], failed: [] };
  for (const worktree of list) {
    try {
      await checkShape(worktree);
      if (!options.dryRun) await removeOne(worktree);
      result.removed.push(worktree);
      options.log?.info(
        { path: worktree.path, branch: worktree.branch, dryRun: options.dryRun },
        options.dryRun ? 'Would remove worktree' : 'Removed worktree',
      );
    } catch (error) {
      result.failed.push({ worktree, error: errorMessage(error) });
      options.log?.warn({ path: worktree.path, error: errorMessage(error) }, 'Could not remove worktree');
    }
  }
  return result;
}

/** The entry must describe `<checkout>.worktrees/<automation>/<name>` exactly, inside that root. */
async function checkShape(worktree: KeptWorktree): Promise<void> {
  const root = worktreesRoot(worktree.checkoutPath);
  const expected = join(root, worktree.automationId, worktree.name);
  const nameOk = worktree.kind === 'stale' ? STALE_FOLDER.test(worktree.name) : isSafeSegment(worktree.name);
  if (!isSafeSegment(worktree.automationId) || !nameOk || resolve(worktree.path) !== expected) {
    throw new WorkspaceError(
      `refusing to remove ${worktree.path}: not a curupira worktree of ${worktree.checkoutPath}`,
      {
        code: 'workspace_path',
      },
    );
  }
  await assertInside(root, expected, 'worktree path');
}

async function removeOne(worktree: KeptWorktree): Promise<void> {
  const checkout = resolve(worktree.checkoutPath);
  const root = worktreesRoot(checkout);
  const path = join(root, worktree.automationId, worktree.name);
  const ownBranch = `curupira/${worktree.automationId}/${worktree.name}`;
  await withLock(repoLockKey(checkout), async () => {
    if (worktree.kind === 'stale') {
      // Files a run moved aside: no registration, no branch of their own (the name's branch is the live one's).
      await removeTree(path, root);
      await removeEmptyParents(path, root);
      return;
    }
    const isRepo = await isGitCheckout(checkout);
    if (isRepo) {
      const entry = await findWorktree(checkout, path);
      // Twice --force: also a registration a killed `git worktree add` left locked "initializing"
      // (selectForGc never picks a worktree a person locked).
      if (entry && !entry.prunable) {
        await git(['worktree', 'remove', '--force', '--force', path], { cwd: checkout });
      }
    }
    // Git does not know the folder (or left it behind): delete it ourselves, inside the root only.
    if (await pathExists(path)) await removeTree(path, root);
    if (isRepo) {
      await git(['worktree', 'prune'], { cwd: checkout });
      if (await branchExists(checkout, ownBranch)) await git(['branch', '-D', ownBranch], { cwd: checkout });
    }
    await removeCompanions(path);
    await removeEmptyParents(path, root);
  });
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** `90s`, `30m`, `12h`, `7d`, `2w` → milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhdw])$/i.exec(text.trim());
  if (!match) {
    throw new UsageError(
      `invalid duration '${text}': use a whole number followed by s, m, h, d or w (for example 7d or 12h)`,
    );
  }
  const unit = match[2]!.toLowerCase() as keyof typeof UNIT_MS;
  return Number(match[1]) * UNIT_MS[unit];
}

/**
 * git's own housekeeping (`git maintenance run --auto`: pack loose objects and refs, prune) in each
 * checkout that exists, one at a time and under the checkout's lock. Runs leave it out of their
 * path; failures are ignored (the next gc tries again).
 */
export async function maintainCheckouts(checkouts: readonly string[]): Promise<void> {
  for (const checkout of checkouts) {
    if (!(await isGitCheckout(checkout))) continue;
    await withLock(repoLockKey(checkout), () => runMaintenance(checkout)).catch(() => undefined);
  }
}

/**
 * Removes the clean worktrees finished runs left in each checkout's pool for later tasks
 * (`reuse_worktrees`; pool.ts), under each checkout's lock. Returns how many were removed.
 */
export async function emptyPools(checkouts: readonly string[], log?: Logger): Promise<number> {
  let removed = 0;
  for (const checkout of new Set(checkouts.map((c) => resolve(c)))) {
    const quiet = log ?? silentLogger();
    removed += await withLock(repoLockKey(checkout), () => emptyPool(checkout, quiet)).catch(() => 0);
  }
  return removed;
}
