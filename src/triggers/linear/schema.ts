import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import {
  automationBaseShape,
  eventMemoryShape,
  RepoSlug,
  StringOrList,
  withoutItemKeys,
} from '../common-schema.js';
import { memoryLines } from '../explain.js';
import type { ExplainLine, TriggerTable } from '../types.js';

const Name = z.string().refine((v) => v.trim().length > 0, 'must not be empty');

/** Linear's priorities: 1 urgent, 2 high, 3 medium, 4 low (0: none). */
export const LINEAR_PRIORITIES = { urgent: 1, high: 2, medium: 3, low: 4 } as const;

export const LinearAutomation = z
  .strictObject({
    ...automationBaseShape,
    ...withoutItemKeys('a Linear issue'),
    result_comment: z
      .boolean()
      .default(false)
      .describe(
        'Write to Linear (opt-in): after each run, one comment on the Linear issue with the outcome, duration, branch, token usage and the `curupira runs show` command. Sent through the write queue (retried, redacted, exactly once). Default off: without it, `result_state` and `merged_state` curupira writes nothing to Linear.',
      ),
    result_state: Name.optional().describe(
      'Write to Linear (opt-in): after a run that succeeded, move the issue to this workflow state of its team (its name, `In Review`). Sent through the write queue.',
    ),
    merged_state: Name.optional().describe(
      'Write to Linear (opt-in, with `deliver = "pr"`): once every pull request of the run merged (all of them, for a task across repositories), move the issue to this workflow state (its name, `Done`), once. Sent through the write queue.',
    ),
    team: Name.describe('Key of the Linear team whose issues run (`ENG`).'),
    repo: RepoSlug.optional().describe(
      'The GitHub repository (`owner/name`) of `repository`, where `deliver = "pr"` opens pull requests; required with it.',
    ),
    project: Name.optional().describe('Only issues of this project (its name).'),
    state: Name.optional().describe(
      'Only issues in this workflow state (its name, `Todo`); omitted: every state but completed and canceled ones.',
    ),
    labels: StringOrList.describe('One label or a list (names); see `labels_match`.'),
    labels_match: z
      .enum(['any', 'all'])
      .default('any')
      .describe('`any`: an issue with at least one of `labels` runs; `all`: only one with every label.'),
    assignee: Name.optional().describe(
      'Only issues assigned to this person (their email), `me` (the API key’s user) or `none` (unassigned).',
    ),
    min_priority: z
      .enum(['urgent', 'high', 'medium', 'low'])
      .optional()
      .describe(
        'Only issues at least this urgent (`high`: urgent and high); issues without a priority never match.',
      ),
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .default('LINEAR_API_KEY')
      .describe('Environment variable holding the Linear API key (never put the key in the settings file).'),
    api_key_file: z
      .string()
      .optional()
      .describe(
        'A file holding the Linear API key, read when the variable is unset (relative to the settings file).',
      ),
    api_url: z
      .url({ protocol: /^https?$/ })
      .default('https://api.linear.app/graphql')
      .describe('Linear’s GraphQL endpoint (a test points it at a local stand-in).'),
    ...eventMemoryShape,
  })
  .describe('Issues of a Linear team matching typed filters (Linear’s GraphQL API).');
export type LinearAutomation = z.infer<typeof LinearAutomation>;

export const LINEAR_PROMPT_FIELDS = [
  'linear_identifier',
  'linear_title',
  'linear_description',
  'linear_url',
  'linear_team',
  'linear_project',
  'linear_labels',
  'linear_priority',
  'linear_assignee',
  'linear_author',
  'linear_created_at',
] as const;

type Filter = Record<string, unknown>;

/** The `IssueFilter` the automation's keys compile to (Linear's GraphQL filter input). */
export function linearFilter(config: LinearAutomation): Filter {
  const parts: Filter[] = [{ team: { key: { eq: config.team } } }];
  if (config.project !== undefined) parts.push({ project: { name: { eq: config.project } } });
  parts.push(
    config.state === undefined
      ? { state: { type: { nin: ['completed', 'canceled'] } } }
      : { state: { name: { eq: config.state } } },
  );
  if (config.labels.length > 0) {
    if (config.labels_match === 'any') parts.push({ labels: { some: { name: { in: config.labels } } } });
    else for (const label of config.labels) parts.push({ labels: { some: { name: { eq: label } } } });
  }
  if (config.assignee === 'none') parts.push({ assignee: { null: true } });
  else if (config.assignee === 'me') parts.push({ assignee: { isMe: { eq: true } } });
  else if (config.assignee !== undefined) parts.push({ assignee: { email: { eq: config.assignee } } });
  if (config.min_priority !== undefined)
    parts.push({ priority: { gte: 1, lte: LINEAR_PRIORITIES[config.min_priority] } });
  return { and: parts };
}

/** The automation's source in one line: team, project and every filter (`sourceSummary`). */
export function linearSourceSummary(config: LinearAutomation): string {
  const parts = [`Linear team ${config.team}`];
  if (config.project !== undefined) parts.push(`project "${config.project}"`);
  parts.push(config.state === undefined ? 'open states' : `state "${config.state}"`);
  if (config.labels.length > 0) parts.push(`labels ${config.labels_match} of ${config.labels.join(', ')}`);
  if (config.assignee !== undefined) parts.push(`assignee ${config.assignee}`);
  if (config.min_priority !== undefined) parts.push(`priority ${config.min_priority} or more urgent`);
  return parts.join(', ');
}

/** Where the key is read from, in words (never the key). */
export function keySource(config: LinearAutomation): string {
  return config.api_key_file === undefined
    ? `the ${config.api_key_env} environment variable`
    : `the ${config.api_key_env} environment variable, else the file ${config.api_key_file}`;
}

export const linearTable: TriggerTable<LinearResolved> = {
  type: 'linear',
  aliases: [],
  description: 'Issues of a Linear team',
  schema: LinearAutomation,
  promptFields: [...LINEAR_PROMPT_FIELDS, 'linear_state', 'comments'],
  itemPlaceholders: ['linear_identifier', 'linear_title', 'linear_description'],
  untrustedFields: [
    'linear_title',
    'linear_description',
    'linear_labels',
    'linear_author',
    'task_title',
    'task_body',
    'comments',
  ],
  explain(automation: LinearResolved): ExplainLine[] {
    const { config } = automation;
    const memory = config.once
      ? 'once: an issue fires at most once (linear:<identifier>)'
      : 'none: every start of `run`, `run --watch` or `serve` runs each matching issue again (set once = true to run it once)';
    return [
      { label: 'Linear API', value: `${config.api_url} (key from ${keySource(config)})` },
      // In words, then the GraphQL filter the feed sends (`linearFilter`), exactly.
      { label: 'Linear issues', value: linearSourceSummary(config) },
      { label: 'Linear filter', value: JSON.stringify(linearFilter(config)) },
      ...memoryLines(memory, config.ignore_backlog, 'issues matching'),
    ];
  },
};

export type LinearResolved = AutomationOf<'linear', LinearAutomation>;
