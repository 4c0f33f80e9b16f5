/** How the engine asks an event trigger for work. Cron and chains are driven by the engine itself. */
import type { AnyAutomation, ResolvedAutomation } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { Item } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { Logger } from '../log.js';
import type { ServiceKit } from './service.js';

export interface DiscoverRequest {
  /** Items wanted at most (`batch_size`). */
  limit: number;
  signal?: AbortSignal;
  /**
   * Items this process already handled answer false: they are skipped, do not count towards `limit`,
   * and discovery pages past them, so a backlog that keeps matching never hides newer items.
   */
  wanted?: (item: Item) => boolean;
  /** Told how many items match in all (GitHub's count), and how many discovery looked at. */
  onTotal?: (report: { matching: number; examined: number }) => void;
}

export interface TriggerSource {
  discover(request: DiscoverRequest): Promise<Item[]>;
  /**
   * A cheap conditional read that changes whenever an item of the source may have changed (a GET
   * with `If-None-Match`; a 304 costs no rate-limit point): lets an idle poll skip `discover`.
   */
  probe?(
    etag: string | undefined,
    signal?: AbortSignal,
  ): Promise<{ changed: boolean; etag: string | undefined }>;
}

export interface SourceContext {
  /** The GitHub client, created on first use (cron-only settings never need a token). */
  github(): GitHubClient;
  clock: Clock;
  log: Logger;
  /** A source outside GitHub: its credential (environment or file) and HTTP to its service. */
  service: ServiceKit;
}

export type SourceFactory<A extends AnyAutomation = ResolvedAutomation> = (
  automation: A,
  context: SourceContext,
) => TriggerSource;
