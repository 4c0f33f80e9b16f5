import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import { automationBaseShape, eventMemoryShape, RepoSlug, withoutItemKeys } from '../common-schema.js';
import { memoryLines } from '../explain.js';
import type { ExplainLine, TriggerTable } from '../types.js';

/** A JQL value as written: no control characters (it is quoted, never spliced). */
const Value = z
  .string()
  .refine((v) => v.trim().length > 0, 'must not be empty')
  .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'must not contain control characters');
const Values = z
  .union([Value, z.array(Value)])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .default([]);

export const JiraAutomation = z
  .strictObject({
    ...automationBaseShape,
    ...withoutItemKeys('a Jira issue'),
    result_comment: z
      .boolean()
      .default(false)
      .describe(
        'Write to Jira (opt-in): after each run, one comment on the Jira issue with the outcome, duration, branch, token usage and the `curupira runs show` command. Sent through the write queue (retried, redacted, exactly once). Default off: without it, `result_state` and `merged_state` curupira writes nothing to Jira.',
      ),
    result_state: z
      .string()
      .refine((v) => v.trim().length > 0, 'must not be empty')
      .optional()
      .describe(
        'Write to Jira (opt-in): after a run that succeeded, move the issue to this status (its name, `In Review`) by the transition that leads there. Sent through the write queue.',
      ),
    merged_state: z
      .string()
      .refine((v) => v.trim().length > 0, 'must not be empty')
      .optional()
      .describe(
        'Write to Jira (opt-in, with `deliver = "pr"`): once every pull request of the run merged (all of them, for a task across repositories), move the issue to this status (its name, `Done`) by the transition that leads there, once. Sent through the write queue.',
      ),
    site_url: z
      .url({ protocol: /^https?$/ })
      .describe(
        'The Jira Cloud site, `https://<name>.atlassian.net` (a test points it at a local stand-in).',
      ),
    project: Value.describe('Key of the Jira project whose issues run (`ENG`).'),
    issue_types: Values.describe('Only these issue types (`Bug`, `Task`…): `issuetype in (…)`.'),
    statuses: Values.describe(
      'Only issues in these statuses: `status in (…)`; omitted: every status not in the Done category.',
    ),
    labels: Values.describe('Every label is required: `labels = "…"` each.'),
    components: Values.describe('Any of these components: `component in (…)`.'),
    board: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'The Jira Software board whose `column` runs (its id, as in `…/boards/12`); required with `column`.',
      ),
    column: Value.optional().describe(
      'Only issues in this column of `board` (`In Review`): the column’s statuses, read from the board’s configuration (Agile REST API) at each poll, become `status in (…)`.',
    ),
    assignee: Value.optional().describe(
      'Only issues assigned to this account id, `me` (the token’s user) or `none` (unassigned).',
    ),
    email: z.email().describe('The Atlassian account email the API token belongs to (basic authentication).'),
    api_token_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .default('JIRA_API_TOKEN')
      .describe('Environment variable holding the Atlassian API token (never put it in the settings file).'),
    api_token_file: z
      .string()
      .optional()
      .describe(
        'A file holding the API token, read when the variable is unset (relative to the settings file).',
      ),
    repo: RepoSlug.optional().describe(
      'The GitHub repository (`owner/name`) of `repository`, where `deliver = "pr"` opens pull requests; required with it.',
    ),
    ...eventMemoryShape,
  })
  .describe('Issues of a Jira project matching typed filters compiled to JQL (Jira Cloud REST API v3).');
export type JiraAutomation = z.infer<typeof JiraAutomation>;

export const JIRA_PROMPT_FIELDS = [
  'jira_key',
  'jira_summary',
  'jira_description',
  'jira_url',
  'jira_project',
  'jira_issue_type',
  'jira_labels',
  'jira_components',
  'jira_priority',
  'jira_assignee',
  'jira_reporter',
  'jira_created_at',
] as const;

/** A JQL string literal: double-quoted, with `"` and `\` escaped. */
export function jqlString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function list(values: readonly string[]): string {
  return `(${values.map(jqlString).join(', ')})`;
}

/** What explain shows in place of a board column's status ids, which only a poll reads. */
export function columnPlaceholder(config: Pick<JiraAutomation, 'board' | 'column'>): string {
  return `<the status ids of column ${jqlString(config.column ?? '')} on board ${config.board}>`;
}

/**
 * The JQL the automation's keys compile to, oldest issues first. `columnStatuses`: the status ids
 * of `column` on `board` (read from the board's configuration); they replace the default
 * `statusCategory != Done`. Explain passes none and shows a placeholder.
 */
export function compileJql(config: JiraAutomation, columnStatuses?: readonly string[]): string {
  const clauses = [`project = ${jqlString(config.project)}`];
  if (config.issue_types.length > 0) clauses.push(`issuetype in ${list(config.issue_types)}`);
  if (config.column !== undefined) {
    // Ids are Jira's numbers (checked where they are read); a placeholder only for explain.
    const ids = columnStatuses ? columnStatuses.join(', ') : columnPlaceholder(config);
    clauses.push(`status in (${ids})`);
  }
  if (config.statuses.length > 0) clauses.push(`status in ${list(config.statuses)}`);
  else if (config.column === undefined) clauses.push('statusCategory != Done');
  for (const label of config.labels) clauses.push(`labels = ${jqlString(label)}`);
  if (config.components.length > 0) clauses.push(`component in ${list(config.components)}`);
  if (config.assignee === 'me') clauses.push('assignee = currentUser()');
  else if (config.assignee === 'none') clauses.push('assignee is EMPTY');
  else if (config.assignee !== undefined) clauses.push(`assignee = ${jqlString(config.assignee)}`);
  return `${clauses.join(' AND ')} ORDER BY created ASC`;
}

/** The automation's source in one line: site, project, board column and every filter (`sourceSummary`). */
export function jiraSourceSummary(config: JiraAutomation): string {
  const parts = [`Jira project ${config.project} on ${config.site_url.replace(/\/+$/, '')}`];
  if (config.column !== undefined) parts.push(`board ${config.board} column "${config.column}"`);
  if (config.issue_types.length > 0) parts.push(`issue types ${config.issue_types.join(', ')}`);
  if (config.statuses.length > 0) parts.push(`statuses ${config.statuses.join(', ')}`);
  else if (config.column === undefined) parts.push('not done');
  if (config.labels.length > 0) parts.push(`labels all of ${config.labels.join(', ')}`);
  if (config.components.length > 0) parts.push(`components any of ${config.components.join(', ')}`);
  if (config.assignee !== undefined) parts.push(`assignee ${config.assignee}`);
  return parts.join(', ');
}

/** Where the token is read from, in words (never the token). */
export function tokenSource(config: JiraAutomation): string {
  return config.api_token_file === undefined
    ? `the ${config.api_token_env} environment variable`
    : `the ${config.api_token_env} environment variable, else the file ${config.api_token_file}`;
}

export const jiraTable: TriggerTable<JiraResolved> = {
  type: 'jira',
  aliases: [],
  description: 'Issues of a Jira project',
  schema: JiraAutomation,
  promptFields: [...JIRA_PROMPT_FIELDS, 'jira_status', 'comments'],
  itemPlaceholders: ['jira_key', 'jira_summary', 'jira_description'],
  untrustedFields: [
    'jira_summary',
    'jira_description',
    'jira_labels',
    'jira_reporter',
    'task_title',
    'task_body',
    'comments',
  ],
  explain(automation: JiraResolved): ExplainLine[] {
    const { config } = automation;
    const memory = config.once
      ? 'once: an issue fires at most once (jira:<key>)'
      : 'none: every start of `run`, `run --watch` or `serve` runs each matching issue again (set once = true to run it once)';
    return [
      {
        label: 'Jira API',
        value: `${config.site_url} as ${config.email} (token from ${tokenSource(config)})`,
      },
      ...(config.column === undefined
        ? []
        : [
            {
              label: 'Jira board column',
              value: `${jqlString(config.column)} of board ${config.board}: its statuses are read from ${config.site_url.replace(/\/+$/, '')}/rest/agile/1.0/board/${config.board}/configuration at each poll`,
            },
          ]),
      { label: 'JQL', value: compileJql(config) },
      ...memoryLines(memory, config.ignore_backlog, 'issues matching'),
    ];
  },
};

export type JiraResolved = AutomationOf<'jira', JiraAutomation>;
