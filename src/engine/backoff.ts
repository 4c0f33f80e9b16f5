/**
 * The polling backoff of the seed: wait `poll_interval_seconds` (at most 300 s) after a poll; after
 * an empty or failed poll the next wait doubles, up to 300 s; any discovery resets it.
 * Default sequence of waits after empty polls: 30, 60, 120, 240, 300, 300… After a poll that found
 * work the wait is the base, and the next empty poll already doubles it (30 after the find, then
 * 60, 120…), as the reference's loop does: no second base-length wait.
 */
export const MAX_POLL_INTERVAL_MS = 300_000;

export class Backoff {
  private readonly baseMs: number;
  private currentMs: number;

  constructor(pollIntervalSeconds: number) {
    this.baseMs = Math.min(pollIntervalSeconds * 1000, MAX_POLL_INTERVAL_MS);
    this.currentMs = this.baseMs;
  }

  /** The wait before the next poll, given what this poll found. */
  next(foundSomething: boolean): number {
    if (foundSomething) {
      this.currentMs = Math.min(this.baseMs * 2, MAX_POLL_INTERVAL_MS);
      return this.baseMs;
    }
    const wait = this.currentMs;
    this.currentMs = Math.min(this.currentMs * 2, MAX_POLL_INTERVAL_MS);
    return wait;
  }

  reset(): void {
    this.currentMs = this.baseMs;
  }
}
