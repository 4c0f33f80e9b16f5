import type { AutomationFor } from '../../config/types.js';
import type { Item } from '../../core/types.js';
import { type IssueNode, SEARCH_ISSUES } from '../../github/operations.js';
import { searchAll } from '../../github/search.js';
import { defaultTimezone, noUpstreamRun, searchCountCheck, stringField } from '../hooks.js';
import type { SourceFactory } from '../source.js';
import type { TriggerDefinition } from '../types.js';
import { githubIssuesTable, issueSearchQuery } from './schema.js';

/** An issue as prompt fields, in the documented order; nothing here changes on its own. */
export function issueItem(node: IssueNode): Item {
  const number = String(node.number);
  return {
    id: number,
    title: node.title,
    url: node.url,
    body: node.body ?? '',
    itemKey: `issue:${number}`,
    fields: {
      issue_number: number,
      issue_title: node.title,
      issue_body: node.body ?? '',
      issue_url: node.url,
      issue_state: node.state.toLowerCase(),
      issue_author: node.author?.login ?? null,
      issue_labels: (node.labels?.nodes ?? []).map((l) => l.name),
      issue_assignees: (node.assignees?.nodes ?? []).map((a) => a.login),
      issue_milestone: node.milestone?.title ?? null,
      issue_created_at: node.createdAt,
    },
  };
}

export const createGitHubIssuesSource: SourceFactory<AutomationFor<'github-issues'>> = (
  automation,
  context,
) => {
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
        wanted ? (node) => wanted(issueItem(node)) : undefined,
      );
      onTotal?.({ matching: result.total, examined: result.examined });
      return result.nodes.map(issueItem);
    },
  };
};

export const githubIssuesTrigger: TriggerDefinition<AutomationFor<'github-issues'>> = {
  ...githubIssuesTable,
  serialRuns: false,
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
  upstreamRunId: noUpstreamRun,
  resolveTimezone: defaultTimezone,
};
