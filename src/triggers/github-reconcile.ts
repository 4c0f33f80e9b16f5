/**
 * Reconciliation for issue and pull-request triggers (issue 12, item 6): each active task's item is
 * read again (one small query per item) and compared with the automation's state and label
 * filters. A closed, merged or deleted item, a required label removed or an excluded label added
 * means the item no longer matches. The other filters (assignee, author, milestone, project) are
 * not re-checked here.
 */
import { GitHubGraphQLError } from '../core/errors.js';
import type { Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { ITEM_STATE, type ItemStatePage } from '../github/operations.js';

export interface MatchFilters {
  /** `open`, `closed` or `all` (pull requests: `merged` counts as closed). */
  state: string;
  labels: readonly string[];
  exclude_labels: readonly string[];
}

type ItemStateNode = NonNullable<NonNullable<ItemStatePage['repository']>['issueOrPullRequest']>;

const quoted = (names: readonly string[]): string => names.map((n) => `'${n}'`).join(', ');

/** Why the item no longer matches the filters, or undefined when it still does. */
export function whyUnmatched(node: ItemStateNode | null, filters: MatchFilters): string | undefined {
  if (!node) return 'item deleted';
  const state = (node.__typename === 'Issue' ? node.state : node.pullRequestState).toLowerCase();
  if (filters.state === 'open' && state !== 'open')
    return state === 'merged' ? 'pull request merged' : 'item closed';
  if (filters.state === 'closed' && state === 'open') return 'item reopened';
  // GitHub's label qualifiers ignore case.
  const labels = new Set((node.labels?.nodes ?? []).map((l) => l?.name.toLowerCase()));
  const missing = filters.labels.filter((l) => !labels.has(l.toLowerCase()));
  if (missing.length > 0) return `label ${quoted(missing)} removed`;
  const excluded = filters.exclude_labels.filter((l) => labels.has(l.toLowerCase()));
  if (excluded.length > 0) return `label ${quoted(excluded)} added`;
  return undefined;
}

function deleted(error: unknown): boolean {
  return error instanceof GitHubGraphQLError && error.errors.every((e) => e.type === 'NOT_FOUND');
}

/** The tasks whose item no longer matches, by task key, with the reason. */
export async function unmatchedItems(
  github: GitHubClient,
  tasks: readonly Task[],
  filters: MatchFilters,
  signal?: AbortSignal,
): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  for (const task of tasks) {
    signal?.throwIfAborted();
    const [owner, name] = task.identity.repo.split('/');
    let node: ItemStateNode | null;
    try {
      const { data } = await github.graphql<ItemStatePage>(ITEM_STATE, {
        owner,
        name,
        number: Number(task.item.id),
      });
      node = data.repository?.issueOrPullRequest ?? null;
    } catch (error) {
      if (!deleted(error)) throw error;
      node = null;
    }
    const reason = whyUnmatched(node, filters);
    if (reason) reasons.set(task.key, reason);
  }
  return reasons;
}
