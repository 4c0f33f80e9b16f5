/**
 * The end of a run: the session (dropped on success, counted when a resume failed), delivery,
 * whether the agent changed anything, the worktree, and the final record. Also finishes, after a
 * restart, a run whose agent had exited when curupira died.
 */
import type { ResolvedAutomation } from '../../config/types.js';
import { errorMessage } from '../../core/errors.js';
import { NO_CHANGES_REASON, NO_CHANGES_TO_DELIVER_REASON } from '../../core/outcome.js';
import { isFailure, type RunRecord, type RunStatus, type Task } from '../../core/types.js';
import { type DeliveryResult, deliverRun } from '../../delivery/deliver.js';
import {
  type AdditionalDelivery,
  deliverAdditional,
  finishAdditionalWorktrees,
  spansOf,
} from '../../delivery/multi.js';
import { crashPoint } from '../../process/crash-point.js';
import type { Store } from '../../store/types.js';
import { finishWorktree, hasChanges, headCommit } from '../../workspace/index.js';
import { isRemediation, oneLineReason, poolSize, taskStub } from './helpers.js';
import type { ExecutorDeps, RemediationRun } from './types.js';

export interface CompletionInput {
  status: RunStatus;
  reason: string | null;
  /** A remediation run: a success pushes through its hook instead of delivering. */
  remediation?: RemediationRun;
  /** The run continued a saved session. */
  resumed: boolean;
  /** The agent CLI said it has no such conversation (its driver's `missingSession`). */
  sessionMissing?: boolean;
  baseCommit: string | null;
  checkNoChanges: boolean;
  cwd: string;
  worktree?: { path: string; branch: string };
  finish(
    status: RunStatus,
    reason: string | null,
    patch?: Parameters<Store['updateRun']>[1],
  ): Promise<RunRecord>;
  cleanup(): Promise<Cleaned>;
}

/** What cleaning up after a run found: the run record's fields, and HEAD when a worktree was inspected. */
export interface Cleaned {
  patch: Parameters<Store['updateRun']>[1];
  head?: string | null;
  /** The worktree held changes or unpushed commits (known when it was inspected); absent: `patch.worktreeKept` says. */
  heldWork?: boolean;
}

/**
 * After the agent: the session (dropped on success, counted when a resume failed), whether the
 * agent changed anything, the worktree, and the final record. Also finishes, after a restart, a run
 * whose agent had exited when curupira died.
 */
export async function completeRun(
  deps: ExecutorDeps,
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
  input: CompletionInput,
): Promise<RunRecord> {
  const { store } = deps;
  const settled = await settleSession(deps, automation, task, run, input);
  // Without a worktree HEAD is read here; a worktree's cleanup inspects it (before removing it).
  const check = input.checkNoChanges && input.baseCommit !== null;
  const mainHead = check && !input.worktree ? await headCommit(input.cwd).catch(() => null) : null;
  // A remediation pushes to its delivery's branch; one finished after a restart (no hook) leaves
  // the push to the remediator, and never opens a delivery of its own.
  const remediating = input.remediation !== undefined || (await isRemediation(store, run));
  let { status, reason, delivered } = await deliverAfterRun(deps, automation, task, run, input, {
    status: input.status,
    reason: settled,
    remediating,
  });
  if (!remediating && automation.additionalRepositories?.length)
    await finishAdditionalWorktrees(deps, { automation, task }, poolSize(deps.execution));
  const cleaned = await input.cleanup();
  crashPoint('run-cleaned');
  const head = !check ? null : input.worktree ? (cleaned.head ?? null) : mainHead;
  if (!delivered && head !== null && head === input.baseCommit) {
    const changed = input.worktree
      ? (cleaned.heldWork ?? cleaned.patch.worktreeKept === true)
      : await hasChanges(input.cwd).catch(() => true);
    if (!changed) reason = NO_CHANGES_REASON;
  }
  return input.finish(status, reason, cleaned.patch);
}

/**
 * The agent's session after its run: dropped on success, counted when a resume failed (and dropped,
 * said in the returned reason, once it failed `max_resume_failures` times in a row).
 */
async function settleSession(
  deps: ExecutorDeps,
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
  input: CompletionInput,
): Promise<string | null> {
  const { store, log } = deps;
  const { status } = input;
  let { reason } = input;
  if (finishedWork(status)) {
    // Not durable on its own: the final record is. A power cut that loses both leaves the run
    // unfinished with its outcome saved, which a restart finishes (deleting the session again).
    await store.deleteSession(task.key, { durable: false });
  } else if (input.resumed && isFailure(status) && input.sessionMissing) {
    // The CLI does not have the conversation: resuming it again can only fail the same way.
    await store.deleteSession(task.key);
    reason =
      `${reason ?? status}; the agent CLI no longer has the saved session ${run.sessionId ?? ''}`.trimEnd();
    reason += ', so it was dropped: the next run starts a fresh session';
    log.warn(
      { automation: automation.id, run: run.id, session: run.sessionId ?? undefined },
      'Dropped a saved session the agent CLI does not have',
    );
  } else if (input.resumed && isFailure(status)) {
    const failures = await store.recordResumeFailure(task.key);
    const limit = deps.execution.max_resume_failures;
    if (failures >= limit) {
      await store.deleteSession(task.key);
      reason = `${reason ?? status}; the saved session failed to resume ${failures} time${failures === 1 ? '' : 's'} in a row (max_resume_failures = ${limit}), so it was dropped: the next run starts a fresh session`;
      log.warn(
        { automation: automation.id, run: run.id, session: run.sessionId ?? undefined, failures },
        'Dropped a session that keeps failing to resume',
      );
    }
  }
  return reason;
}

interface AfterRun {
  status: RunStatus;
  reason: string | null;
  delivered: boolean;
}

/**
 * A succeeded run's work handed on: a remediation pushes to its delivery's branch; a run of an
 * automation that delivers opens (or adopts) its pull request, in each of its repositories.
 */
async function deliverAfterRun(
  deps: ExecutorDeps,
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
  input: CompletionInput,
  from: { status: RunStatus; reason: string | null; remediating: boolean },
): Promise<AfterRun> {
  let { status, reason } = from;
  let delivered = false;
  if (status === 'succeeded' && input.remediation) {
    const pushed = await input.remediation.push(run);
    if (pushed.failed) [status, reason] = ['failed', pushed.failed];
    else if (pushed.held) [status, reason] = ['blocked', pushed.held];
    else {
      delivered = true;
      if (pushed.note) reason ??= pushed.note;
    }
    return { status, reason, delivered };
  }
  if (
    from.remediating ||
    status !== 'succeeded' ||
    !deps.delivery ||
    !automation.config.deliver ||
    !run.branch ||
    !run.worktreePath
  )
    return { status, reason, delivered };
  const spans = spansOf({ automation, task });
  const result = await deliverRun(deps.delivery, {
    automation,
    task,
    run,
    cwd: run.worktreePath,
    branch: run.branch,
    env: deps.env,
    ...(spans ? { spans } : {}),
  });
  // A task across repositories: each other repository delivered the same way (delivery/multi.ts).
  const additional = spans
    ? await deliverAdditional(deps.delivery, { automation, task, run, env: deps.env })
    : [];
  if (additional.length > 0) {
    [status, reason, delivered] = combined(status, reason, result, additional, task.identity.repo);
  } else if (result.kind === 'failed') [status, reason] = ['failed', result.reason];
  else if (result.kind === 'held') [status, reason] = ['blocked', result.reason];
  else if (result.kind === 'no-changes') reason ??= NO_CHANGES_TO_DELIVER_REASON;
  else if (result.kind === 'not-pushed') reason = joinReason(reason, result.reason);
  else {
    delivered = true;
    reason = joinReason(reason, deliveredNote(result));
  }
  return { status, reason, delivered };
}

/** The agent finished its task: succeeded, or reported there was nothing to do (`noop`, `skipped`). */
function finishedWork(status: RunStatus): boolean {
  return status === 'succeeded' || status === 'noop' || status === 'skipped';
}

function joinReason(reason: string | null, note: string): string {
  return reason ? `${reason}; ${note}` : note;
}

/**
 * A task across repositories: failed when one repository's delivery failed, blocked when one was
 * held, else delivered when any repository delivered; the reason names each repository's outcome.
 */
function combined(
  status: RunStatus,
  reason: string | null,
  primary: DeliveryResult,
  additional: readonly AdditionalDelivery[],
  primaryRepo: string,
): [RunStatus, string | null, boolean] {
  const all = [{ repo: primaryRepo, result: primary }, ...additional];
  const failed = all.filter((d) => d.result.kind === 'failed');
  const held = all.filter((d) => d.result.kind === 'held');
  const words = (d: (typeof all)[number]): string => {
    const { result } = d;
    if (result.kind === 'failed' || result.kind === 'held' || result.kind === 'not-pushed')
      return `${d.repo}: ${result.reason}`;
    if (result.kind === 'no-changes') return `${d.repo}: no changes`;
    return `${d.repo}: ${deliveredNote(result)}`;
  };
  const note = all.map(words).join('; ');
  if (failed.length > 0) return ['failed', note, false];
  if (held.length > 0) return ['blocked', note, false];
  const delivered = all.some((d) => d.result.kind === 'delivered' || d.result.kind === 'pushed-head');
  return [status, delivered ? joinReason(reason, note) : (reason ?? NO_CHANGES_TO_DELIVER_REASON), delivered];
}

/** The run's summary line names what its delivery did: the pull request, or the branch pushed. */
function deliveredNote(
  result: Exclude<DeliveryResult, { kind: 'failed' | 'held' | 'no-changes' | 'not-pushed' }>,
): string {
  if (result.kind === 'pushed-head')
    return `pushed ${result.sha.slice(0, 12)} to pull request #${result.number}'s branch ${result.branch}`;
  const { record } = result;
  if (record.number !== null)
    return `${record.adopted ? 'adopted' : 'opened'} pull request #${record.number}${record.url ? ` ${record.url}` : ''} (branch ${record.headBranch})`;
  return `pushed branch ${record.headBranch}`;
}

/**
 * A run whose agent had exited (its outcome saved) when curupira died: finish it as that outcome
 * said, with the same cleanup, instead of resuming a session whose work is done.
 */
export async function finishInterruptedRun(
  deps: ExecutorDeps,
  automation: ResolvedAutomation | undefined,
  run: RunRecord,
): Promise<RunRecord> {
  const outcome = run.agentOutcome!;
  const note = 'finished after a restart: curupira stopped after the agent was done';
  const reason = outcome.reason ? `${outcome.reason} (${note})` : note;
  const finish = async (
    status: RunStatus,
    why: string | null,
    patch: Parameters<Store['updateRun']>[1] = {},
  ): Promise<RunRecord> => {
    const record = await deps.store.updateRun(run.id, {
      status,
      reason: why === null ? null : oneLineReason(why),
      finishedAt: new Date(deps.clock.now()).toISOString(),
      agentPid: null,
      ...patch,
    });
    deps.log.info(
      { automation: run.automationId, run: run.id, result: status },
      'Finished an interrupted run',
    );
    if (automation) await deps.writes?.finished(automation, taskStub(record), record);
    return record;
  };
  const cleanup = async (): Promise<Cleaned> => {
    if (!automation || !run.worktreePath || !run.branch) return { patch: {} };
    try {
      const result = await finishWorktree({
        checkoutPath: automation.repository.checkoutPath,
        path: run.worktreePath,
        branch: run.branch,
        log: deps.log,
        key: run.taskKey,
        pool: poolSize(deps.execution),
        keepAlways: automation.config.keep_worktree === 'always',
      });
      return { patch: { worktreeKept: result.kept, commits: result.unpushedCommits } };
    } catch (error) {
      deps.log.warn({ run: run.id, error: errorMessage(error) }, 'Could not clean up worktree');
      return { patch: { worktreeKept: true } };
    }
  };
  if (!automation) {
    if (finishedWork(outcome.status)) await deps.store.deleteSession(run.taskKey);
    return finish(outcome.status, reason);
  }
  const task = (await deps.store.getSession(run.taskKey))?.task;
  return completeRun(deps, automation, task ?? taskStub(run), run, {
    status: outcome.status,
    reason,
    resumed: run.resumed,
    baseCommit: null,
    checkNoChanges: false,
    cwd: run.worktreePath ?? automation.repository.checkoutPath,
    finish,
    cleanup,
  });
}
