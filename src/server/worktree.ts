/** Removing a run's kept worktree from the board: the same checks and removal as `curupira gc`. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RunRecord } from '../core/types.js';
import { listKeptWorktrees, removeWorktrees } from '../workspace/gc.js';
import { ApiError } from './errors.js';
import type { ServerContext } from './server-context.js';

export async function removeKeptWorktree(ctx: ServerContext, run: RunRecord): Promise<RunRecord> {
  if (!run.worktreeKept || !run.worktreePath)
    throw new ApiError('worktree_not_kept', `run ${run.id} has no kept worktree`);
  if (existsSync(run.worktreePath)) {
    const automation = ctx.engine.currentSettings().automations.find((a) => a.id === run.automationId);
    if (!automation)
      throw new ApiError('automation_not_found', `automation '${run.automationId}' is no longer configured`);
    const kept = await listKeptWorktrees([automation.repository.checkoutPath]);
    const entry = kept.find((k) => resolve(k.path) === resolve(run.worktreePath!));
    if (!entry)
      throw new ApiError('worktree_not_kept', `${run.worktreePath} is not a worktree curupira kept`);
    const result = await removeWorktrees([entry], { dryRun: false });
    const failure = result.failed[0];
    if (failure) throw new ApiError('internal', `could not remove ${run.worktreePath}: ${failure.error}`);
  }
  return ctx.store.updateRun(run.id, { worktreeKept: false });
}
