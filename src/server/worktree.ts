/**
 * Removing a run's kept worktree from the board or the API: the same checks, removal and rule as
 * `curupira gc`. A worktree that holds unpushed commits or changed files is removed only with an
 * explicit confirmation (`{"confirm": true}`); without it nothing is deleted and the answer (409,
 * `confirmation_required`) names what would be lost.
 */
import type { RunRecord } from '../core/types.js';
import { removeRunWorktree } from '../delivery/cleanup.js';
import type { KeptWorktree } from '../workspace/index.js';
import { ApiError } from './errors.js';
import type { ServerContext } from './server-context.js';

/** What removing the worktree would delete, for the 409 answer and the board's question. */
export function wouldLose(worktree: KeptWorktree): {
  path: string;
  branch: string | null;
  unpushedCommits: number;
  changedFiles: string[];
} {
  return {
    path: worktree.path,
    branch: worktree.branch,
    unpushedCommits: worktree.unpushedCommits,
    changedFiles: worktree.changedFiles,
  };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `…/api.worktrees/fix/x holds 1 unpushed commit on curupira/…: removing it deletes…` */
export function confirmationMessage(worktree: KeptWorktree): string {
  const parts: string[] = [];
  if (worktree.unpushedCommits > 0)
    parts.push(
      `${plural(worktree.unpushedCommits, 'unpushed commit')}${worktree.branch ? ` on ${worktree.branch}` : ''}`,
    );
  if (worktree.changedFiles.length > 0) {
    const shown = worktree.changedFiles.slice(0, 10).join(', ');
    const more = worktree.changedFiles.length > 10 ? `, and ${worktree.changedFiles.length - 10} more` : '';
    parts.push(`${plural(worktree.changedFiles.length, 'changed file')} (${shown}${more})`);
  }
  if (parts.length === 0) parts.push('work git cannot vouch for (a folder git does not know)');
  return `${worktree.path} holds ${parts.join(' and ')}: removing it deletes that work${worktree.branch ? ' and the branch' : ''}. Send {"confirm": true} to remove it anyway.`;
}

export async function removeKeptWorktree(
  ctx: ServerContext,
  run: RunRecord,
  confirm: boolean,
): Promise<RunRecord> {
  if (!run.worktreeKept || !run.worktreePath)
    throw new ApiError('worktree_not_kept', `run ${run.id} has no kept worktree`);
  const automation = ctx.engine.currentSettings().automations.find((a) => a.id === run.automationId);
  if (!automation)
    throw new ApiError('automation_not_found', `automation '${run.automationId}' is no longer configured`);
  const result = await removeRunWorktree(ctx.store, automation.repository.checkoutPath, run, { confirm });
  if (result.kind === 'unconfirmed')
    throw new ApiError('confirmation_required', confirmationMessage(result.worktree), {
      wouldLose: wouldLose(result.worktree),
    });
  if (result.kind === 'not-kept') throw new ApiError('worktree_not_kept', result.reason);
  if (result.kind === 'failed') throw new ApiError('internal', result.reason);
  return result.run;
}
