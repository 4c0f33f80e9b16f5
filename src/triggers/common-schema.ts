/**
 * Fields every automation shares, and the GitHub filters issues and pull requests share.
 * Leaf module (zod only), so `src/config/` can compose the trigger schemas.
 */
import { z } from 'zod';
import { ScreeningOverride } from '../config/screening.js';
import { BudgetUsd } from '../cost/schema.js';

export const IDENTIFIER_PATTERN = /^[A-Za-z0-9_-]+$/;
export const Identifier = z
  .string()
  .regex(IDENTIFIER_PATTERN, 'must contain only letters, digits, `_` and `-`');

/** A non-empty string, trimmed of nothing: what the user wrote is what GitHub receives. */
const Text = z.string().refine((v) => v.trim().length > 0, 'must not be empty');

/** `"bug"` or `["bug", "p1"]`, normalised to a list. */
export const StringOrList = z
  .union([Text, z.array(Text)])
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .default([]);

export const automationBaseShape = {
  trigger_type: z
    .string()
    .optional()
    .describe(
      'Which trigger discovers work. Default: `cron` when the table has `schedule`, `after` when it has `after`, else `plugins-py/github-issues`. The `plugins-py/` prefix is optional.',
    ),
  enabled: z
    .boolean()
    .default(true)
    .describe(
      '`false` keeps the automation paused: never polled or fired, shown paused on the board (curupira extension). Resume it by editing this key; a pause from the board or `curupira pause` combines with it (either keeps it paused).',
    ),
  repository: Identifier.describe('Alias of a `[repositories.<alias>]` checkout the agent works in.'),
  checkout: z
    .enum(['worktree', 'main'])
    .default('worktree')
    .describe(
      '`worktree`: a fresh worktree and branch per task; `main`: the shared checkout as it is (no fetch, pull or switch).',
    ),
  prompt: z
    .string()
    .describe(
      'Prompt template: `${field}` placeholders (Python string.Template rules) or Jinja syntax (`{{ field }}`).',
    ),
  prompt_syntax: z
    .enum(['auto', 'template', 'jinja'])
    .default('auto')
    .describe(
      'How to read `prompt` (curupira extension): `auto` picks Jinja when the prompt contains `{{`, `{%` or `{#`, else `${…}` templates.',
    ),
  profile: Identifier.optional().describe('Agent profile name; default `[agents.defaults] profile`.'),
  untrusted_text: z
    .enum(['fenced', 'raw'])
    .default('fenced')
    .describe(
      'How text written by strangers (every untrusted field: titles, bodies, labels, branch names…) enters the prompt: `fenced` wraps each non-empty one in a marked block, whose delimiter carries a random per-run nonce, that the agent is told to treat as data, not instructions; `raw` inserts them as written (the reference’s behaviour) and is unsafe: anyone who can open an item writes part of the prompt. Bodies are capped at 6,000 characters either way. In Jinja, `| fence` fences by hand (curupira extension). See docs/security.md.',
    ),
  screening: ScreeningOverride.optional(),
  on_unmatch: z
    .enum(['stop', 'finish'])
    .default('stop')
    .describe(
      'While `curupira run --watch` has a task of this automation queued or running, each poll interval its item is read again (issue and pull-request triggers): closed, deleted, a required label removed or an excluded label added drops the queued task and, with `stop`, stops the running agent (its session and a worktree with work are kept; the run is recorded as cancelled with the reason); `finish` lets the agent finish (curupira extension).',
    ),
  max_item_failures: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe(
      'This automation’s failure budget per item; default `[settings] max_item_failures` (curupira extension).',
    ),
  max_cost_per_run: BudgetUsd.optional().describe(
    'This automation’s USD budget per run; default `[settings] max_cost_per_run` (docs/cost.md) (curupira extension).',
  ),
  max_cost_per_day: BudgetUsd.optional().describe(
    'This automation’s USD budget per UTC day; default `[settings] max_cost_per_automation_per_day` (docs/cost.md) (curupira extension).',
  ),
  result_comment: z
    .boolean()
    .default(false)
    .describe(
      'Write to GitHub (opt-in): after each run of an issue or pull request, one comment on the item with the outcome, duration, branch, kept worktree, token usage and the `curupira runs show` command; the same run reporting again edits its comment. Sent through the write queue (retried, paced, redacted). Default off: without it curupira writes nothing.',
    ),
  status_label: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Write to GitHub (opt-in): a label (e.g. `agent:implementing`) put on the issue or pull request while a run works on it and removed when the run ends; created in the repository with a description when missing.',
    ),
  failed_label: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Write to GitHub (opt-in): a label (e.g. `agent:failed`) put on the item when a run fails or times out, and removed when a later run succeeds; created with a description when missing.',
    ),
  blocked_label: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Write to GitHub (opt-in): a label (e.g. `agent:blocked`) put on the item when screening blocks its run; created with a description when missing.',
    ),
} as const;

const AutomationBaseObject = z.object(automationBaseShape);
/** The fields every automation table has, after defaults. */
export type AutomationBase = z.infer<typeof AutomationBaseObject>;

export const REPO_PATTERN = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

export const RepoSlug = z
  .string()
  .regex(REPO_PATTERN, 'repo must use the owner/repository format')
  .refine(
    (v) => !v.split('/').some((part) => part === '.' || part === '..'),
    'repo must not contain traversal segments',
  );

export const SORTS = [
  'created-asc',
  'created-desc',
  'updated-asc',
  'updated-desc',
  'comments-asc',
  'comments-desc',
] as const;

export const githubFilterShape = {
  repo: RepoSlug.describe(
    'GitHub `owner/name` searched (`repo:` qualifier); independent of the checkout’s remote.',
  ),
  state: z
    .enum(['open', 'closed', 'all'])
    .default('open')
    .describe(
      '`open` → `is:open`; `closed` → `is:closed` (includes merged pull requests); `all` → no qualifier.',
    ),
  labels: StringOrList.describe('One label or a list; every label is required (`label:…` each).'),
  exclude_labels: StringOrList.describe('One label or a list; each becomes `-label:…`.'),
  assignee: Text.optional().describe('A login, `@me`, `none` (→ `no:assignee`) or `any` (→ `assignee:*`).'),
  author: Text.optional().describe('`author:…`, e.g. `app/dependabot`.'),
  milestone: Text.optional().describe('`milestone:…`.'),
  project: Text.optional().describe(
    '`project:…`, e.g. `acme/5` (membership only; for a board column use github-project-items).',
  ),
  sort: z.enum(SORTS).default('created-asc').describe('Appended as `sort:…`.'),
} as const;

/** Item memory for event triggers (curupira extension, from the automations seed). */
export const eventMemoryShape = {
  once: z
    .boolean()
    .default(false)
    .describe(
      'Remember every dispatched item (`issue:45`, `pr:123`, `item:<id>`) in the state file so it never fires again for this automation (curupira extension).',
    ),
  ignore_backlog: z
    .boolean()
    .default(false)
    .describe(
      'On the first poll, record everything already matching as skipped (visible, never run); only items that appear later fire (curupira extension).',
    ),
} as const;
