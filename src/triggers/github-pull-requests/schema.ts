import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import { compileSearchQuery } from '../../github/query.js';
import {
  automationBaseShape,
  eventMemoryShape,
  githubFilterShape,
  headWorktreeShape,
} from '../common-schema.js';
import { memoryLines } from '../explain.js';
import type { ExplainLine, TriggerTable } from '../types.js';

export const MERGE_STATES = [
  'BEHIND',
  'BLOCKED',
  'CLEAN',
  'DIRTY',
  'DRAFT',
  'HAS_HOOKS',
  'UNKNOWN',
  'UNSTABLE',
] as const;

export const GitHubPullRequestsAutomation = z
  .strictObject({
    ...automationBaseShape,
    ...githubFilterShape,
    draft: z.boolean().optional().describe('`true` → `draft:true`; `false` → `draft:false`.'),
    base: z.string().min(1).optional().describe('`base:…` (target branch).'),
    head: z.string().min(1).optional().describe('`head:…` (source branch).'),
    review: z.enum(['none', 'required', 'approved', 'changes_requested']).optional().describe('`review:…`.'),
    ci_status: z.enum(['success', 'failure', 'pending']).optional().describe('`status:…`.'),
    linked_issue: z.boolean().optional().describe('`true` → `linked:issue`; `false` → `-linked:issue`.'),
    mergeable: z
      .boolean()
      .optional()
      .describe('Post-filter after the search: `true` keeps MERGEABLE, `false` keeps CONFLICTING.'),
    merge_state: z
      .array(z.enum(MERGE_STATES))
      .default([])
      .describe('Post-filter after the search: keep only these `mergeStateStatus` values.'),
    ...eventMemoryShape,
    once: z
      .union([z.boolean(), z.literal('head')])
      .default(false)
      .describe(
        'Remember every dispatched pull request in the state file so it never fires again for this automation (`true`: `pr:<number>`, whatever is pushed to it later), or, with `"head"`, once per head commit (`pr:<number>@<head sha>`): new commits run it again, a restart does not. Default `false`: nothing is remembered across restarts (seed 000), so each `run`, `run --watch` or `serve` start runs every matching pull request again (curupira extension).',
      ),
    ...headWorktreeShape,
  })
  .describe(
    'Pull requests of one repository matching typed filters; `mergeable` and `merge_state` filter after the search.',
  );
export type GitHubPullRequestsAutomation = z.infer<typeof GitHubPullRequestsAutomation>;

export const PULL_REQUEST_PROMPT_FIELDS = [
  'pull_request_number',
  'pull_request_title',
  'pull_request_body',
  'pull_request_url',
  'pull_request_state',
  'pull_request_author',
  'pull_request_labels',
  'pull_request_assignees',
  'pull_request_milestone',
  'pull_request_created_at',
  'pull_request_is_draft',
  'pull_request_head_ref',
  'pull_request_base_ref',
  'pull_request_head_sha',
  'pull_request_additions',
  'pull_request_deletions',
  'pull_request_changed_files',
  'pull_request_mergeable',
  'pull_request_merge_state_status',
  'pull_request_from_fork',
  'pull_request_label_descriptions',
] as const;

export function pullRequestSearchQuery(config: GitHubPullRequestsAutomation): string {
  return compileSearchQuery({ kind: 'pr', ...config });
}

export function describePostFilters(config: GitHubPullRequestsAutomation): string {
  const parts: string[] = [];
  if (config.mergeable !== undefined)
    parts.push(`mergeable = ${config.mergeable ? 'MERGEABLE' : 'CONFLICTING'}`);
  if (config.merge_state.length > 0) parts.push(`mergeStateStatus in [${config.merge_state.join(', ')}]`);
  if (config.ignore_bots) parts.push('authors that are bots left out');
  return parts.length > 0 ? parts.join('; ') : 'none';
}

export const githubPullRequestsTable: TriggerTable<GitHubPullRequestsResolved> = {
  type: 'github-pull-requests',
  aliases: ['plugins-py/github-pull-requests'],
  description: 'Pull requests of an owner/repository',
  schema: GitHubPullRequestsAutomation,
  // `comments`: trusted comments, read at dispatch by screening (not an item field).
  promptFields: [...PULL_REQUEST_PROMPT_FIELDS, 'comments'],
  itemPlaceholders: ['pull_request_number', 'pull_request_title', 'pull_request_body'],
  untrustedFields: [
    'pull_request_title',
    'pull_request_body',
    'pull_request_labels',
    'pull_request_label_descriptions',
    'pull_request_head_ref',
    'task_title',
    'task_body',
    'comments',
  ],
  explain(automation: GitHubPullRequestsResolved): ExplainLine[] {
    const config = automation.config;
    const lines: ExplainLine[] = [
      { label: 'search query', value: pullRequestSearchQuery(config) },
      { label: 'post-filters', value: describePostFilters(config) },
    ];
    const memory =
      config.once === 'head'
        ? 'once = "head": a pull request runs once per head commit (pr:<number>@<sha>); new commits run it again, a restart does not'
        : config.once
          ? 'once: a pull request fires at most once (pr:<number>)'
          : 'none: every start of `run`, `run --watch` or `serve` runs each matching pull request again (set once = "head" to run once per head commit)';
    return [...lines, ...memoryLines(memory, config.ignore_backlog, 'pull requests matching')];
  },
};

/** A resolved automation of this trigger: its type and its validated table together. */
export type GitHubPullRequestsResolved = AutomationOf<'github-pull-requests', GitHubPullRequestsAutomation>;
