/**
 * The git directories a commit in a working tree writes to, found by reading files (no git run):
 * for a linked worktree, whose `.git` is a `gitdir: …` file, its own git directory
 * (`<common>/worktrees/<name>`: index, HEAD) and the common directory it names in `commondir`
 * (objects, refs); for an ordinary checkout, its `.git` folder. Sandboxing agents (Codex's
 * `workspace-write`) protect these, so a driver names them as extra writable roots.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The git directories of the working tree at `worktree`, common directory first; empty when
 * `worktree` is not a git working tree (nothing to add, and nothing fails).
 */
export function gitWriteDirs(worktree: string): string[] {
  const dotGit = join(worktree, '.git');
  if (isDirectory(dotGit)) return [canonical(dotGit)];
  const pointer = readText(dotGit)?.match(/^gitdir:\s*(.+?)\s*$/m)?.[1];
  if (!pointer) return [];
  const gitDir = resolve(worktree, pointer);
  if (!isDirectory(gitDir)) return [];
  const common = readText(join(gitDir, 'commondir'))?.trim();
  const dirs = common ? [resolve(gitDir, common), gitDir] : [gitDir];
  return [...new Set(dirs.filter(isDirectory).map(canonical))];
}
