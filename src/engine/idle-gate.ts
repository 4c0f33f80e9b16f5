/**
 * Idle polls that cost nothing (issue 15, item 8). Before its search, an event feed asks GitHub a
 * cheap question whose answer changes whenever an issue or pull request of the repository changes
 * (`probeIssueChanges` in src/github/rest.ts: the most recently updated item) with the ETag of
 * the last answer. A 304 costs no rate-limit point and means nothing changed: the search is skipped.
 * Any change runs the search at once; a search still runs at least every `max_staleness_seconds`
 * (0: only on a change), and whenever the feed has reasons of its own (items forgotten or waiting).
 *
 * The ETag is kept only once the search it preceded succeeded, so a failed search is tried again
 * on the next poll. A failed probe runs the search, as before this existed.
 */
import type { Clock } from '../core/clock.js';
import type { TriggerSource } from '../triggers/source.js';

type Probe = NonNullable<TriggerSource['probe']>;

export class IdleGate {
  private etag: string | undefined;
  /** ETag of the answer seen before the search in flight; kept once that search succeeds. */
  private pending: string | undefined;
  private lastSearchAt = Number.NEGATIVE_INFINITY;
  /** Probes answered 304 and searches skipped, for the board and tests. */
  skipped = 0;

  constructor(
    private readonly probe: Probe,
    private readonly maxStalenessMs: number,
    private readonly clock: Clock,
  ) {}

  /** True when the search can be skipped: GitHub said nothing changed and the last search is fresh. */
  async unchanged(force: boolean, signal?: AbortSignal): Promise<boolean> {
    let answer: { changed: boolean; etag: string | undefined };
    try {
      answer = await this.probe(this.etag, signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      return false;
    }
    this.pending = answer.etag;
    const stale = this.maxStalenessMs > 0 && this.clock.now() - this.lastSearchAt >= this.maxStalenessMs;
    if (answer.changed || force || stale || this.etag === undefined) return false;
    this.skipped += 1;
    return true;
  }

  /** The search ran and succeeded: its ETag and time count from now. */
  searched(at: number): void {
    this.lastSearchAt = at;
    if (this.pending !== undefined) this.etag = this.pending;
  }
}
