/** Removing a run's kept worktree from the board: the same checks and removal as `curupira gc`. */
import type { RunRecord } from '../core/types.js';
import { removeRunWorktree } from '../delivery/cleanup.js';
import { ApiError } from './errors.js';
import type { ServerContext } from './server-context.js';

export async function removeKeptWorktree(ctx: ServerContext, run: RunRecord): Promise<RunRecord> {
  if (!run.worktreeKept || !run.worktreePath)
    throw new ApiError('worktree_not_kept', `run ${run.id} has no kept worktree`);
  const automation = ctx.engine.currentSettings().automations.find((a) => a.id === run.automationId);
  if (!automation)
    throw new ApiError('automation_not_found', `automation '${run.automationId}' is no longer configured`);
  const result = await removeRunWorktree(ctx.store, automation.repository.checkoutPath, run);
  if (result.kind === 'not-kept') throw new ApiError('worktree_not_kept', result.reason);
  if (result.kind === 'failed') throw new ApiError('internal', result.reason);
  return result.run;
}
