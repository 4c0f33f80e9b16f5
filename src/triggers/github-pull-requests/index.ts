import type { Item } from '../../core/types.js';
import { type PullRequestNode, SEARCH_PULL_REQUESTS } from '../../github/operations.js';
import { isBotAuthor } from '../../github/query.js';
import { searchAll } from '../../github/search.js';
import { githubItem } from '../github-item.js';
import { unmatchedItems } from '../github-reconcile.js';
import {
  commentOnPullRequest,
  defaultTimezone,
  noUpstreamRun,
  repositoryChanges,
  sameRepository,
  searchCountCheck,
  stringField,
} from '../hooks.js';
import type { SourceFactory } from '../source.js';
import type { TriggerDefinition } from '../types.js';
import {
  type GitHubPullRequestsAutomation,
  type GitHubPullRequestsResolved,
  githubPullRequestsTable,
  pullRequestSearchQuery,
} from './schema.js';

/**
 * A pull request as prompt fields. Mergeability and merge state change on their own (when the base
 * branch moves, when checks finish), so they are prompt fields but not part of the fingerprint.
 */
export function pullRequestItem(
  node: Omit<PullRequestNode, 'state'> & { state?: string; pullRequestState?: string },
): Item {
  const state = (node.pullRequestState ?? node.state ?? '').toLowerCase();
  const item = githubItem(
    node,
    { prefix: 'pull_request', key: 'pr', state },
    {
      pull_request_is_draft: node.isDraft,
      pull_request_head_ref: node.headRefName,
      pull_request_base_ref: node.baseRefName,
      pull_request_head_sha: node.headRefOid,
      pull_request_additions: node.additions,
      pull_request_deletions: node.deletions,
      pull_request_changed_files: node.changedFiles,
    },
  );
  return {
    ...item,
    volatile: {
      pull_request_mergeable: node.mergeable,
      pull_request_merge_state_status: node.mergeStateStatus,
      pull_request_from_fork: node.isCrossRepository ?? false,
      ...item.volatile,
    },
  };
}

/** The post-filters `mergeable` and `merge_state`, applied after the search. */
export function passesPostFilters(
  node: Pick<PullRequestNode, 'mergeable' | 'mergeStateStatus'>,
  config: GitHubPullRequestsAutomation,
): boolean {
  if (config.mergeable !== undefined && node.mergeable !== (config.mergeable ? 'MERGEABLE' : 'CONFLICTING'))
    return false;
  if (
    config.merge_state.length > 0 &&
    !config.merge_state.includes(node.mergeStateStatus as (typeof config.merge_state)[number])
  ) {
    return false;
  }
  return true;
}

/** Mergeability and merge state are not search qualifiers: they filter what the search returns. */
function hasPostFilters(config: GitHubPullRequestsAutomation): boolean {
  return config.mergeable !== undefined || config.merge_state.length > 0;
}

/** `ignore_bots`: the authors the query cannot leave out (every bot but Dependabot and Renovate). */
function passesAuthorFilter(
  node: Pick<PullRequestNode, 'author'>,
  config: GitHubPullRequestsAutomation,
): boolean {
  return !config.ignore_bots || !isBotAuthor(node.author);
}

export const createGitHubPullRequestsSource: SourceFactory<GitHubPullRequestsResolved> = (
  automation,
  context,
) => {
  const { config } = automation;
  const query = pullRequestSearchQuery(config);
  const postFiltered = hasPostFilters(config);
  return {
    async discover({ limit, signal, wanted, onTotal }) {
      const result = await searchAll<PullRequestNode>(
        context.github(),
        SEARCH_PULL_REQUESTS,
        query,
        'PullRequest',
        limit,
        signal,
        postFiltered || wanted || config.ignore_bots
          ? (node) =>
              (!postFiltered || passesPostFilters(node, config)) &&
              passesAuthorFilter(node, config) &&
              (!wanted || wanted(pullRequestItem(node)))
          : undefined,
      );
      onTotal?.({ matching: result.total, examined: result.examined });
      return result.nodes.filter((node) => passesAuthorFilter(node, config)).map(pullRequestItem);
    },
    // CI status and mergeability change without touching a pull request's update time: those
    // filters keep searching on every poll.
    ...(postFiltered || config.ci_status !== undefined
      ? {}
      : { probe: repositoryChanges(config.repo, context.github) }),
  };
};

export const githubPullRequestsTrigger: TriggerDefinition<GitHubPullRequestsResolved> = {
  ...githubPullRequestsTable,
  serialRuns: false,
  githubItem: 'pull-request',
  pullRequest(task) {
    const { fields } = task.item;
    const number = Number(task.item.id);
    if (!Number.isInteger(number) || number <= 0) return undefined;
    return {
      number,
      headSha: stringField(fields.pull_request_head_sha),
      headRef: stringField(fields.pull_request_head_ref),
      baseRef: stringField(fields.pull_request_base_ref),
      fromFork: task.item.volatile?.pull_request_from_fork === true,
    };
  },
  createFeed(automation, context) {
    return context.feeds.polled(automation, createGitHubPullRequestsSource(automation, context));
  },
  doctor: {
    needs: 'github',
    check: (automation, context) =>
      searchCountCheck(pullRequestSearchQuery(automation.config), hasPostFilters(automation.config), context),
  },
  screening: {
    target: (automation, task) => ({
      source: { repo: task.identity.repo, number: Number(task.item.id) },
      title: task.item.title,
      body: task.item.body,
      author: stringField(task.item.fields.pull_request_author),
      headBranch: stringField(task.item.fields.pull_request_head_ref) ?? '',
      labels: automation.config.labels,
    }),
  },
  webhooks: {
    events: [
      'pull_request',
      'pull_request_review',
      'pull_request_review_comment',
      'pull_request_review_thread',
      'check_suite',
      'check_run',
      'status',
      'issue_comment',
    ],
    concerns: (automation, event, payload) =>
      (event !== 'issue_comment' || commentOnPullRequest(event, payload)) &&
      sameRepository(automation.config.repo, payload),
  },
  authorField: 'pull_request_author',
  unmatched: (automation, tasks, context) =>
    unmatchedItems(context.github(), tasks, automation.config, context.signal),
  upstreamRunId: noUpstreamRun,
  resolveTimezone: defaultTimezone,
};
