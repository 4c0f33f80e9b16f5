/**
 * Reconciliation for issue and pull-request triggers (issue 12, item 6): the items of active tasks
 * are read again, all in one request per 100 items (issue 34, item 3), and compared with the
 * automation's state and label filters. A closed, merged or deleted item, a required label removed
 * or an excluded label added means the item no longer matches. The other filters (assignee,
 * author, milestone, project) are not re-checked here.
 */
import { GitHubGraphQLError } from '../core/errors.js';
import type { Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import {
  ITEM_STATES_PER_REQUEST,
  type ItemRef,
  type ItemStateNode,
  itemRefKey,
  itemStatesOperation,
} from '../github/operations.js';

export interface MatchFilters {
  /** `open`, `closed` or `all` (pull requests: `merged` counts as closed). */
  state: string;
  labels: readonly string[];
  exclude_labels: readonly string[];
}

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

/**
 * One request's answer. Items (or repositories) that do not exist come back null with a `NOT_FOUND`
 * error at their path while the others are answered: those count as deleted. Any other error fails
 * the whole check (it is tried again at the next one).
 */
async function readStates(
  github: GitHubClient,
  refs: readonly ItemRef[],
): Promise<Map<string, ItemStateNode | null>> {
  const operation = itemStatesOperation(refs);
  try {
    const { data } = await github.graphql<unknown>(operation.query, operation.variables);
    return operation.nodes(data);
  } catch (error) {
    const notFound = error instanceof GitHubGraphQLError && error.errors.every((e) => e.type === 'NOT_FOUND');
    if (!notFound || error.data === null) throw error;
    return operation.nodes(error.data);
  }
}

/** The tasks whose item no longer matches, by task key, with the reason. */
export async function unmatchedItems(
  github: GitHubClient,
  tasks: readonly Task[],
  filters: MatchFilters,
  signal?: AbortSignal,
): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  const refs = new Map<string, ItemRef>();
  for (const task of tasks) {
    const number = Number(task.item.id);
    // Not an issue or pull-request number: nothing on GitHub can say it still matches.
    if (!Number.isSafeInteger(number) || number < 1) reasons.set(task.key, 'item deleted');
    else refs.set(task.key, { repo: task.identity.repo, number });
  }
  const all = [...refs.values()];
  const nodes = new Map<string, ItemStateNode | null>();
  for (let i = 0; i < all.length; i += ITEM_STATES_PER_REQUEST) {
    signal?.throwIfAborted();
    for (const [key, node] of await readStates(github, all.slice(i, i + ITEM_STATES_PER_REQUEST)))
      nodes.set(key, node);
  }
  for (const [taskKey, ref] of refs) {
    const reason = whyUnmatched(nodes.get(itemRefKey(ref)) ?? null, filters);
    if (reason) reasons.set(taskKey, reason);
  }
  return reasons;
}
