import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import { compileSearchQuery } from '../../github/query.js';
import { automationBaseShape, eventMemoryShape, githubFilterShape } from '../common-schema.js';
import { memoryLines } from '../explain.js';
import type { ExplainLine, TriggerTable } from '../types.js';

export const GitHubIssuesAutomation = z
  .strictObject({
    ...automationBaseShape,
    ...githubFilterShape,
    linked_pull_request: z
      .boolean()
      .optional()
      .describe('`true` → `linked:pr`; `false` → `-linked:pr`; omit to not filter.'),
    dedupe_closed_days: z
      .number()
      .int()
      .min(1)
      .max(365)
      .optional()
      .describe(
        'Before each run, read the repository’s issues closed in the last N days and give the agent those whose titles look like this one’s as `${duplicate_candidates}` (`#N: title (closed <day>, <reason>) <link>` per line, at most 5, fenced; empty when none), so a triage run can report `duplicate` with the link (seed 001’s `dedupe_closed_days`; the `triage` step sets 30; curupira extension).',
      ),
    ...eventMemoryShape,
  })
  .describe('Issues of one repository matching typed filters (GitHub Search over GraphQL).');
export type GitHubIssuesAutomation = z.infer<typeof GitHubIssuesAutomation>;

export const ISSUE_PROMPT_FIELDS = [
  'issue_number',
  'issue_title',
  'issue_body',
  'issue_url',
  'issue_state',
  'issue_author',
  'issue_labels',
  'issue_assignees',
  'issue_milestone',
  'issue_created_at',
  'issue_label_descriptions',
] as const;

export function issueSearchQuery(config: GitHubIssuesAutomation): string {
  return compileSearchQuery({ kind: 'issue', ...config });
}

export const githubIssuesTable: TriggerTable<GitHubIssuesResolved> = {
  type: 'github-issues',
  aliases: ['plugins-py/github-issues'],
  description: 'Issues of an owner/repository',
  schema: GitHubIssuesAutomation,
  // `comments`: trusted comments, read at dispatch by screening (not an item field).
  // `duplicate_candidates`: read at dispatch with `dedupe_closed_days` (src/pipeline/dedupe.ts).
  promptFields: [...ISSUE_PROMPT_FIELDS, 'comments', 'duplicate_candidates'],
  itemPlaceholders: ['issue_number', 'issue_title', 'issue_body'],
  untrustedFields: [
    'issue_title',
    'issue_body',
    'issue_labels',
    'issue_label_descriptions',
    'duplicate_candidates',
    'task_title',
    'task_body',
    'comments',
  ],
  explain(automation: GitHubIssuesResolved): ExplainLine[] {
    const config = automation.config;
    const lines: ExplainLine[] = [{ label: 'search query', value: issueSearchQuery(config) }];
    if (config.ignore_bots) lines.push({ label: 'post-filters', value: 'authors that are bots left out' });
    const memory = config.once
      ? 'once: an issue fires at most once (issue:<number>)'
      : `none: every start of \`run\`, \`run --watch\` or \`serve\` runs each matching issue again${config.deliver === 'pr' ? ' (unless its pull request is open)' : ''} (set once = true to run it once)`;
    return [...lines, ...memoryLines(memory, config.ignore_backlog, 'issues matching')];
  },
};

/** A resolved automation of this trigger: its type and its validated table together. */
export type GitHubIssuesResolved = AutomationOf<'github-issues', GitHubIssuesAutomation>;
