import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import { automationBaseShape, RepoSlug, withoutItemKeys } from '../common-schema.js';
import { memoryLines } from '../explain.js';
import type { ExplainLine, TriggerTable } from '../types.js';

/** A folder of the repository as GitHub's `path` parameter takes it: relative, no `.` or `..` segment. */
const Subfolder = z
  .string()
  .transform((v) => v.replace(/^\/+|\/+$/g, ''))
  .refine((v) => v !== '', 'must name a folder (leave it out to watch the whole repository)')
  .refine(
    (v) => !v.split('/').some((part) => part === '' || part === '.' || part === '..'),
    'must be a folder inside the repository (no `.`, `..` or empty segments)',
  )
  .refine((v) => !/[\0\n\r]/.test(v), 'must not contain control characters');

export const GitHubCommitsAutomation = z
  .strictObject({
    ...automationBaseShape,
    ...withoutItemKeys('a commit trigger'),
    repo: RepoSlug.describe('GitHub `owner/name` whose branch is watched.'),
    branch: z
      .string()
      .default('')
      .refine((v) => !v.startsWith('-') && !/[\s~^:?*[\\]/.test(v), 'must be a branch name')
      .describe('The branch watched; empty (default): the repository’s default branch, read at each poll.'),
    path: Subfolder.optional().describe(
      'Only commits that touch this folder (GitHub’s `path` parameter); default: every commit.',
    ),
    lookback: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(20)
      .describe(
        'How many of the branch’s newest commits (touching `path`) each poll reads; a push of more commits than this between two polls fires the newest `lookback` only. Default 20.',
      ),
    once: z
      .boolean()
      .default(true)
      .describe(
        'Remember every dispatched commit (`commit:<sha>`) in the state file so it never fires again for this automation, across restarts (default `true`; `false`: each start runs the window’s commits again).',
      ),
    ignore_backlog: z
      .boolean()
      .default(true)
      .describe(
        'On the first poll, record the commits already on the branch (the newest `lookback`) as skipped; only commits that reach the branch later fire (default `true`; `false`: the first poll fires them too).',
      ),
  })
  .describe('New commits reaching a branch of one repository, optionally only those touching a folder.');
export type GitHubCommitsAutomation = z.infer<typeof GitHubCommitsAutomation>;

export const COMMIT_PROMPT_FIELDS = [
  'commit_sha',
  'commit_short_sha',
  'commit_title',
  'commit_message',
  'commit_url',
  'commit_author',
  'commit_author_name',
  'commit_date',
  'commit_branch',
  'commit_parents',
  'commit_files',
  'commit_additions',
  'commit_deletions',
  'commit_changed_files',
] as const;

export function describeBranch(config: Pick<GitHubCommitsAutomation, 'branch'>): string {
  return config.branch === '' ? 'the default branch' : `branch ${config.branch}`;
}

export const githubCommitsTable: TriggerTable<GitHubCommitsResolved> = {
  type: 'github-commits',
  aliases: [],
  description: 'New commits on a branch of an owner/repository',
  schema: GitHubCommitsAutomation,
  promptFields: [...COMMIT_PROMPT_FIELDS],
  itemPlaceholders: ['commit_sha', 'commit_short_sha', 'commit_title', 'commit_message'],
  untrustedFields: [
    'commit_title',
    'commit_message',
    'commit_author_name',
    'commit_files',
    'task_title',
    'task_body',
  ],
  explain(automation: GitHubCommitsResolved): ExplainLine[] {
    const { config } = automation;
    const lines: ExplainLine[] = [
      { label: 'watches', value: `${config.repo}, ${describeBranch(config)}` },
      {
        label: 'commits',
        value: `${config.path === undefined ? 'every commit' : `commits touching ${config.path}/`}; each poll reads the newest ${config.lookback}`,
      },
    ];
    const memory = config.once
      ? 'once: a commit fires at most once (commit:<sha>), across restarts'
      : 'none: every start of `run`, `run --watch` or `serve` runs the newest commits again (set once = true)';
    return [...lines, ...memoryLines(memory, config.ignore_backlog, 'commits already on the branch')];
  },
};

/** A resolved automation of this trigger: its type and its validated table together. */
export type GitHubCommitsResolved = AutomationOf<'github-commits', GitHubCommitsAutomation>;
