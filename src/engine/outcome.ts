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
 */

import { GitHubRateLimitError, PromptRenderError } from '../core/errors.js';
import type { RunStatus } from '../core/types.js';

export type Outcome =
  | { readonly action: 'cancel' }
  | { readonly action: 'park'; readonly until: Date }
  | { readonly action: 'retry' }
  | { readonly action: 'block' }
  | { readonly action: 'fail' };

/** Where the failure happened: discovering items, or one of a run's steps before the agent's exit. */
export type FailureStage = 'discovery' | 'prompt' | 'checkout' | 'launch';

export interface FailureContext {
  stage: FailureStage;
  /** A stop (or, for polls, a drain) was asked while this step ran. */
  stopping?: boolean;
}

export function classifyFailure(error: unknown, context: FailureContext): Outcome {
  if (context.stopping) return { action: 'cancel' };
  if (context.stage === 'discovery') {
    if (error instanceof GitHubRateLimitError && error.resetAt)
      return { action: 'park', until: error.resetAt };
    return { action: 'retry' };
  }
  if (context.stage === 'prompt' && error instanceof PromptRenderError) return { action: 'block' };
  return { action: 'fail' };
}

/** The status of a run whose step failed with `outcome`. */
export function runStatusFor(outcome: Outcome): Extract<RunStatus, 'cancelled' | 'failed'> {
  return outcome.action === 'cancel' ? 'cancelled' : 'failed';
}

/** When a feed whose poll failed with `outcome` is polled again: after its backoff, or later when parked. */
export function nextPollAfterFailure(outcome: Outcome, backoffUntil: number): number {
  return outcome.action === 'park' ? Math.max(backoffUntil, outcome.until.getTime()) : backoffUntil;
}
