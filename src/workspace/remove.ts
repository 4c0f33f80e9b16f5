/**
 * Deleting folders, carefully: only strictly inside a given parent (checked on real paths), a
 * symlink is unlinked and never followed, and read-only entries (git's object files, a tool's
 * read-only cache) are made writable and the removal retried.
 */
import { lstatSync } from 'node:fs';
import { chmod, lstat, readdir, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { assertInside } from './paths.js';

/** Removes `path` and everything below it; refuses unless it lies strictly inside `parent`. */
export async function removeTree(path: string, parent: string): Promise<void> {
  await assertInside(parent, path, 'refusing to delete');
  let info: Awaited<ReturnType<typeof lstat>>;
  try {
    info = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (!info.isDirectory()) {
    await unlink(path);
    return;
  }
  try {
    await rm(path, { recursive: true, force: true, maxRetries: 2 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw error;
    await makeWritable(path);
    await rm(path, { recursive: true, force: true, maxRetries: 2 });
  }
}

async function makeWritable(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isSymbolicLink()) return;
  await chmod(path, (info.mode & 0o7777) | (info.isDirectory() ? 0o700 : 0o600)).catch(() => undefined);
  if (!info.isDirectory()) return;
  for (const entry of await readdir(path)) await makeWritable(join(path, entry));
}

/**
 * True when something (a file, folder or symlink, even a dangling one) is at `path`. One `lstat`
 * on the calling thread, without an error object for a missing path: a run asks this of a dozen
 * local paths that are mostly absent (a rejected promise with its stack costs more than the call).
 */
export async function pathExists(path: string): Promise<boolean> {
  return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}
