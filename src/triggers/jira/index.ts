/** Issues of a Jira project, found by JQL over Jira Cloud's REST API v3 (see docs/jira.md). */
import type { Item } from '../../core/types.js';
import { stringField, trackerHooks } from '../hooks.js';
import type { SourceFactory } from '../source.js';
import type { ScreenActor, TriggerDefinition } from '../types.js';
import { boardColumn } from './board.js';
import { createJiraClient, type JiraClient } from './client.js';
import { compileJql, type JiraResolved, jiraSourceSummary, jiraTable } from './schema.js';
import { jiraWriteBack } from './write-back.js';

const PAGE_SIZE = 50;
const MAX_PAGES = 100;
const SCREENED_COMMENTS = 30;
export const JIRA_FIELDS = [
  'summary',
  'description',
  'status',
  'issuetype',
  'labels',
  'components',
  'priority',
  'assignee',
  'reporter',
  'created',
  'project',
];

interface JiraUser {
  accountId?: string;
  displayName?: string;
  accountType?: string;
}

interface JiraIssue {
  id: string;
  key: string;
  fields: {
    summary?: string;
    description?: unknown;
    status?: { name?: string };
    issuetype?: { name?: string };
    labels?: string[];
    components?: { name?: string }[];
    priority?: { name?: string } | null;
    assignee?: JiraUser | null;
    reporter?: JiraUser | null;
    created?: string;
    project?: { key?: string };
  };
}

interface SearchPage {
  issues?: JiraIssue[];
  nextPageToken?: string | null;
  isLast?: boolean;
}

/** Text of an Atlassian Document Format node: its text leaves, a line break between blocks. */
export function adfText(node: unknown): string {
  if (typeof node === 'string') return node;
  if (node === null || typeof node !== 'object') return '';
  const { type, text, content } = node as { type?: string; text?: string; content?: unknown[] };
  if (type === 'text') return text ?? '';
  if (type === 'hardBreak') return '\n';
  const inner = Array.isArray(content) ? content.map(adfText) : [];
  const blocks = ['doc', 'bulletList', 'orderedList', 'table', 'tableRow', 'blockquote'];
  return type !== undefined && blocks.includes(type) ? inner.join('\n') : inner.join('');
}

function userName(user: JiraUser | null | undefined): string | null {
  return user?.displayName || user?.accountId || null;
}

/**
 * A Jira account on screening's trust ladder: a site user (`atlassian`) counts as MEMBER, a
 * service-desk customer as NONE; an app is a bot.
 */
export function jiraActor(user: JiraUser | null | undefined): ScreenActor | null {
  if (!user) return null;
  const login = userName(user) ?? 'unknown';
  if (user.accountType === 'app') return { login, bot: true };
  return { login, bot: false, association: user.accountType === 'atlassian' ? 'MEMBER' : 'NONE' };
}

export function jiraItem(issue: JiraIssue, site: string): Item {
  const f = issue.fields;
  const description = adfText(f.description);
  return {
    id: issue.key,
    title: f.summary ?? '',
    url: `${site.replace(/\/+$/, '')}/browse/${issue.key}`,
    body: description,
    itemKey: `jira:${issue.key}`,
    fields: {
      jira_key: issue.key,
      jira_summary: f.summary ?? '',
      jira_description: description,
      jira_url: `${site.replace(/\/+$/, '')}/browse/${issue.key}`,
      jira_project: f.project?.key ?? null,
      jira_issue_type: f.issuetype?.name ?? null,
      jira_labels: f.labels ?? [],
      jira_components: (f.components ?? []).map((c) => c.name ?? ''),
      jira_priority: f.priority?.name ?? null,
      jira_assignee: userName(f.assignee),
      jira_reporter: userName(f.reporter),
      jira_created_at: f.created ?? null,
    },
    volatile: { jira_status: f.status?.name ?? null },
  };
}

const jiraHooks = trackerHooks('Jira', 'jira', 'jira_reporter');

/** Each automation's client, by id: screening reads comments with its feed's credentials. */
const clients = new Map<string, JiraClient>();

export const createJiraSource: SourceFactory<JiraResolved> = (automation, context) => {
  const { config } = automation;
  const client = createJiraClient(config, context.service, () => context.clock.now());
  clients.set(automation.id, client);
  const fixed = config.column === undefined ? compileJql(config) : undefined;
  return {
    async discover({ limit, signal, wanted, onTotal }) {
      // A board column is read again at each poll: the board's owner may remap its statuses.
      const column = fixed === undefined ? await boardColumn(client, config, signal) : undefined;
      if (column && column.statuses.length === 0) {
        onTotal?.({ matching: 0, examined: 0 });
        return [];
      }
      const jql = fixed ?? compileJql(config, column?.statuses);
      const found: Item[] = [];
      let examined = 0;
      let token: string | undefined;
      for (let page = 0; page < MAX_PAGES && found.length < limit; page += 1) {
        const data = await client.post<SearchPage>(
          '/rest/api/3/search/jql',
          { jql, maxResults: PAGE_SIZE, fields: JIRA_FIELDS, ...(token ? { nextPageToken: token } : {}) },
          signal,
        );
        for (const issue of data.issues ?? []) {
          examined += 1;
          const item = jiraItem(issue, config.site_url);
          if (wanted && !wanted(item)) continue;
          if (found.length < limit) found.push(item);
        }
        if (data.isLast !== false || !data.nextPageToken) {
          onTotal?.({ matching: examined, examined });
          return found;
        }
        token = data.nextPageToken;
      }
      return found;
    },
  };
};

export const jiraTrigger: TriggerDefinition<JiraResolved> = {
  ...jiraTable,
  serialRuns: false,
  createFeed(automation, context) {
    return context.feeds.polled(automation, createJiraSource(automation, context));
  },
  doctor: {
    needs: 'service',
    async check(automation, context) {
      const { config } = automation;
      const client = createJiraClient(config, context.service);
      const me = await client.get<JiraUser>('/rest/api/3/myself');
      const project = await client
        .get<{ key?: string; name?: string }>(`/rest/api/3/project/${encodeURIComponent(config.project)}`)
        .catch(() => undefined);
      const who = `the token belongs to ${userName(me) ?? 'an unnamed account'}`;
      if (!project) return { ok: false, detail: `Jira: ${who}, but project ${config.project} was not found` };
      const found = `Jira: ${who}; project ${project.key} (${project.name}) found`;
      if (config.column === undefined) return { ok: true, detail: found };
      try {
        const column = await boardColumn(client, config);
        return {
          ok: true,
          detail: `${found}; board ${column.board} column "${column.column}" holds status${column.statuses.length === 1 ? '' : 'es'} ${column.statuses.join(', ') || '(none: nothing would match)'}`,
        };
      } catch (error) {
        return { ok: false, detail: `${found}, but ${(error as Error).message}` };
      }
    },
  },
  screening: {
    target: (automation, task) => ({
      title: task.item.title,
      body: task.item.body,
      author: stringField(task.item.fields.jira_reporter),
      labels: [],
      async read(signal) {
        const client = clients.get(automation.id);
        if (!client) throw new Error('the Jira automation has no client (its feed was not built)');
        const key = encodeURIComponent(task.item.id);
        const [issue, page] = await Promise.all([
          client.get<JiraIssue>(`/rest/api/3/issue/${key}?fields=reporter`, signal).catch(() => undefined),
          client.get<{ comments?: { author?: JiraUser; created?: string; body?: unknown }[] }>(
            `/rest/api/3/issue/${key}/comment?orderBy=-created&maxResults=${SCREENED_COMMENTS}`,
            signal,
          ),
        ]);
        return {
          author: jiraActor(issue?.fields.reporter),
          comments: (page.comments ?? []).reverse().map((c) => ({
            author: jiraActor(c.author),
            createdAt: c.created ?? '',
            body: adfText(c.body),
          })),
        };
      },
    }),
  },
  writeBack: jiraWriteBack,
  sourceSummary: (automation) => jiraSourceSummary(automation.config),
  ...jiraHooks,
  resolveTimezone(config, context) {
    if (config.column !== undefined && config.board === undefined)
      context.problem('board', 'column names a board column: give the board’s id with board = <id>');
    if (config.board !== undefined && config.column === undefined)
      context.problem('column', 'board is read only for its column: name it with column = "…"');
    return jiraHooks.resolveTimezone(config, context);
  },
};
