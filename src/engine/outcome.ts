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

import { GitHubRateLimitError, PromptRenderError } from '../core/errors.js';
import type { RunStatus } from '../core/types.js';
import { ClassifierError } from '../screening/classifier/types.js';

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
    if (error instanceof GitHubRateLimitError && error.resetAt)
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

/** When a feed whose poll failed with `outcome` is polled again: after its backoff, or later when parked. */
export function nextPollAfterFailure(outcome: Outcome, backoffUntil: number): number {
  return outcome.action === 'park' ? Math.max(backoffUntil, outcome.until.getTime()) : backoffUntil;
}
