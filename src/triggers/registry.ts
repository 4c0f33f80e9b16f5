/** Discovery by trigger type. Cron is driven by the engine's clock, not polled through a source. */
import { createGitHubIssuesSource } from './github-issues/index.js';
import { createGitHubProjectItemsSource } from './github-project-items/index.js';
import { createGitHubPullRequestsSource } from './github-pull-requests/index.js';
import type { SourceFactory } from './source.js';
import type { TriggerType } from './types.js';

export const SOURCE_FACTORIES: Partial<Record<TriggerType, SourceFactory>> = {
  'github-issues': createGitHubIssuesSource,
  'github-pull-requests': createGitHubPullRequestsSource,
  'github-project-items': createGitHubProjectItemsSource,
};

export function sourceFactory(type: TriggerType): SourceFactory | undefined {
  return SOURCE_FACTORIES[type];
}
