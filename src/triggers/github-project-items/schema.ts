import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import { automationBaseShape, eventMemoryShape, headWorktreeShape, RepoSlug } from '../common-schema.js';
import { memoryLines } from '../explain.js';
import type { ExplainLine, TriggerTable } from '../types.js';

export const ITEM_KINDS = ['issue', 'pull_request', 'draft_issue'] as const;

export const GitHubProjectItemsAutomation = z
  .strictObject({
    ...automationBaseShape,
    project_owner: z
      .string()
      .regex(
        /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/,
        'project_owner must be a GitHub user or organization login',
      )
      .describe('Login of the organization or user that owns the Projects (v2) board.'),
    project_number: z.number().int().min(1).describe('The board’s number (the `5` in `…/projects/5`).'),
    status: z
      .string()
      .refine((v) => v.trim().length > 0, 'must not be empty')
      .describe('The column: the value of the board’s single-select status field (e.g. `Ready`).'),
    status_field: z
      .string()
      .min(1)
      .default('Status')
      .describe('Name of the single-select field whose value is the column.'),
    item_types: z
      .array(z.enum(ITEM_KINDS))
      .min(1, 'item_types must list at least one kind')
      .default(['issue', 'pull_request'])
      .describe('Which kinds of cards run: `issue`, `pull_request`, `draft_issue`.'),
    repo: RepoSlug.optional().describe('Only cards whose issue or pull request lives in this `owner/name`.'),
    state: z
      .enum(['open', 'closed', 'all'])
      .default('open')
      .describe('State of the card’s issue or pull request (draft issues count as open).'),
    include_archived: z.boolean().default(false).describe('Also run archived cards.'),
    ...eventMemoryShape,
    ...headWorktreeShape,
  })
  .describe('Issues and pull requests in one column of a GitHub Projects (v2) board.');
export type GitHubProjectItemsAutomation = z.infer<typeof GitHubProjectItemsAutomation>;

export const PROJECT_ITEM_PROMPT_FIELDS = [
  'item_id',
  'item_type',
  'item_status',
  'item_number',
  'item_title',
  'item_body',
  'item_url',
  'item_repo',
  'item_state',
  'item_author',
  'item_labels',
  'item_assignees',
  'item_milestone',
  'item_created_at',
  'project_owner',
  'project_number',
] as const;

export const githubProjectItemsTable: TriggerTable<GitHubProjectItemsResolved> = {
  type: 'github-project-items',
  aliases: ['plugins-py/github-project-items'],
  description: 'Issues and pull requests in a column of a GitHub Projects board',
  schema: GitHubProjectItemsAutomation,
  // `comments`: trusted comments, read at dispatch by screening (not an item field).
  promptFields: [...PROJECT_ITEM_PROMPT_FIELDS, 'comments'],
  itemPlaceholders: ['item_number', 'item_title', 'item_body'],
  untrustedFields: ['item_title', 'item_body', 'item_labels', 'task_title', 'task_body', 'comments'],
  explain(automation: GitHubProjectItemsResolved): ExplainLine[] {
    const c = automation.config;
    const lines: ExplainLine[] = [
      { label: 'board', value: `${c.project_owner} project #${c.project_number} (Projects v2)` },
      { label: 'column', value: `${c.status_field} = ${JSON.stringify(c.status)}` },
      { label: 'item kinds', value: c.item_types.join(', ') },
      {
        label: 'post-filters',
        value: [
          `state ${c.state}`,
          c.repo ? `repository ${c.repo}` : undefined,
          c.include_archived ? 'archived included' : 'archived skipped',
        ]
          .filter(Boolean)
          .join('; '),
      },
    ];
    const memory = c.once
      ? 'once: a card fires at most once (item:<id>)'
      : 'none: every start of `run`, `run --watch` or `serve` runs each card in the column again (set once = true to run it once)';
    return [...lines, ...memoryLines(memory, c.ignore_backlog, 'cards in the column')];
  },
};

/** A resolved automation of this trigger: its type and its validated table together. */
export type GitHubProjectItemsResolved = AutomationOf<'github-project-items', GitHubProjectItemsAutomation>;
