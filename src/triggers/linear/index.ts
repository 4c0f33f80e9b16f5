/** Issues of a Linear team, discovered over Linear's GraphQL API (see docs/linear.md). */
import { SourceRateLimitError } from '../../core/errors.js';
import type { Item } from '../../core/types.js';
import { stringField, trackerHooks } from '../hooks.js';
import type { SourceFactory } from '../source.js';
import type { ScreenActor, TriggerDefinition } from '../types.js';
import { createLinearClient, type LinearClient } from './client.js';
import {
  LINEAR_ISSUE_CONTEXT,
  LINEAR_ISSUES,
  LINEAR_TEAM,
  type LinearIssueContext,
  type LinearIssueNode,
  type LinearIssuesPage,
  type LinearTeamAnswer,
  type LinearUser,
} from './queries.js';
import { type LinearResolved, linearFilter, linearSourceSummary, linearTable } from './schema.js';
import { linearWriteBack } from './write-back.js';

/** Issues per page (Linear's default and a modest query complexity). */
const PAGE_SIZE = 50;
/** Pages read per poll at most (a runaway cursor cannot loop). */
const MAX_PAGES = 100;
/** Comments screening reads per issue (as for GitHub: the newest 30). */
const SCREENED_COMMENTS = 30;

/** Who wrote it, as the prompt's fences and `trusted_authors` name them. */
function userName(user: LinearUser | null): string | null {
  return user ? user.displayName || user.name : null;
}

/**
 * A Linear user on screening's trust ladder: workspace owners and admins count as OWNER, members as
 * MEMBER, guests as NONE; an app (an integration's user) is a bot.
 */
export function linearActor(user: LinearUser | null): ScreenActor | null {
  if (!user) return null;
  const association = user.owner || user.admin ? 'OWNER' : user.guest ? 'NONE' : 'MEMBER';
  return { login: userName(user) ?? user.id, bot: user.app, association };
}

/** An issue as prompt fields. Its state is volatile: a write-back moving it must not run it again. */
export function linearItem(node: LinearIssueNode): Item {
  return {
    id: node.identifier,
    title: node.title,
    url: node.url,
    body: node.description ?? '',
    itemKey: `linear:${node.identifier}`,
    fields: {
      linear_identifier: node.identifier,
      linear_title: node.title,
      linear_description: node.description ?? '',
      linear_url: node.url,
      linear_team: node.team.key,
      linear_project: node.project?.name ?? null,
      linear_labels: node.labels.nodes.map((l) => l.name),
      linear_priority: node.priorityLabel,
      linear_assignee: userName(node.assignee),
      linear_author: userName(node.creator),
      linear_created_at: node.createdAt,
    },
    volatile: { linear_state: node.state.name },
  };
}

/**
 * The client of each automation's feed, by automation id: screening reads an issue's comments with
 * the same key and the same rate-limit state as its feed.
 */
const clients = new Map<string, LinearClient>();

export const createLinearSource: SourceFactory<LinearResolved> = (automation, context) => {
  const client = createLinearClient(automation.config, context.service);
  clients.set(automation.id, client);
  const filter = linearFilter(automation.config);
  return {
    async discover({ limit, signal, wanted, onTotal }) {
      const found: Item[] = [];
      let examined = 0;
      let after: string | null = null;
      for (let page = 0; page < MAX_PAGES && found.length < limit; page += 1) {
        if (page > 0 && client.rate.remaining !== undefined && client.rate.remaining <= 0) {
          // Linear would refuse the next page: wait for the reset (the feed parks until then).
          throw new SourceRateLimitError(
            `Linear's rate limit is reached after ${page} page${page === 1 ? '' : 's'}`,
            client.rate.resetAt ? { resetAt: client.rate.resetAt } : {},
          );
        }
        const data: LinearIssuesPage = await client.request<LinearIssuesPage>(
          LINEAR_ISSUES,
          { filter, first: PAGE_SIZE, after },
          signal,
        );
        for (const node of data.issues.nodes) {
          examined += 1;
          const item = linearItem(node);
          if (wanted && !wanted(item)) continue;
          if (found.length < limit) found.push(item);
        }
        if (!data.issues.pageInfo.hasNextPage) {
          onTotal?.({ matching: examined, examined });
          return found;
        }
        after = data.issues.pageInfo.endCursor;
      }
      return found;
    },
  };
};

export const linearTrigger: TriggerDefinition<LinearResolved> = {
  ...linearTable,
  serialRuns: false,
  createFeed(automation, context) {
    return context.feeds.polled(automation, createLinearSource(automation, context));
  },
  doctor: {
    needs: 'service',
    async check(automation, context) {
      const { config } = automation;
      const client = createLinearClient(config, context.service);
      const data = await client.request<LinearTeamAnswer>(LINEAR_TEAM, {
        filter: { key: { eq: config.team } },
      });
      const team = data.teams.nodes[0];
      const who = `the key belongs to ${userName(data.viewer) ?? data.viewer.id}`;
      if (!team) return { ok: false, detail: `Linear: ${who}, but team ${config.team} was not found` };
      const found = `Linear: ${who}; team ${team.key} (${team.name}) found`;
      if (config.project === undefined) return { ok: true, detail: found };
      // A project is seen through its issues: one issue of the team in a project of that name.
      const inProject = await client.request<LinearIssuesPage>(LINEAR_ISSUES, {
        filter: {
          and: [{ team: { key: { eq: config.team } } }, { project: { name: { eq: config.project } } }],
        },
        first: 1,
        after: null,
      });
      if (inProject.issues.nodes.length === 0)
        return {
          ok: false,
          detail: `${found}, but no issue of team ${team.key} is in a project named "${config.project}" (check the name; a project without issues is not seen)`,
        };
      return { ok: true, detail: `${found}; project "${config.project}" has issues` };
    },
  },
  screening: {
    target: (automation, task) => ({
      title: task.item.title,
      body: task.item.body,
      author: stringField(task.item.fields.linear_author),
      labels: [],
      async read(signal) {
        const client = clients.get(automation.id);
        if (!client) throw new Error('the Linear automation has no client (its feed was not built)');
        const data = await client.request<LinearIssueContext>(
          LINEAR_ISSUE_CONTEXT,
          { id: task.item.id, first: SCREENED_COMMENTS },
          signal,
        );
        return {
          author: linearActor(data.issue.creator),
          comments: data.issue.comments.nodes.map((c) => ({
            author: c.user
              ? linearActor(c.user)
              : c.botActor
                ? { login: c.botActor.name ?? c.botActor.type, bot: true }
                : null,
            createdAt: c.createdAt,
            body: c.body,
          })),
        };
      },
    }),
  },
  writeBack: linearWriteBack,
  sourceSummary: (automation) => linearSourceSummary(automation.config),
  ...trackerHooks('Linear', 'linear', 'linear_author'),
};
