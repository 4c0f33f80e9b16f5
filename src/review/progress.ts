/**
 * "Reviewed up to" (issue 29): the commit the last finished review of a watch reached. A review is
 * finished when its agent called `findings_done` (its word is kept under the run), or when the run
 * succeeded without it (an agent not offered the tools, or one that never called it: its commit
 * counts as reviewed, else every tick and restart would pay for the same range again); then,
 * whether it was incremental or a baseline, the watch's mark moves to the commit it reviewed. A
 * review that failed, timed out or was stopped leaves the mark where it was, so its commits are
 * reviewed again next time.
 */
import type { Store } from '../store/types.js';

/** Where `findings_done` leaves its word for a run (a meta key). */
export function reviewDoneKey(runId: string): string {
  return `review-done:${runId}`;
}

function reviewedUpToKey(watch: string): string {
  return `review-reviewed-up-to:${watch}`;
}

export interface ReviewDone {
  summary: string;
  reviewedCommit: string;
  at: string;
}

/** The commit the watch's last finished review reached; null before the first. */
export async function reviewedUpTo(store: Store, watch: string): Promise<string | null> {
  return (await store.getMeta(reviewedUpToKey(watch))) ?? null;
}

/**
 * Moves the watch's "reviewed up to" to `commit`: for a watch that starts from now (`first_review =
 * "from_now"`), so only what lands after it is reviewed, and for a review that succeeded without
 * `findings_done`.
 */
export async function markReviewed(store: Store, watch: string, commit: string): Promise<void> {
  await store.setMeta(reviewedUpToKey(watch), commit);
}

/** What the run's agent said with `findings_done`, if it did. */
export async function reviewDone(store: Store, runId: string): Promise<ReviewDone | undefined> {
  const text = await store.getMeta(reviewDoneKey(runId));
  return text ? (JSON.parse(text) as ReviewDone) : undefined;
}

/**
 * After a review run: when it finished (`findings_done`), the watch's "reviewed up to" moves to its
 * commit and its word is returned; otherwise nothing moves and undefined is returned.
 */
export async function settleReview(
  store: Store,
  watch: string,
  runId: string,
): Promise<ReviewDone | undefined> {
  const done = await reviewDone(store, runId);
  if (done) await store.setMeta(reviewedUpToKey(watch), done.reviewedCommit);
  return done;
}
