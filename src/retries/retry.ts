/**
 * The retry policy (issue 15): pure, with the clock's time and the jitter's random number passed
 * in, so tests decide both.
 *
 * A run that failed, timed out or stalled is tried again, up to `max_attempts` tries of its task
 * (the first run included), after 10 s, 20 s, 40 s… capped at 5 minutes, each ±20 % jitter (so a
 * storm of failures does not come back in step). A retry resumes the saved session with the continue
 * prompt (a run that saved none starts afresh). Never retried: blocked, escalated, cancelled,
 * skipped, parked (a usage limit runs again at its reset, without spending a try) and succeeded.
 *
 * Each try that fails also counts against the failure budget (`max_item_failures`, see
 * src/coordination/budget.ts): a try that escalates the item is not retried, so the smaller of
 * `max_attempts` and what is left of the budget stops first.
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { isFailure, type RunRecord } from '../core/types.js';

export const RETRY_BASE_MS = 10_000;
export const RETRY_MAX_MS = 5 * 60_000;
/** The jitter's spread either side of the backoff. */
export const RETRY_JITTER = 0.2;

/**
 * The wait before try `attempt + 1` after try `attempt` failed (1-based): 10 s × 2^(attempt − 1)
 * capped at 5 minutes, scaled by a factor in [0.8, 1.2) from `random` (a number in [0, 1)), and
 * never above the cap.
 */
export function retryDelayMs(attempt: number, random: number): number {
  const base = Math.min(RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1), RETRY_MAX_MS);
  const jittered = base * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random);
  return Math.round(Math.min(jittered, RETRY_MAX_MS));
}

export function maxAttempts(settings: Settings, automation: ResolvedAutomation): number {
  return automation.config.max_attempts ?? settings.execution.max_attempts;
}

export interface RetryPlan {
  /** The try the retry will be. */
  attempt: number;
  maxAttempts: number;
  /** Epoch ms when it is due. */
  at: number;
}

/**
 * Whether (and when) a finished run's task is tried again. `escalated`: the failure budget ran out
 * with this run (no retry then).
 */
export function planRetry(input: {
  run: Pick<RunRecord, 'status' | 'attempt'>;
  maxAttempts: number;
  escalated: boolean;
  now: number;
  random: number;
}): RetryPlan | undefined {
  const { run } = input;
  if (!isFailure(run.status) || input.escalated) return undefined;
  const attempt = run.attempt ?? 1;
  if (attempt >= input.maxAttempts) return undefined;
  return {
    attempt: attempt + 1,
    maxAttempts: input.maxAttempts,
    at: input.now + retryDelayMs(attempt, input.random),
  };
}

/** `retry 2/3 at 14:05:30` (UTC, or the time zone given), for `runs`, `status` and the board. */
export function describeRetry(
  retry: { attempt: number; maxAttempts: number; at: number },
  timeZone = 'UTC',
): string {
  return `retry ${retry.attempt}/${retry.maxAttempts} at ${clockTime(retry.at, timeZone)}`;
}

/** `14:05:30`: backoffs are seconds long, so the seconds matter. */
export function clockTime(at: number, timeZone = 'UTC'): string {
  return new Intl.DateTimeFormat('en-GB', {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZone,
  }).format(new Date(at));
}
