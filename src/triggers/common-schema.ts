/**
 * Fields every automation shares, and the GitHub filters issues and pull requests share.
 * Leaf module (zod only), so `src/config/` can compose the trigger schemas.
 */
import { z } from 'zod';
import { ScreeningOverride } from '../config/screening.js';
import { durationSetting, MIN_LEASE_TTL } from '../coordination/duration.js';
import { costAutomationShape } from '../cost/schema.js';
import { pipelineAutomationShape } from '../pipeline/schema.js';

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
  repositories: z
    .array(Identifier)
    .optional()
    .describe(
      'A task that spans several repositories (curupira extension): aliases of `[repositories.<alias>]` checkouts the run also gets a worktree in, on the same branch; `repository` stays the primary (the agent\'s working directory, and where the item\'s own pull request goes) and may be listed here or not. The prompt lists every repository and its worktree. With `deliver = "pr"` each repository that changed gets its own pull request, each body linking the others and the item; every listed repository needs `repo = "owner/name"` in its table. See docs/multi-repository.md.',
    ),
  checkout: z
    .enum(['worktree', 'main'])
    .default('worktree')
    .describe(
      '`worktree`: a fresh worktree and branch per task; `main`: the shared checkout as it is (no fetch, pull or switch).',
    ),
  keep_worktree: z
    .enum(['unpushed', 'always'])
    .default('unpushed')
    .describe(
      "What happens to a run's worktree when it ends (curupira extension). `unpushed`: kept (with its branch) only when it holds commits that were not pushed or uncommitted changes, otherwise removed or pooled (`reuse_worktrees`). `always`: kept after every run for inspection, never pooled or removed; `runs show` says so and `curupira gc` removes it.",
    ),
  transcript_in_worktree: z
    .boolean()
    .default(false)
    .describe(
      'Also write the run\'s transcript lines into its worktree, at `.curupira/transcript.jsonl` (curupira extension). The `.curupira/` folder is excluded from git in that worktree, so delivery never commits or pushes it. Useful with `keep_worktree = "always"`.',
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
  sandbox: z
    .enum(['none', 'auto', 'required', 'bubblewrap'])
    .optional()
    .describe(
      'This automation’s sandbox, over the profile’s `sandbox_mode` and `[settings] sandbox`: `required` fails its runs, with the reason, where no sandbox can start (curupira extension; docs/sandbox.md).',
    ),
  sandbox_hosts: z
    .array(
      z.string().regex(/^(?:\*\.)?[A-Za-z0-9.-]+(?::\d{1,5})?$/, 'must be `host`, `host:port` or `*.domain`'),
    )
    .default([])
    .describe(
      'Hosts this automation’s sandboxed agents may reach besides the provider’s API, e.g. package registries (`registry.npmjs.org`, `*.pypi.org`) (curupira extension).',
    ),
  max_attempts: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe(
      'This automation’s tries per failed task; default `[settings] max_attempts` (curupira extension).',
    ),
  stall_timeout_minutes: z
    .number()
    .min(0)
    .optional()
    .describe(
      'This automation’s quiet-agent limit; default `[settings] stall_timeout_minutes` (curupira extension).',
    ),
  pause_after_failures: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe(
      'This automation’s failures in a row before it is paused; default `[settings] pause_after_failures` (curupira extension).',
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
  ...costAutomationShape,
  ...pipelineAutomationShape,
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
  trusted_label: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Write to GitHub (opt-in): a label (e.g. `agent:trusted`) put on the item when screening finds it vouched for (its author trusted, or every matching label applied by a trusted actor), once, before the agent starts; created with a description when missing. Needs screening on (`[settings.screening] mode` other than `off`) (seed 001; curupira extension).',
    ),
  human_reviewer: z
    .array(z.string().regex(/^@?[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)?$/, 'a GitHub login or org/team'))
    .min(1)
    .optional()
    .describe(
      'Write to GitHub (opt-in): the people (logins) or `org/team` teams asked to review the pull request this automation delivers (`deliver = "pr"`), through the write queue, once per delivery. Default `[settings] human_reviewer` (seed 001; curupira extension).',
    ),
  lease_ttl: durationSetting(MIN_LEASE_TTL)
    .optional()
    .describe(
      'Write to GitHub (opt-in): claim each issue or pull request before a run starts with a lease comment (automation, runner, run, expiry) valid this long (`1 hour`, `3 hours`, `30m`, `2d`, ISO 8601 `PT1H`); renewed at half-life while the run lasts and edited to its outcome when it ends. Another runner (or automation) seeing an unexpired lease skips the item. Default `[settings] lease_ttl`; with neither, no lease is written. See docs/coordination.md.',
    ),
  escalated_label: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Write to GitHub (opt-in): a label (e.g. `agent:escalated`) put on the item when it reaches `max_item_failures`, with one comment mentioning `escalate_to`; this automation does not run the item again until a person removes the label (any host sees it). Default `[settings] escalated_label`; created with a description when missing (curupira extension).',
    ),
  escalate_to: z
    .array(z.string().regex(/^@?[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)?$/, 'a GitHub login or org/team'))
    .optional()
    .describe(
      'Who the escalation comment mentions: GitHub logins or `org/team` teams (with or without `@`). Default `[settings] escalate_to`; only written with an escalated label (curupira extension).',
    ),
  run_log: z
    .boolean()
    .optional()
    .describe(
      'Write to GitHub (opt-in): one issue labelled `agent:log` per `log_window_days` window in the automation’s repository, with one comment per finished run (run id, automation, item, outcome, duration); when a window ends a new log issue opens and the old one is closed. Default `[settings] run_log` (curupira extension).',
    ),
  deliver: z
    .enum(['pr', 'branch', 'head'])
    .optional()
    .describe(
      'Write to GitHub (opt-in): what happens to the agent’s commits when a run succeeds. `branch` pushes the run’s branch to the repository’s remote under a readable name (`curupira/<automation>/<number>-<title slug>`; never forced; an https remote gets the token through an in-memory credential helper, never a URL, file or the agent’s environment); `pr` pushes it and opens a pull request (or adopts the one already open for the branch); `head` (pull-request automations with `worktree_from = "head"`) pushes the commits back to the pull request’s own head branch, fast-forward only, and only when that branch is in the same repository (a fork’s is never pushed to). Unset: the branch stays local (the default). A run with nothing to push opens nothing and ends `succeeded` with `no changes`. `checkout = "main"` has no branch of its own to deliver: the two together are an error. See docs/pull-requests.md.',
    ),
  pr_draft: z
    .boolean()
    .default(true)
    .describe(
      'With `deliver = "pr"`: open the pull request as a draft (default) or, with `false`, ready for review. (Named `pr_draft` because `draft` is the pull-request trigger’s filter.)',
    ),
  pr_title: z
    .string()
    .min(1)
    .optional()
    .describe(
      'With `deliver = "pr"`: the pull request title, a template like `prompt` (`${…}` or Jinja) over the item’s fields plus `run_id`, `branch` and `commits`; default the item’s title (`${task_title}`).',
    ),
  pr_body: z
    .string()
    .min(1)
    .optional()
    .describe(
      'With `deliver = "pr"`: the pull request body, a template like `pr_title` (also `closes`, `summary`, `changes`, `agent_message` and `transcript`); default `Closes #N` (issues), a summary of the change (commits and changed files), the agent’s final message (quoted) and the `curupira runs show` command for the transcript. Redacted before it is sent; the item’s own text (written by strangers) is never put in it by default.',
    ),
  pr_base_branch: z
    .string()
    .min(1)
    .optional()
    .describe(
      'With `deliver = "pr"`: the branch the pull request merges into; default the repository’s default branch. The run’s worktree is cut from this branch (as the remote has it), so the pull request carries only the agent’s commits.',
    ),
  allow_config_edits: z
    .union([z.boolean(), z.array(z.string().min(1))])
    .optional()
    .describe(
      'With `deliver`: agent or CI configuration (AGENTS.md, CLAUDE.md, `.claude/`, `.github/workflows/`… see docs/pull-requests.md#before-anything-is-pushed) the agent may change. By default a delivery whose commits edit any of it is held for a person instead of pushed; `true` allows every such edit, a list allows these paths (`dir/` for a folder). Secrets in the commits always hold the delivery.',
    ),
  push_checkpoints: z
    .boolean()
    .default(false)
    .describe(
      'With `deliver`: while the agent runs, push its branch each `checkpoint_interval` seconds when HEAD moved, so a dead machine loses no commit (never forced).',
    ),
  checkpoint_interval: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(60)
    .describe('Seconds between two checkpoint pushes (`push_checkpoints = true`); default 60.'),
  follow_interval: z
    .number()
    .int()
    .min(10)
    .max(86_400)
    .default(300)
    .describe(
      'With `deliver = "pr"` and `curupira run --watch` (or `serve`): seconds between two reads of each delivered pull request still open; default 300 (5 minutes). Merged → the run’s reason says so and the issue is closed as completed if GitHub did not; closed unmerged → needs a person, with one comment on the pull request.',
    ),
  remediation_budget: z
    .number()
    .int()
    .min(0)
    .max(100)
    .default(2)
    .describe(
      'With `deliver = "pr"`: how many remediation runs (the agent’s session resumed to answer reviews or failing checks) one pull request gets; default 2. curupira’s own pushes never give rounds back; a push by someone else starts the count again. Spent → the pull request needs a person (one comment, `needs_human` notified). 0: never remediate. See docs/pull-requests.md.',
    ),
  trusted_bots: z
    .array(
      z
        .string()
        .min(1)
        .regex(
          /^[A-Za-z0-9][A-Za-z0-9-]*(\[bot\])?$/,
          'a GitHub login, e.g. `copilot-pull-request-reviewer[bot]`',
        ),
    )
    .default([])
    .describe(
      'With `deliver = "pr"`: bot accounts whose reviews and comments on the pull request are acted on like those of people with write access (e.g. `copilot-pull-request-reviewer[bot]`); default none. Every other account without write access is never acted on.',
    ),
  resolve_conflicts: z
    .boolean()
    .default(false)
    .describe(
      'With `deliver = "pr"`: when the pull request conflicts with its base, start one remediation run per (head, base) pair that resumes the agent to merge the base into the branch and resolve the conflicts (never a rebase or a force-push). Off (default), or still conflicted after that run: the delivery needs a person. Either way one notice comment per pair. See docs/pull-requests.md.',
    ),
  update_branch: z
    .boolean()
    .default(false)
    .describe(
      'With `deliver = "pr"`: when the base moved, the branch is behind without a conflict and its checks are green, ask GitHub to merge the base into the branch (`update-branch`, with the head sha it saw; a merge commit, never a rebase or a force-push). Off (default): the delivery’s gate says `behind`.',
    ),
  merge: z
    .enum(['off', 'auto'])
    .default('off')
    .describe(
      'With `deliver = "pr"`: `auto` merges the pull request (with `merge_method`, at the head sha curupira checked) once it is approved, its checks are green, it is not a draft and GitHub says it is mergeable, unless it touches `human_merge_paths`. `off` (default): a person merges; curupira follows it to merged either way.',
    ),
  merge_method: z
    .enum(['squash', 'merge', 'rebase'])
    .default('squash')
    .describe(
      'With `merge = "auto"`: how GitHub merges: `squash` (default), `merge` (a merge commit) or `rebase`.',
    ),
  human_merge_paths: z
    .array(z.string().min(1))
    .default([])
    .describe(
      'With `merge = "auto"`: globs of paths (gitignore-like: `*.sql` anywhere, `db/migrations/`, `/infra/**`) that a person merges: a pull request changing any matching file is never merged by curupira (its gate says `ready` and which file).',
    ),
  rerun_failed_checks: z
    .boolean()
    .default(false)
    .describe(
      'With `deliver = "pr"`: when the checks of a pull request’s head commit fail, first re-run its failed GitHub Actions jobs once (`POST …/actions/runs/{id}/rerun-failed-jobs`; needs `actions: write`); only if they fail again is the agent asked to fix them. Default false: a failure goes to the agent at once. See docs/pull-requests.md.',
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
  labels_any: z
    .union([Text, z.array(Text)])
    .transform((v) => (Array.isArray(v) ? v : [v]))
    .optional()
    .describe(
      'One label or a list; at least one of them is required (one `label:a,b` qualifier, GitHub’s OR), beside every label of `labels` (curupira extension, issue 29).',
    ),
  exclude_labels: StringOrList.describe('One label or a list; each becomes `-label:…`.'),
  assignee: Text.optional().describe('A login, `@me`, `none` (→ `no:assignee`) or `any` (→ `assignee:*`).'),
  author: Text.optional().describe('`author:…`, e.g. `app/dependabot`.'),
  exclude_authors: z
    .array(
      z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9/_.-]*(\[bot\])?$/, 'a GitHub login, `app/<name>` or `<name>[bot]`'),
    )
    .optional()
    .describe(
      'Logins whose items never match: each becomes `-author:…` (`app/dependabot`, `renovate[bot]`, a person) (curupira extension, issue 29).',
    ),
  title: Text.refine((v) => !/["\0-\x1f]/.test(v), 'must not contain `"` or control characters')
    .optional()
    .describe(
      'Text the title must contain, searched in titles only (`"…" in:title`; GitHub matches words, case ignored) (curupira extension, issue 29).',
    ),
  ignore_bots: z
    .boolean()
    .optional()
    .describe(
      '`true`: items written by bots never match: `-author:app/dependabot -author:app/renovate` in the query, and every other bot author (a `[bot]` account) left out after the search (curupira extension, issue 29).',
    ),
  milestone: Text.optional().describe('`milestone:…`.'),
  project: Text.optional().describe(
    '`project:…`, e.g. `acme/5` (membership only; for a board column use github-project-items).',
  ),
  sort: z.enum(SORTS).default('created-asc').describe('Appended as `sort:…`.'),
} as const;

/**
 * Which code a pull-request automation's worktree holds (curupira extension, issue 25): seed 000's
 * default branch, or the pull request's own head commit.
 */
export const headWorktreeShape = {
  worktree_from: z
    .enum(['default_branch', 'head'])
    .default('default_branch')
    .describe(
      'Which code the agent sees (curupira extension): `default_branch` (default, seed 000): a new branch cut from the repository’s default branch; `head`: a new branch at the pull request’s head commit (`pull_request_head_sha`, fetched as `pull/<number>/head`, so a fork’s pull request works too), the run recording the base and head commits. With `deliver = "head"` the agent’s commits are pushed back to the pull request’s branch when it is in the same repository. On a project board, only pull-request cards get their head.',
    ),
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

/**
 * Overrides the keys of `automationBaseShape` that write to the item a run came from (the labels and
 * the result comment) for a trigger without items, so that setting one is an error that says why
 * instead of a write that never happens. (A `screening` table there only warns: see
 * config/screening.ts.)
 */
export function withoutItemKeys(what: string) {
  const error = (key: string) =>
    `\`${key}\` acts on the issue or pull request a run came from; ${what} has none: remove it`;
  const none = (key: string) =>
    z
      .never({ error: error(key) })
      .optional()
      .describe('Not for this trigger: it has no item.');
  return {
    status_label: none('status_label'),
    failed_label: none('failed_label'),
    blocked_label: none('blocked_label'),
    trusted_label: none('trusted_label'),
    lease_ttl: none('lease_ttl'),
    result_comment: z
      .literal(false, { error: error('result_comment') })
      .default(false)
      .describe('Not for this trigger: it has no item.'),
  };
}
