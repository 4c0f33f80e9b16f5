/**
 * `transcript_in_worktree = true`: the run's transcript lines copied into its worktree, at
 * `.curupira/transcript.jsonl`, once the agent has exited (so the agent of this run never sees or
 * commits it). The folder holds a `.gitignore` of `*`, which ignores the folder's every file
 * including itself: `git status` stays clean (a worktree is not kept for it), `git add -A` in a
 * later run of the same worktree stages nothing of it, and delivery (which pushes commits, never
 * stages) never carries it.
 *
 * The worktree is the agent's: a `.curupira` that is not a plain folder, or a transcript file that
 * is a link, is refused rather than followed out of the worktree.
 */

import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WorkspaceError } from '../core/errors.js';

export const WORKTREE_TRANSCRIPT_DIR = '.curupira';
export const WORKTREE_TRANSCRIPT_FILE = 'transcript.jsonl';

async function kind(path: string): Promise<'missing' | 'directory' | 'file' | 'other'> {
  try {
    const stat = await lstat(path);
    if (stat.isDirectory()) return 'directory';
    return stat.isFile() ? 'file' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
}

/** Writes `content` to `path`, never through a link (O_NOFOLLOW); `exclusive`: only when absent. */
async function writeNoFollow(path: string, content: string | Buffer, exclusive = false): Promise<void> {
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    (exclusive ? constants.O_EXCL : constants.O_TRUNC);
  const handle = await open(path, flags, 0o644);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

/** Copies the transcript at `transcriptPath` into `<worktree>/.curupira/transcript.jsonl`; returns that path. */
export async function copyTranscriptIntoWorktree(worktree: string, transcriptPath: string): Promise<string> {
  const dir = join(worktree, WORKTREE_TRANSCRIPT_DIR);
  const found = await kind(dir);
  if (found === 'missing') await mkdir(dir);
  else if (found !== 'directory')
    throw new WorkspaceError(`refusing to write the transcript: ${dir} is not a folder`, {
      code: 'workspace_path',
    });
  const ignore = join(dir, '.gitignore');
  if ((await kind(ignore)) === 'missing') await writeNoFollow(ignore, '*\n', true);
  const target = join(dir, WORKTREE_TRANSCRIPT_FILE);
  const existing = await kind(target);
  if (existing !== 'missing' && existing !== 'file')
    throw new WorkspaceError(`refusing to write the transcript: ${target} is not a plain file`, {
      code: 'workspace_path',
    });
  // Written through a handle opened without following links, whatever the agent left at that path.
  const lines = (await kind(transcriptPath)) === 'file' ? await readFile(transcriptPath) : '';
  await writeNoFollow(target, lines);
  return target;
}
