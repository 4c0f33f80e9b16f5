/** Builds an automation's feed through its trigger's `createFeed` hook, handing it the engine's feeds. */
import type { PollingSettings, ResolvedAutomation } from '../config/types.js';
import type { SourceContext } from '../triggers/source.js';
import type { FeedKit } from '../triggers/types.js';
import { ChainFeed } from './chain.js';
import { EventFeed, type Feed, ScheduleFeed } from './feed.js';
import { WatchFeed } from './watch-feed.js';

/** `automations`: every configured automation (a chain looks up its upstream's `deliver`). */
export function feedKit(polling: PollingSettings, automations: readonly ResolvedAutomation[] = []): FeedKit {
  return {
    polled: (automation, source) =>
      new EventFeed(automation, source, polling.poll_interval_seconds, polling.max_staleness_seconds * 1000),
    schedule: (automation, schedule) =>
      new ScheduleFeed(automation, schedule, polling.cron_poll_interval_seconds),
    chain: (automation, chain) => {
      const upstream = automations.find((a) => a.id === chain.upstream);
      const delivers = upstream !== undefined && 'deliver' in upstream.config && !!upstream.config.deliver;
      return new ChainFeed(
        automation,
        chain,
        polling.cron_poll_interval_seconds,
        delivers,
        upstream ? [upstream] : [],
      );
    },
    watch: (automation, watch) => new WatchFeed(automation, watch, polling.poll_interval_seconds),
  };
}

export function createFeed(
  automation: ResolvedAutomation,
  polling: PollingSettings,
  context: SourceContext,
  automations: readonly ResolvedAutomation[] = [],
): Feed {
  return automation.trigger.createFeed(automation, {
    github: context.github,
    clock: context.clock,
    log: context.log,
    service: context.service,
    feeds: feedKit(polling, automations),
  });
}
