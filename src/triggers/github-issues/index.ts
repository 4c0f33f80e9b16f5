import type { Item } from '../../core/types.js';
import { type IssueNode, SEARCH_ISSUES } from '../../github/operations.js';
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
import { type GitHubIssuesResolved, githubIssuesTable, issueSearchQuery } from './schema.js';

/** An issue as prompt fields, in the documented order; nothing here changes on its own. */
export function issueItem(node: IssueNode): Item {
  return githubItem(node, { prefix: 'issue', key: 'issue', state: node.state.toLowerCase() });
}

export const createGitHubIssuesSource: SourceFactory<GitHubIssuesResolved> = (automation, context) => {
  const { config } = automation;
  const query = issueSearchQuery(config);
  return {
    async discover({ limit, signal, wanted, onTotal }) {
      const result = await searchAll<IssueNode>(
        context.github(),
        SEARCH_ISSUES,
        query,
        'Issue',
        limit,
        signal,
        wanted || config.ignore_bots
          ? (node) =>
              (!config.ignore_bots || !isBotAuthor(node.author)) && (!wanted || wanted(issueItem(node)))
          : undefined,
      );
      onTotal?.({ matching: result.total, examined: result.examined });
      // `ignore_bots`: the bots the query cannot name are left out here.
      return result.nodes.filter((node) => !config.ignore_bots || !isBotAuthor(node.author)).map(issueItem);
    },
    probe: repositoryChanges(config.repo, context.github),
  };
};

export const githubIssuesTrigger: TriggerDefinition<GitHubIssuesResolved> = {
  ...githubIssuesTable,
  serialRuns: false,
  describedAs: 'an issue trigger',
  githubItem: 'issue',
  createFeed(automation, context) {
    return context.feeds.polled(automation, createGitHubIssuesSource(automation, context));
  },
  doctor: {
    needs: 'github',
    check: (automation, context) => searchCountCheck(issueSearchQuery(automation.config), false, context),
  },
  screening: {
    target: (automation, task) => ({
      source: { repo: task.identity.repo, number: Number(task.item.id) },
      title: task.item.title,
      body: task.item.body,
      author: stringField(task.item.fields.issue_author),
      labels: automation.config.labels,
    }),
  },
  webhooks: {
    events: ['issues', 'issue_comment'],
    concerns: (automation, event, payload) =>
      !commentOnPullRequest(event, payload) && sameRepository(automation.config.repo, payload),
  },
  authorField: 'issue_author',
  closingReference: (task) => (/^\d+$/.test(task.item.id) ? `Closes #${task.item.id}` : undefined),
  unmatched: (automation, tasks, context) =>
    unmatchedItems(context.github(), tasks, automation.config, context.signal),
  upstreamRunId: noUpstreamRun,
  resolveTimezone: defaultTimezone,
};
