import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import { FIRST_REVIEW_COMMITS } from '../../review/range.js';
import { automationBaseShape, RepoSlug, withoutItemKeys } from '../common-schema.js';
import type { ExplainLine, TriggerTable } from '../types.js';

export const ReviewWatchAutomation = z
  .strictObject({
    ...automationBaseShape,
    ...withoutItemKeys('a review watch'),
    repo: RepoSlug.describe('`owner/name` of the repository whose branch is reviewed.'),
    branch: z
      .string()
      .optional()
      .describe('The watched branch; unset or empty: the repository’s default branch, asked from GitHub.'),
    scan: z
      .enum(['incremental', 'baseline'])
      .default('incremental')
      .describe(
        '`incremental`: the commits that reached the branch since the last finished review (nothing new: skipped, no agent); `baseline`: the whole repository at the branch’s head, whenever the head moves.',
      ),
    first_review: z
      .enum(['last_commits', 'whole', 'from_now'])
      .default('last_commits')
      .describe(
        `What an incremental watch's first review covers: the last ${FIRST_REVIEW_COMMITS} commits, the whole repository, or nothing (\`from_now\`: the head it first sees counts as reviewed, without an agent; only what lands after is reviewed).`,
      ),
  })
  .describe(
    'A review watch (issue 29): each poll asks GitHub for the branch’s head commit and, when there is something to review, runs an agent on a worktree pinned to that commit with the range in its prompt.',
  );
export type ReviewWatchAutomation = z.infer<typeof ReviewWatchAutomation>;

export const REVIEW_PROMPT_FIELDS = [
  'review_scan',
  'review_branch',
  'review_commit',
  'review_from',
  'review_commits',
  'review_range',
] as const;

function firstReviewWords(first: ReviewWatchAutomation['first_review']): string {
  if (first === 'whole') return 'the whole repository';
  if (first === 'from_now') return 'none: it starts from the head it first sees';
  return `the last ${FIRST_REVIEW_COMMITS} commits`;
}

export const reviewWatchTable: TriggerTable<ReviewWatchResolved> = {
  type: 'review-watch',
  aliases: [],
  description: 'A code-review watch on a branch',
  schema: ReviewWatchAutomation,
  promptFields: REVIEW_PROMPT_FIELDS,
  untrustedFields: [],
  explain(automation: ReviewWatchResolved): ExplainLine[] {
    const c = automation.config;
    return [
      { label: 'watches', value: `${c.repo} ${c.branch ? c.branch : '(the default branch)'}` },
      {
        label: 'scan',
        value:
          c.scan === 'baseline'
            ? 'baseline: the whole repository at each new head commit'
            : `incremental: new commits since the last finished review (first review: ${firstReviewWords(c.first_review)}); nothing new: skipped without an agent`,
      },
      {
        label: 'baseline now',
        value: `\`curupira trigger ${automation.id} --baseline\` (or the board's button): the whole repository at the branch’s head, at any time`,
      },
    ];
  },
};

/** A resolved automation of this trigger: its type and its validated table together. */
export type ReviewWatchResolved = AutomationOf<'review-watch', ReviewWatchAutomation>;
