/**
 * The worktree of a delivered pull request's head branch, for a remediation run (issue 13): the
 * kept worktree when it is still there, else one recreated from the branch as the remote has it
 * (fetched first). Never a fresh branch from the base: the agent continues the pull request.
 *
 * A local branch left behind is continued when it holds the remote head (it may carry commits a
 * killed remediation made and never pushed), moved up to the remote head when the remote is ahead,
 * and reset to the remote head when the two diverged (someone rewrote the pull request's branch;
 * the old tip stays in the branch's reflog).
 */
import { resolve } from 'node:path';
import { WorkspaceError } from '../core/errors.js';
import type { Logger } from '../log.js';
import { branchExists, git, gitResult, revParse } from './git.js';
import { repoLockKey, withLock } from './lock.js';
import { assertInside, worktreesRoot } from './paths.js';
import { pathExists } from './remove.js';
import { findWorktree } from './worktree.js';

export interface HeadWorktreeOptions {
  checkoutPath: string;
  /** Where the worktree lives (the delivery's worktree path). */
  path: string;
  /** The pull request's head branch on the remote (a `curupira/…` branch). */
  branch: string;
  /**
   * The delivery's local branch, when its name differs from the remote one (issue 25: the local
   * worktree branch keeps seed 000's formula): a kept worktree on it is continued as it is.
   */
  localBranch?: string;
  log: Logger;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface HeadWorktree {
  path: string;
  branch: string;
  /** The kept worktree was reused (else it was recreated). */
  reused: boolean;
  /** The remote head of the branch after the fetch. */
  remoteHead: string | null;
}

async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant) return true;
  return (await gitResult(['merge-base', '--is-ancestor', ancestor, descendant], { cwd })).exitCode === 0;
}

export async function prepareHeadWorktree(options: HeadWorktreeOptions): Promise<HeadWorktree> {
  const { branch, log } = options;
  const checkout = resolve(options.checkoutPath);
  const path = resolve(options.path);
  await assertInside(worktreesRoot(checkout), path, 'worktree path');
  if (!branch.startsWith('curupira/')) {
    throw new WorkspaceError(`refusing to work on branch ${branch}: not a curupira branch`, {
      code: 'workspace_path',
    });
  }
  const net = {
    cwd: checkout,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const tracking = `refs/remotes/origin/${branch}`;
  return withLock(repoLockKey(checkout), async () => {
    // The remote-tracking ref follows the remote wherever it went (a local ref, nothing pushed).
    await git(['fetch', '--quiet', 'origin', `+refs/heads/${branch}:${tracking}`], net);
    const remoteHead = await revParse(checkout, tracking);
    const fields = { path, branch, remoteHead };
    if (await pathExists(path)) {
      const entry = await findWorktree(checkout, path);
      const onBranch =
        entry?.branch === branch || (options.localBranch && entry?.branch === options.localBranch);
      if (!entry || entry.prunable || !onBranch) {
        throw new WorkspaceError(
          `the folder ${path} is in the way of the pull request's worktree (not a worktree of ${branch})`,
          { code: 'workspace_path' },
        );
      }
      const head = await revParse(path, 'HEAD');
      if (remoteHead && head && head !== remoteHead && (await isAncestor(path, head, remoteHead))) {
        await git(['merge', '--ff-only', '--quiet', remoteHead], { cwd: path });
      }
      log.info(fields, 'Reusing the kept worktree of the pull request');
      return { path, branch: entry.branch ?? branch, reused: true, remoteHead };
    }
    if (!remoteHead) {
      throw new WorkspaceError(`the pull request's branch ${branch} is not on the remote`, {
        code: 'workspace_path',
      });
    }
    await git(['worktree', 'prune'], { cwd: checkout });
    if (await branchExists(checkout, branch)) {
      const local = (await revParse(checkout, `refs/heads/${branch}`))!;
      if (await isAncestor(checkout, remoteHead, local)) {
        await git(['worktree', 'add', '--quiet', path, branch], { cwd: checkout });
      } else {
        if (!(await isAncestor(checkout, local, remoteHead)))
          log.warn(
            { ...fields, local },
            'The local branch diverged from the pull request; taking the remote head',
          );
        await git(['worktree', 'add', '--quiet', '-B', branch, path, remoteHead], { cwd: checkout });
      }
    } else {
      await git(['worktree', 'add', '--quiet', '--no-track', '-b', branch, path, remoteHead], {
        cwd: checkout,
      });
    }
    log.info(fields, 'Recreated the worktree of the pull request from its head');
    return { path, branch, reused: false, remoteHead };
  });
}

/** `owner/name` a git remote URL names (https, ssh, `git@host:`), or undefined for a local path. */
export function remoteRepoName(url: string): string | undefined {
  const trimmed = url.trim();
  let path: string | undefined;
  const scp = /^[\w.-]+@[\w.-]+:(?!\/)(.+)$/.exec(trimmed);
  if (scp) path = scp[1];
  else if (/^(?:https?|ssh|git):\/\//i.test(trimmed)) {
    try {
      path = new URL(trimmed).pathname;
    } catch {
      return undefined;
    }
  }
  if (path === undefined) return undefined;
  const parts = path
    .replace(/\/+$/, '')
    .replace(/\.git$/i, '')
    .split('/')
    .filter((p) => p !== '');
  if (parts.length < 2) return undefined;
  return `${parts[parts.length - 2]}/${parts[parts.length - 1]}`;
}

/** The URL of the checkout's `origin`, or null. */
export async function originUrl(checkoutPath: string): Promise<string | null> {
  const result = await gitResult(['remote', 'get-url', 'origin'], { cwd: checkoutPath });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}
