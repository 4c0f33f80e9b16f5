/**
 * Where worktrees live and what their branches are called, and the path-safety checks every write or
 * delete in this folder goes through. Task ids come from strangers (issue numbers today, anything a
 * plugin returns tomorrow), so they only ever appear hashed; automation ids and task types must be
 * plain path segments.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { WorkspaceError } from '../core/errors.js';

/** Letters, digits, `_`, `-`, and single dots between them; never `.lock` at the end (git refuses it). */
const SAFE_SEGMENT = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export function isSafeSegment(value: string): boolean {
  return SAFE_SEGMENT.test(value) && !value.endsWith('.lock');
}

/** Throws `WorkspaceError` (`workspace_path`) unless `value` can be one folder name and one ref component. */
export function assertSafeSegment(value: string, label: string): void {
  if (isSafeSegment(value)) return;
  throw new WorkspaceError(
    `${label} must be a single path segment of letters, digits, '_', '-' or '.': ${JSON.stringify(value)}`,
    { code: 'workspace_path' },
  );
}

/** `<task_type>-<sha256_hex(task_id)>`: the worktree's folder name and the last part of its branch. */
export function worktreeName(taskType: string, taskId: string): string {
  assertSafeSegment(taskType, 'task type');
  return `${taskType}-${sha256Hex(taskId)}`;
}

/** `curupira/<automation_id>/<task_type>-<sha256_hex(task_id)>`. */
export function branchName(automationId: string, taskType: string, taskId: string): string {
  assertSafeSegment(automationId, 'automation id');
  return `curupira/${automationId}/${worktreeName(taskType, taskId)}`;
}

/**
 * The branch a delivery pushes to GitHub (issue 25): `curupira/<automation>/<number>-<title slug>`,
 * a name a reviewer can read. The number (an issue or pull request number, a tracker's key such as
 * `eng-7` lower-cased, which Linear and Jira link back to the item; any other id as 12 hex of its
 * sha256) keeps it unique per item; the slug is the title in lowercase letters, digits and
 * `-` only (at most 40 characters), so text from strangers can shape nothing but a word list. The
 * delivery records it before the first push, so a restart finds the same branch whatever the title
 * became. The local worktree branch keeps `branchName`'s formula.
 */
/** A tracker's issue key (`ENG-7`, Linear's and Jira's): kept in the branch name, so the tracker links it. */
const TRACKER_KEY = /^[A-Za-z][A-Za-z0-9]{0,9}-[0-9]{1,10}$/;

export function deliveryBranchName(automationId: string, itemId: string, title: string): string {
  assertSafeSegment(automationId, 'automation id');
  const id = /^[0-9]{1,20}$/.test(itemId)
    ? itemId
    : TRACKER_KEY.test(itemId)
      ? itemId.toLowerCase()
      : sha256Hex(itemId).slice(0, 12);
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 40)
    .replace(/^-+|-+$/g, '');
  return `curupira/${automationId}/${slug ? `${id}-${slug}` : id}`;
}

/**
 * A schedule's fire delivered: `curupira/<automation>/<date>-<time>` of the fire in UTC
 * (`curupira/nightly/2026-12-06-0300`, seconds added when not zero), where the item id would be
 * the fire's epoch seconds and its title the automation's id again.
 */
export function scheduledBranchName(automationId: string, scheduledFor: string): string {
  assertSafeSegment(automationId, 'automation id');
  const at = new Date(scheduledFor);
  if (Number.isNaN(at.getTime())) throw new Error(`not a time: ${scheduledFor}`);
  const iso = at.toISOString();
  // A fire asked for by hand ("Run now") is at any second: kept, so two in a minute differ.
  const seconds = iso.slice(17, 19) === '00' ? '' : iso.slice(17, 19);
  return `curupira/${automationId}/${iso.slice(0, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${seconds}`;
}

/** `<dirname(checkout)>/<basename(checkout)>.worktrees`: every worktree of one checkout lives below it. */
export function worktreesRoot(checkoutPath: string): string {
  const checkout = resolve(checkoutPath);
  const name = basename(checkout);
  if (!name) {
    throw new WorkspaceError(`a checkout cannot be the filesystem root: ${checkoutPath}`, {
      code: 'workspace_path',
    });
  }
  return join(dirname(checkout), `${name}.worktrees`);
}

/** `<dirname(checkout)>/<basename(checkout)>.worktrees/<automation_id>/<task_type>-<sha256_hex(task_id)>`. */
export function worktreePath(
  checkoutPath: string,
  automationId: string,
  taskType: string,
  taskId: string,
): string {
  assertSafeSegment(automationId, 'automation id');
  return join(worktreesRoot(checkoutPath), automationId, worktreeName(taskType, taskId));
}

/**
 * The canonical form of a path that may not exist yet: the real path of its deepest existing
 * ancestor (symlinks resolved) with the missing remainder appended.
 */
export async function canonicalPath(path: string): Promise<string> {
  let current = resolve(path);
  const missing: string[] = [];
  for (;;) {
    try {
      // The native call on this thread: a few syscalls on a local disk, where the threadpool's
      // round trip (one per call) cost more than the call itself on a run's path.
      const real = realpathSync.native(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      const parent = dirname(current);
      if (parent === current) return resolve(path);
      missing.push(basename(current));
      current = parent;
    }
  }
}

/**
 * True when `child` lies strictly below `parent` once `..` is resolved and symlinks along the
 * existing part of either path are followed. `parent` itself is not inside `parent`.
 */
export async function isInside(parent: string, child: string): Promise<boolean> {
  const [outer, inner] = await Promise.all([canonicalPath(parent), canonicalPath(child)]);
  return isLexicallyInside(outer, inner);
}

/** `isInside` without touching the filesystem: only `..` and absolute segments are considered. */
export function isLexicallyInside(parent: string, child: string): boolean {
  const rel = relative(resolve(parent), resolve(child));
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** Throws `WorkspaceError` (`workspace_path`) unless `child` is strictly inside `parent`. */
export async function assertInside(parent: string, child: string, label: string): Promise<void> {
  if (await isInside(parent, child)) return;
  throw new WorkspaceError(`${label} ${child} is outside ${parent}`, { code: 'workspace_path' });
}

/**
 * Files that belong beside a worktree and go with it: OpenCode 1.x keeps a task's sessions in
 * `<worktree>.opencode.db` (SQLite, with its `-shm` and `-wal`).
 */
export const COMPANION_SUFFIXES = ['.opencode.db', '.opencode.db-shm', '.opencode.db-wal'] as const;

/** The companion files of the worktree at `path` (they may not exist). */
export function companionFiles(path: string): string[] {
  const base = resolve(path);
  return COMPANION_SUFFIXES.map((suffix) => `${base}${suffix}`);
}

/** `.<name>.stale-<UTC time>[-n]`: a folder a run moved out of its worktree path. */
export const STALE_FOLDER = /^\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\.stale-(\d{8}T\d{6}Z)(?:-\d+)?$/;
