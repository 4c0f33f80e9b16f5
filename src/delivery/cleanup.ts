/** Removing a run's kept worktree: the same checks and removal as `curupira gc` (board, follow-up). */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RunRecord } from '../core/types.js';
import type { Store } from '../store/types.js';
import { holdsWork, type KeptWorktree, listKeptWorktrees, removeWorktrees } from '../workspace/gc.js';

export type WorktreeRemoval =
  | { kind: 'removed'; run: RunRecord }
  | { kind: 'not-kept'; reason: string }
  | { kind: 'failed'; reason: string }
  /** It holds work found nowhere else and the removal was not confirmed: nothing was deleted. */
  | { kind: 'unconfirmed'; worktree: KeptWorktree };

/**
 * Removes the run's kept worktree (and its curupira branch) when it is one curupira kept under the
 * checkout's `.worktrees` folder, then marks the run's worktree as no longer kept. A folder already
 * gone is only marked. One that holds unpushed commits or changed files is removed only with
 * `confirm` (`curupira gc`'s rule); without it nothing is deleted and what would be lost is returned.
 */
export async function removeRunWorktree(
  store: Store,
  checkoutPath: string,
  run: RunRecord,
  options: { confirm: boolean },
): Promise<WorktreeRemoval> {
  if (!run.worktreeKept || !run.worktreePath)
    return { kind: 'not-kept', reason: `run ${run.id} has no kept worktree` };
  if (existsSync(run.worktreePath)) {
    const kept = await listKeptWorktrees([checkoutPath]);
    const entry = kept.find((k) => resolve(k.path) === resolve(run.worktreePath!));
    if (!entry) return { kind: 'not-kept', reason: `${run.worktreePath} is not a worktree curupira kept` };
    if (!options.confirm && holdsWork(entry)) return { kind: 'unconfirmed', worktree: entry };
    const failure = (await removeWorktrees([entry], { dryRun: false })).failed[0];
    if (failure) return { kind: 'failed', reason: `could not remove ${run.worktreePath}: ${failure.error}` };
  }
  return { kind: 'removed', run: await store.updateRun(run.id, { worktreeKept: false }) };
}
