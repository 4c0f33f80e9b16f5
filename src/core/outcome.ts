/**
 * The outcome map: the one place that decides what a failure means, from the error's class or
 * `code` (never its message text) and where it happened.
 *
 * - `cancel`: curupira is stopping; the run is recorded as cancelled, a poll is simply dropped.
 * - `park`: nothing can succeed before `until` (a GitHub rate limit past the client's patience);
 *   the feed is not polled again before then.
 * - `retry`: try again later (a failed poll, with the feed's backoff).
 * - `block`: this item cannot run as it stands (its prompt does not render); its run is recorded
 *   as failed, like `fail` (kept apart so a blocked item can later be marked for a human).
 * - `fail`: the run fails (checkout, setup or launch failed).
 * - `blocked`: screening stopped the item (a required classifier is missing, failed or timed out);
 *   its run is recorded as `blocked`, with no worktree and no agent, and it is not retried until its
 *   text changes or an operator allows it (`curupira allow`).
 */

import { ClassifierError, GitHubRateLimitError, PromptRenderError, SourceRateLimitError } from './errors.js';
import { oneLineReason as oneLine } from './reason.js';
import { outcomeSet, type ParsedResult } from './result-line.js';
import type { RunResult, RunStatus } from './types.js';

export type Outcome =
  | { readonly action: 'cancel' }
  | { readonly action: 'park'; readonly until: Date }
  | { readonly action: 'retry' }
  | { readonly action: 'block' }
  | { readonly action: 'blocked' }
  | { readonly action: 'fail' };

/** Where the failure happened: discovering items, or one of a run's steps before the agent's exit. */
export type FailureStage = 'discovery' | 'screening' | 'prompt' | 'checkout' | 'launch';

export interface FailureContext {
  stage: FailureStage;
  /** A stop (or, for polls, a drain) was asked while this step ran. */
  stopping?: boolean;
}

export function classifyFailure(error: unknown, context: FailureContext): Outcome {
  if (context.stopping) return { action: 'cancel' };
  if (context.stage === 'discovery') {
    if ((error instanceof GitHubRateLimitError || error instanceof SourceRateLimitError) && error.resetAt)
      return { action: 'park', until: error.resetAt };
    return { action: 'retry' };
  }
  if (context.stage === 'prompt' && error instanceof PromptRenderError) return { action: 'block' };
  if (context.stage === 'screening' && error instanceof ClassifierError) return { action: 'blocked' };
  return { action: 'fail' };
}

/** The status of a run whose step failed with `outcome`. */
export function runStatusFor(outcome: Outcome): Extract<RunStatus, 'cancelled' | 'failed' | 'blocked'> {
  if (outcome.action === 'blocked') return 'blocked';
  return outcome.action === 'cancel' ? 'cancelled' : 'failed';
}

/**
 * A run that succeeded without changing anything. Its reason starts with `no changes` (the only
 * reasons that do are these, written where a run ends: src/engine/run/complete.ts, a remediation's
 * push). Such a run does not reset its item's failure count (src/coordination/budget.ts), and a
 * chain after an automation that delivers does not fire on it unless it asks (`on_no_changes`).
 */
export const NO_CHANGES_PREFIX = 'no changes';
export const NO_CHANGES_REASON = `${NO_CHANGES_PREFIX}: the agent finished without a commit or a changed file`;
export const NO_CHANGES_TO_DELIVER_REASON = `${NO_CHANGES_PREFIX} to deliver: the agent made no commit (nothing was pushed)`;
export const NO_NEW_COMMIT_REASON = `${NO_CHANGES_PREFIX}: the agent made no new commit (nothing pushed)`;

export function changedNothing(run: { readonly status: RunStatus; readonly reason: string | null }): boolean {
  return run.status === 'succeeded' && run.reason !== null && run.reason.startsWith(NO_CHANGES_PREFIX);
}

/** When a feed whose poll failed with `outcome` is polled again: after its backoff, or later when parked. */
export function nextPollAfterFailure(outcome: Outcome, backoffUntil: number): number {
  return outcome.action === 'park' ? Math.max(backoffUntil, outcome.until.getTime()) : backoffUntil;
}

/** How an agent's process ended, and what the run saw while it ran (see `agentOutcome`). */
export interface AgentExit {
  executable: string;
  exitCode: number | null;
  signal: string | null;
  cancelled: boolean;
  timedOut: boolean;
  /** The transcript could not be written (`ENOSPC`: the disk is full), so the agent was stopped. */
  writeError?: { code?: string | undefined; path: string; message: string };
  stderrTail: string;
  /** What to do about a failure (a path the sandbox hid from the agent), added to its reason. */
  hint?: string;
  /** The agent printed nothing for `stallMs` and was stopped. */
  stalled: boolean;
  stallMs: number;
  timeoutMs: number;
  /** curupira itself was stopping (a cancel, a stop or reconciliation). */
  stopping: boolean;
  /**
   * This run alone was cancelled (an operator's cancel, its item no longer matching), not all of
   * curupira stopping: its session is not resumed by the next start, whatever else holds it.
   */
  cancelledAlone?: boolean;
  /** Why the store did not take the run's start or session, when that stopped the agent. */
  unrecordedReason?: string;
  /** Why a budget stopped the agent, if one did. */
  budgetReason?: string;
  /** The agent's closing event said the task succeeded, and nothing but usage came after it. */
  reported: boolean;
  /** The agent's final event said it failed, and what it reported. */
  doneWithError: boolean;
  reportedError?: string;
  /** A provider's usage or rate limit found in its output. */
  limit?: { kind: string; message: string; resetAt?: number; provider: string };
  /** A session exists to resume (its id is known). */
  knownSession: boolean;
  /** A budget's soft warning for a successful run. */
  warning?: string | null;
  /** When a limit without a reset time lets the task run again (epoch ms). */
  parkUntil: number;
  /**
   * The automation's declared `outcomes` (issue 32): when set, a run that succeeded is judged by
   * the result the agent reported (`reported`: its result tool, else its final message's line).
   */
  outcomes?: readonly string[];
  reportedResult?: ParsedResult;
}

/**
 * The outcome map for an agent's exit: one row per way a run can end once its agent started, in
 * the order they are tested. `retryAt` is set for a parked run.
 */
export function agentOutcome(exit: AgentExit): {
  status: RunStatus;
  reason: string | null;
  retryAt?: string;
  result?: RunResult | null;
} {
  const ended = exitOutcome(exit);
  if (exit.outcomes === undefined) return ended;
  return { ...ended, ...reportedOutcome(ended, exit.outcomes, exit.reportedResult ?? { kind: 'none' }) };
}

/**
 * The outcome map for a reported result (issue 32), applied to a run whose agent succeeded and whose
 * automation declares `outcomes`: one row per kind of result.
 *
 * - a declared outcome: the run succeeded, with that outcome (chains `on = "<outcome>"`, handoffs);
 * - `noop`: its own status, the item was looked at and there was nothing to do; not a success for
 *   chains, not a failure for the failure budget (which it leaves alone);
 * - `skipped`: the run's existing status of that name, nothing claimed or written;
 * - `failed`: a failure the agent reported, counted like any other;
 * - no result line, or a `#N word` outside the set: a failure that names the declared set, since
 *   the handoffs that follow cannot be decided from prose.
 *
 * A run that did not succeed keeps its status; the result it reported is kept for the record.
 */
export function reportedOutcome(
  ended: { status: RunStatus; reason: string | null },
  declared: readonly string[],
  parsed: ParsedResult,
): { status: RunStatus; reason: string | null; result: RunResult | null } {
  const result = parsed.kind === 'result' ? parsed.result : null;
  if (ended.status !== 'succeeded') return { ...ended, result };
  const set = outcomeSet(declared).join(', ');
  if (parsed.kind === 'none')
    return {
      status: 'failed',
      reason: `the agent reported no result: its final message has no result line (one of: ${set})`,
      result: null,
    };
  if (parsed.kind === 'undeclared')
    return {
      status: 'failed',
      reason: `the agent reported '${parsed.outcome}', which is not one of this automation's outcomes (${set})`,
      result: null,
    };
  const { outcome, reason } = parsed.result;
  const why = reason ?? 'no reason given';
  if (outcome === 'noop') return { status: 'noop', reason: `noop: ${why}`, result };
  if (outcome === 'skipped') return { status: 'skipped', reason: `skipped: ${why}`, result };
  if (outcome === 'failed') return { status: 'failed', reason: `the agent reported failed: ${why}`, result };
  return { status: 'succeeded', reason: ended.reason, result };
}

function exitOutcome(exit: AgentExit): {
  status: RunStatus;
  reason: string | null;
  retryAt?: string;
} {
  const kept = (words: string): string => (exit.knownSession ? words : '');
  if (exit.writeError) {
    const { writeError } = exit;
    return {
      status: 'failed',
      reason:
        writeError.code === 'ENOSPC'
          ? `disk full at ${writeError.path}: the transcript could not be written, so the agent was stopped${kept('; its session resumes once there is space')}`
          : `could not write the transcript ${writeError.path} (${writeError.message}), so the agent was stopped`,
    };
  }
  if (
    exit.reported &&
    ((exit.cancelled && exit.stopping) || (!exit.cancelled && !exit.timedOut && exit.exitCode === null))
  )
    // Stopped (an operator, a shutdown, its item closed) or killed after the agent said it was
    // done: the work is finished, and its session would only be told to continue a task that is over.
    return {
      status: 'succeeded',
      reason: `the agent reported its result and was ${exit.cancelled ? 'stopped' : `killed (${exit.signal ?? 'a signal'})`} before it exited`,
    };
  if (exit.cancelled && exit.stalled && !exit.stopping)
    return {
      status: 'stalled',
      reason: `${exit.executable} printed nothing for ${exit.stallMs / 1000} seconds (stall_timeout_minutes), so it was stopped${kept('; its session is kept')}`,
    };
  if (exit.cancelled && exit.unrecordedReason !== undefined && !exit.stopping)
    return {
      status: 'cancelled',
      reason: `the run's start could not be recorded (${exit.unrecordedReason}), so the agent was stopped${kept('; its session is kept')}`,
    };
  if (exit.cancelled && exit.budgetReason !== undefined && !exit.stopping)
    return {
      status: 'cancelled',
      reason: `${exit.budgetReason}${kept('; the session is kept and resumes then')}`,
    };
  if (exit.cancelled && exit.cancelledAlone)
    return { status: 'cancelled', reason: `cancelled while the agent ran${kept('; its session is kept')}` };
  if (exit.cancelled)
    return {
      status: 'cancelled',
      reason: `stopped by curupira while the agent ran${kept('; the session resumes on the next start')}`,
    };
  if (exit.timedOut)
    return {
      status: 'timed_out',
      reason: `${exit.executable} did not finish within ${exit.timeoutMs / 1000} seconds`,
    };
  if (exit.exitCode === 0 && !exit.doneWithError)
    return { status: 'succeeded', reason: exit.warning ?? null };
  if (exit.limit) {
    const retryAt = new Date(exit.limit.resetAt ?? exit.parkUntil).toISOString();
    return {
      status: 'parked',
      retryAt,
      reason: `${exit.limit.kind === 'usage' ? 'usage' : 'rate'} limit of ${exit.limit.provider}: ${exit.limit.message}; parked until ${retryAt}${exit.limit.resetAt === undefined ? ' (no reset time given: a backoff)' : ''}`,
    };
  }
  const stderr = oneLine(exit.stderrTail);
  return {
    status: 'failed',
    reason:
      exit.exitCode === 0
        ? `${exit.executable} reported an error: ${exit.reportedError ?? 'unknown error'}`
        : exit.hint
          ? // The hint first: a reason is kept to one line of 500 characters.
            `${exit.executable} exited with ${exitDescription(exit)}: ${exit.hint}${stderr ? `; its error output: ${stderr}` : ''}`
          : `${exit.executable} exited with ${exitDescription(exit)}${
              stderr ? `: ${stderr}` : exit.reportedError ? `: ${exit.reportedError}` : ''
            }`,
  };
}

/**
 * What a run's status means to a person reading the board or the figures: the one map from a
 * status to its outcome class. `success` includes `merged` and a `succeeded` run that made no
 * changes; `neutral` is a run that ended without work to judge (cancelled, skipped).
 */
export type RunOutcomeClass =
  | 'running'
  | 'success'
  | 'failure'
  | 'blocked'
  | 'attention'
  | 'parked'
  | 'neutral';

export const RUN_OUTCOME_CLASS = {
  queued: 'running',
  preparing: 'running',
  running: 'running',
  succeeded: 'success',
  merged: 'success',
  failed: 'failure',
  timed_out: 'failure',
  stalled: 'failure',
  blocked: 'blocked',
  escalated: 'attention',
  parked: 'parked',
  cancelled: 'neutral',
  skipped: 'neutral',
  noop: 'neutral',
} as const satisfies Record<RunStatus, RunOutcomeClass>;

export const RUN_OUTCOME_CLASSES: readonly RunOutcomeClass[] = [
  'success',
  'failure',
  'blocked',
  'attention',
  'parked',
  'running',
  'neutral',
];

export function runOutcomeClass(status: RunStatus): RunOutcomeClass {
  return RUN_OUTCOME_CLASS[status] ?? 'attention';
}

/** `status 2`, `signal SIGKILL`, or an unknown status (the helper that started the agent was lost). */
function exitDescription(exit: AgentExit): string {
  if (exit.exitCode !== null) return `status ${exit.exitCode}`;
  if (exit.signal !== null) return `signal ${exit.signal}`;
  return 'an unknown status (the helper process that started it was lost while it ran)';
}

/**
 * What a run's own cancel signal is aborted with (an operator's cancel, reconciliation), so that
 * the run, whose signal also aborts when all of curupira stops, can tell the two apart.
 */
export const RUN_CANCELLED: Error = Object.freeze(
  Object.assign(new Error('this run was cancelled'), { name: 'AbortError' }),
);
