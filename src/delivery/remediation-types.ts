/**
 * What a follow-up step (src/delivery/steps/) hands the remediator when a pull request needs the
 * agent again: reviewers asked for changes, checks fail, or the branch conflicts with its base
 * (issue 13). The remediator resumes the delivery's agent session in its worktree (or one recreated
 * from the pull request's head), with `instructions` as curupira's own words and `untrusted` fenced
 * as data, then pushes to the same branch. One action in flight per pull request.
 */
import type { RunRecord } from '../core/types.js';

export interface RemediationRequest {
  cause: 'review' | 'ci' | 'conflict';
  /**
   * What this remediation answers, e.g. `review:<highest review or comment id>`, `ci:<head sha>`,
   * `conflict:<head sha>..<base sha>`: a key already handled for the delivery is never run again.
   */
  key: string;
  /** Counts against `remediation_budget` (reviews and CI failures do; conflict resolution does not). */
  budgeted: boolean;
  /** Curupira's own words to the agent (trusted): what happened and what to do. */
  instructions: string;
  /** Text from GitHub (review bodies, comments, check output, log tails): fenced, never obeyed. */
  untrusted: readonly { label: string; text: string }[];
}

/** What a remediation run needs beyond its task (the executor's `RunRequest.remediation`). */
export interface RemediationRun {
  /** The agent session to resume (the delivery's newest). */
  sessionId: string;
  /** The whole prompt: curupira's instructions and the fenced text from GitHub. */
  prompt: string;
  /** The worktree holding the pull request's head branch (kept, or recreated from the head). */
  worktree: { path: string; branch: string };
  /** The delivery run (recorded as the run's `upstreamRunId`). */
  deliveryRunId: string;
  /** The branch the pull request merges into: the agent configuration comes from it. */
  baseBranch?: string;
  /**
   * After the agent succeeded: pushes the branch; a `failed` reason fails the run, a `held` one
   * (the commits carry a secret or an unasked configuration edit: nothing pushed) blocks it.
   */
  push(run: RunRecord): Promise<{ failed?: string; note?: string; held?: string }>;
}

/**
 * `started`: a remediation run was started (or, after a crash, is still the one in flight);
 * `busy`: another follow-up action of this pull request is in flight; `handled`: this key was
 * already remediated; `exhausted`: `remediation_budget` is spent (the delivery then needs a person);
 * `refused`: the checkout's origin is not the pull request's repository, or nothing to resume.
 */
export type RemediationResult = 'started' | 'busy' | 'handled' | 'exhausted' | 'refused';

/** Mark key (pull_request_marks) of a head commit curupira itself produced (a push or an update of the branch). */
export function ownHeadMark(sha: string): string {
  return `own-head:${sha}`;
}
