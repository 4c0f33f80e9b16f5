/** `run --dry-run`: the first task that would run, found with the real triggers, reserving nothing. */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { sourceFactory } from '../triggers/registry.js';
import { ChainFeed } from './chain.js';
import { CronFeed, EventFeed, type Feed } from './feed.js';

export interface PreviewDeps {
  github(): GitHubClient;
  clock: Clock;
  log: Logger;
  /** A read-only view of the state file, when there is one (cron marks). */
  store: Store;
}

export async function previewFirstTask(
  settings: Settings,
  deps: PreviewDeps,
): Promise<{ automation: ResolvedAutomation; task: Task } | undefined> {
  for (const automation of settings.automations) {
    let feed: Feed;
    if (automation.triggerType === 'cron')
      feed = new CronFeed(automation, settings.execution.polling.cron_poll_interval_seconds);
    else if (automation.triggerType === 'after')
      feed = new ChainFeed(automation, settings.execution.polling.cron_poll_interval_seconds);
    else {
      const factory = sourceFactory(automation.triggerType);
      if (!factory) continue;
      feed = new EventFeed(
        automation,
        factory(automation, deps),
        settings.execution.polling.poll_interval_seconds,
      );
    }
    const tasks = await feed.poll({
      store: deps.store,
      clock: deps.clock,
      log: deps.log,
      limit: settings.execution.polling.batch_size,
      preview: true,
    });
    const task = tasks[0];
    if (task) return { automation, task };
  }
  return undefined;
}
