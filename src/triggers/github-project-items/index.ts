import { GitHubGraphQLError } from '../../core/errors.js';
import type { Item } from '../../core/types.js';
import type { GitHubClient } from '../../github/client.js';
import {
  ORGANIZATION_PROJECT_ITEMS,
  type ProjectItemNode,
  type ProjectItemsPage,
  USER_PROJECT_ITEMS,
} from '../../github/operations.js';
import { PAGE_SIZE } from '../../github/search.js';
import { noUpstreamRun, refuseItemWrites, sameOwner, stringField } from '../hooks.js';
import type { SourceFactory } from '../source.js';
import type { ItemRef, TriggerDefinition } from '../types.js';
import {
  type GitHubProjectItemsAutomation,
  type GitHubProjectItemsResolved,
  githubProjectItemsTable,
} from './schema.js';

const KIND_BY_TYPE: Record<string, 'issue' | 'pull_request' | 'draft_issue' | undefined> = {
  ISSUE: 'issue',
  PULL_REQUEST: 'pull_request',
  DRAFT_ISSUE: 'draft_issue',
};

function kindOf(node: ProjectItemNode): 'issue' | 'pull_request' | 'draft_issue' | undefined {
  const byType = KIND_BY_TYPE[node.type];
  if (byType) return byType;
  switch (node.content?.__typename) {
    case 'Issue':
      return 'issue';
    case 'PullRequest':
      return 'pull_request';
    case 'DraftIssue':
      return 'draft_issue';
    default:
      return undefined;
  }
}

/** A board card as prompt fields (`item_*`), whatever its content. */
export function projectItem(
  node: ProjectItemNode,
  config: GitHubProjectItemsAutomation,
  projectUrl: string,
): Item | undefined {
  const kind = kindOf(node);
  const content = node.content;
  if (!kind || !content) return undefined;
  const status = node.fieldValueByName?.name ?? null;
  const base = {
    item_id: node.id,
    item_type: kind,
    item_status: status,
  };
  const project = { project_owner: config.project_owner, project_number: String(config.project_number) };
  if (content.__typename === 'DraftIssue') {
    return {
      id: node.id,
      title: content.title,
      url: projectUrl,
      body: content.body ?? '',
      itemKey: `item:${node.id}`,
      fields: {
        ...base,
        item_number: null,
        item_title: content.title,
        item_body: content.body ?? '',
        item_url: projectUrl,
        item_repo: null,
        item_state: 'open',
        item_author: content.creator?.login ?? null,
        item_labels: [],
        item_assignees: [],
        item_milestone: null,
        item_created_at: content.createdAt,
        ...project,
      },
    };
  }
  const state = ('pullRequestState' in content ? content.pullRequestState : content.state).toLowerCase();
  return {
    id: node.id,
    title: content.title,
    url: content.url,
    body: content.body ?? '',
    itemKey: `item:${node.id}`,
    repo: content.repository.nameWithOwner,
    fields: {
      ...base,
      item_number: String(content.number),
      item_title: content.title,
      item_body: content.body ?? '',
      item_url: content.url,
      item_repo: content.repository.nameWithOwner,
      item_state: state,
      item_author: content.author?.login ?? null,
      item_labels: (content.labels?.nodes ?? []).map((l) => l.name),
      item_assignees: (content.assignees?.nodes ?? []).map((a) => a.login),
      item_milestone: content.milestone?.title ?? null,
      item_created_at: content.createdAt,
      ...project,
    },
  };
}

/** Which cards belong to the column and pass the automation's filters. */
export function matchesColumn(node: ProjectItemNode, config: GitHubProjectItemsAutomation): boolean {
  if (node.isArchived && !config.include_archived) return false;
  const status = node.fieldValueByName?.name;
  if (!status || status.trim().toLowerCase() !== config.status.trim().toLowerCase()) return false;
  const kind = kindOf(node);
  if (!kind || !config.item_types.includes(kind)) return false;
  const content = node.content;
  if (!content) return false;
  if (content.__typename === 'DraftIssue') return config.repo === undefined && config.state !== 'closed';
  if (config.repo && content.repository.nameWithOwner.toLowerCase() !== config.repo.toLowerCase())
    return false;
  const state = ('pullRequestState' in content ? content.pullRequestState : content.state).toUpperCase();
  if (config.state === 'open' && state !== 'OPEN') return false;
  if (config.state === 'closed' && state === 'OPEN') return false;
  return true;
}

type OwnerKind = 'organization' | 'user';

async function fetchPage(
  client: GitHubClient,
  owner: OwnerKind,
  config: GitHubProjectItemsAutomation,
  after: string | null,
): Promise<ProjectItemsPage['projectV2']> {
  const operation = owner === 'organization' ? ORGANIZATION_PROJECT_ITEMS : USER_PROJECT_ITEMS;
  const { data } = await client.graphql<Record<OwnerKind, ProjectItemsPage | null>>(operation, {
    owner: config.project_owner,
    number: config.project_number,
    statusField: config.status_field,
    first: PAGE_SIZE,
    after,
  });
  return data[owner]?.projectV2 ?? null;
}

function isNotFound(error: unknown): boolean {
  return error instanceof GitHubGraphQLError && error.errors.some((e) => e.type === 'NOT_FOUND');
}

export const createGitHubProjectItemsSource: SourceFactory<GitHubProjectItemsResolved> = (
  automation,
  context,
) => {
  const { config } = automation;
  let ownerKind: OwnerKind | undefined;
  return {
    async discover({ limit, signal, wanted, onTotal }) {
      const client = context.github();
      const items: Item[] = [];
      let examined = 0;
      let matching = 0;
      let after: string | null = null;
      for (;;) {
        signal?.throwIfAborted();
        let project: ProjectItemsPage['projectV2'] = null;
        if (ownerKind) project = await fetchPage(client, ownerKind, config, after);
        else {
          try {
            project = await fetchPage(client, 'organization', config, after);
            if (project) ownerKind = 'organization';
          } catch (error) {
            if (!isNotFound(error)) throw error;
          }
          if (!project) {
            project = await fetchPage(client, 'user', config, after).catch((error: unknown) => {
              if (isNotFound(error)) return null;
              throw error;
            });
            if (project) ownerKind = 'user';
          }
        }
        if (!project) {
          throw new GitHubGraphQLError([
            {
              message: `project #${config.project_number} of '${config.project_owner}' was not found (or the token cannot read it; Projects need the read:project scope)`,
              type: 'NOT_FOUND',
            },
          ]);
        }
        const more = Boolean(project.items.pageInfo.hasNextPage && project.items.pageInfo.endCursor);
        for (const node of project.items.nodes) {
          if (!node || !matchesColumn(node, config)) continue;
          const item = projectItem(node, config, project.url);
          if (!item) continue;
          // A board has no total count: every match on the pages read counts (a lower bound).
          matching += 1;
          if (items.length >= limit) continue;
          examined += 1;
          if (wanted && !wanted(item)) continue;
          items.push(item);
        }
        if (!more || items.length >= limit) {
          onTotal?.({ matching, examined });
          return items;
        }
        after = project.items.pageInfo.endCursor;
      }
    },
  };
};

const CONTENT_URL = /\/([^/]+\/[^/]+)\/(?:issues|pull)\/(\d+)\/?(?:[?#].*)?$/;
const BOARD_URL = /\/(?:orgs|users)\/([^/]+)\/projects\/(\d+)\/?(?:[?#].*)?$/;

/**
 * How a card reads to a person: the issue or pull request it holds (`acme/api#12`, from its URL),
 * or, for a draft, the board it is on (`draft card on acme project #5`); never the card's node id.
 */
export function projectCardName(item: ItemRef): string {
  const url = item.itemUrl ?? '';
  const content = CONTENT_URL.exec(url);
  if (content) return `${content[1]}#${content[2]}`;
  const board = BOARD_URL.exec(url);
  if (board) return `draft card on ${board[1]} project #${board[2]}`;
  return `card ${item.itemId}`;
}

export const githubProjectItemsTrigger: TriggerDefinition<GitHubProjectItemsResolved> = {
  ...githubProjectItemsTable,
  serialRuns: false,
  itemsFromAnyRepository: true,
  githubItem: 'card',
  itemName: (run) => projectCardName(run),
  pullRequest(task) {
    const { fields } = task.item;
    if (fields.item_type !== 'pull_request') return undefined;
    const number = Number(fields.item_number);
    if (!Number.isInteger(number) || number <= 0) return undefined;
    return { number, headSha: null, headRef: null, baseRef: null, fromFork: false };
  },
  createFeed(automation, context) {
    return context.feeds.polled(automation, createGitHubProjectItemsSource(automation, context));
  },
  doctor: {
    needs: 'github',
    async check(automation, context) {
      const items = await createGitHubProjectItemsSource(automation, context).discover({ limit: 1000 });
      return { ok: true, detail: `${items.length} card${items.length === 1 ? '' : 's'} in the column` };
    },
  },
  screening: {
    target: (_automation, task) => {
      const repo = stringField(task.item.fields.item_repo);
      const number = stringField(task.item.fields.item_number);
      return {
        ...(repo && number ? { source: { repo, number: Number(number) } } : {}),
        title: task.item.title,
        body: task.item.body,
        author: stringField(task.item.fields.item_author),
        labels: [],
      };
    },
  },
  webhooks: {
    events: ['projects_v2_item'],
    concerns: (automation, _event, payload) => sameOwner(automation.config.project_owner, payload),
  },
  authorField: 'item_author',
  upstreamRunId: noUpstreamRun,
  resolveTimezone(config, context) {
    refuseItemWrites(
      config,
      context,
      'a github-project-items automation writes nothing to its cards (leases, labels and result comments go only to the issue or pull request of a github-issues or github-pull-requests automation; docs/coordination.md)',
    );
    return context.defaultTimezone;
  },
};
