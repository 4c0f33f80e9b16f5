/**
 * Domain types shared by every layer. No I/O here.
 *
 * Flow: a trigger discovers `Item`s; the feed turns each into a `Task` (identity + fingerprint);
 * the scheduler decides; the executor turns a task into a `Run` recorded in the store.
 */

/** A value a trigger returns for a prompt field. Flattened to text by `src/prompt/`. */
export type FieldValue =
  | string
  | number
  | boolean
  | null
  | readonly FieldValue[]
  | { readonly [key: string]: FieldValue };

/** Prompt fields of an item, in the trigger's stable order (the order matters for the fingerprint). */
export type Fields = Readonly<Record<string, FieldValue>>;

/** What a trigger found. */
export interface Item {
  /** Task id: issue or PR number, project item node id, cron occurrence epoch seconds, upstream run id. */
  readonly id: string;
  readonly title: string;
  readonly url: string;
  /** Body text (`task_body`); empty when the item has none. Untrusted when it comes from GitHub. */
  readonly body: string;
  /**
   * Trigger-specific prompt fields (`issue_number`, `pull_request_head_ref`…). These pairs, in order,
   * are the item's fingerprint: a changed value means a new task. Values that change on their own
   * (comments, update time, CI and review state) are never put here.
   */
  readonly fields: Fields;
  /**
   * Prompt fields that may change on their own (a PR's mergeability and merge state): available to
   * the prompt, left out of the fingerprint so they never start a second run for the same item.
   */
  readonly volatile?: Fields;
  /** Stable item key for `once` memory: `issue:45`, `pr:123`, `item:<node id>`, `cron:<epoch>`, `run:<id>`. */
  readonly itemKey: string;
  /** Forge identity (`owner/name`) of this item, for triggers that span repositories (project boards). */
  readonly repo?: string;
  /** Cron occurrence (ISO 8601, UTC) for scheduled tasks. */
  readonly scheduledFor?: string;
  /** True when a cron occurrence fired later than the missed threshold. */
  readonly missed?: boolean;
}

/** One automation's work on one item: `["<automation>","<repo>","<task_type>","<id>"]`. */
export interface TaskIdentity {
  readonly automationId: string;
  /** Forge identity (`owner/name`), or the repository alias when the trigger has none (cron, after). */
  readonly repo: string;
  /** The canonical type of the task's trigger (`TriggerDefinition.type`). */
  readonly taskType: string;
  readonly id: string;
}

/** The canonical key of an identity, shared by dedup, sessions, exclusivity and logs. */
export function identityKey(identity: TaskIdentity): string {
  return JSON.stringify([identity.automationId, identity.repo, identity.taskType, identity.id]);
}

export interface Task {
  readonly identity: TaskIdentity;
  /** `identityKey(identity)`. */
  readonly key: string;
  /** sha256 over automation, repo, task type and the item's field pairs in order: the dedup key. */
  readonly fingerprint: string;
  readonly item: Item;
}

export const RUN_STATUSES = [
  'queued',
  'preparing',
  'running',
  'succeeded',
  'failed',
  'timed_out',
  'cancelled',
  'blocked',
  'skipped',
  'escalated',
  'stalled',
  'parked',
  'merged',
  'noop',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Statuses of runs that have not finished: a process that died may have left them behind. */
export const UNFINISHED_STATUSES = ['queued', 'preparing', 'running'] as const satisfies readonly RunStatus[];

/** Every status but the unfinished ones, in RUN_STATUSES' order. */
export const TERMINAL_STATUSES: readonly RunStatus[] = RUN_STATUSES.filter(
  (status) => !(UNFINISHED_STATUSES as readonly RunStatus[]).includes(status),
);
/**
 * Finished runs that need no human: the board's Done column. `merged`: the run's delivered pull
 * request was merged (src/delivery/follow.ts).
 */
export const CALM_STATUSES: readonly RunStatus[] = ['succeeded', 'skipped', 'cancelled', 'merged', 'noop'];

/**
 * Runs that failed: they count against the failure budget (`max_item_failures`), are retried
 * (`max_attempts`) and count toward auto-pause (`pause_after_failures`). `stalled`: the agent
 * printed nothing for `stall_timeout_minutes` and was stopped. Not `parked` (a provider's usage
 * limit: the task runs again after the reset) nor `blocked`, `escalated` or `cancelled`.
 */
export const FAILED_STATUSES: readonly RunStatus[] = ['failed', 'timed_out', 'stalled'];

/** Runs whose work is done: `merged`, a succeeded run whose delivered pull request merged since. */
export const SUCCESS_STATUSES: readonly RunStatus[] = ['succeeded', 'merged'];

export function isFailure(status: RunStatus): boolean {
  return FAILED_STATUSES.includes(status);
}

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/**
 * A run the screen blocked (no agent started; `allow` lets it through once). Every screened run
 * records its text's digest, so a run screened and then held for another reason (a delivery that
 * met someone else's branch) is `blocked` with a digest too: the screen's own block is recorded
 * with the screen's reason as the run's.
 */
export function blockedByScreening(
  run: Pick<RunRecord, 'status' | 'screenedDigest' | 'screeningReason' | 'reason'>,
): boolean {
  return run.status === 'blocked' && run.screenedDigest !== null && run.reason === run.screeningReason;
}

/** Token accounting an agent reported, summed over the run. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  /** Present only when the agent reports a cost. */
  costUsd?: number;
}

/** One row of the run ledger. Times are ISO 8601 strings in UTC. */
export interface RunRecord {
  readonly id: string;
  readonly automationId: string;
  /** `identityKey` of the task. */
  readonly taskKey: string;
  readonly repo: string;
  readonly taskType: string;
  readonly itemId: string;
  readonly itemKey: string;
  readonly itemTitle: string;
  readonly itemUrl: string;
  readonly status: RunStatus;
  /** Why the run ended as it did, in words a user can act on (error, skip or block reason). */
  readonly reason: string | null;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly profile: string | null;
  readonly provider: string | null;
  readonly sessionId: string | null;
  /** True when this run continued a saved session. */
  readonly resumed: boolean;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly transcriptPath: string | null;
  readonly branch: string | null;
  readonly worktreePath: string | null;
  /** True when the worktree was kept because it held unpushed commits or uncommitted changes. */
  readonly worktreeKept: boolean;
  /** Commits the run made on its branch that are on no remote. */
  readonly commits: number;
  readonly usage: Usage | null;
  /** The model the profile named (null: the CLI's default, not known to curupira). */
  readonly model?: string | null;
  /**
   * USD the run cost, from its usage and the price of its model (src/cost/), updated while the agent
   * runs; null when unknown (no usage, or a model without a price and no cost reported by the agent).
   */
  readonly costUsd?: number | null;
  /** The rendered prompt (the original task's prompt for a resumed run). */
  readonly prompt: string | null;
  /** Cron occurrence, for scheduled runs. */
  readonly scheduledFor: string | null;
  /** For chained runs: the upstream run that triggered this one. */
  readonly upstreamRunId: string | null;
  /** Process id (and process group) of the agent while it runs: lets a restart stop an orphan. */
  readonly agentPid: number | null;
  /**
   * What the agent's exit decided, saved the moment it exited and before cleanup: a restart that
   * finds it on an unfinished run finishes that run instead of resuming a session that is done.
   */
  readonly agentOutcome: AgentOutcome | null;
  /** When an operator dismissed the run from the board's Needs attention column. */
  readonly dismissedAt?: string | null;
  /** What screening found in the item's text (event triggers), blocking or not; null when not screened. */
  readonly screeningFindings: readonly ScreeningFinding[] | null;
  /** The screening verdict in one line (`blocked: …`, `warning: …`, `allowed once by …`). */
  readonly screeningReason: string | null;
  /** sha256 of the screened text: a blocked item is screened again only when this changes. */
  readonly screenedDigest: string | null;
  /** Which try of its task this run is (1 for a first run; retries count up to `max_attempts`). */
  readonly attempt?: number;
  /**
   * When this run's task runs again by itself (ISO 8601): a retry after a failure (with backoff),
   * or the end of a `parked` run's usage limit. Cleared when that run starts; null when none is due.
   */
  readonly retryAt?: string | null;
  /**
   * The fleet host that ran (or runs) it (`[settings.fleet] host`); null for a run of the embedded,
   * one-process store, which records no host.
   */
  readonly host?: string | null;
  /**
   * Which code the agent saw (issue 25): the commit of the base its worktree was cut from (the
   * default branch, `pr_base_branch`, or the pull request's base), and the pull request's head
   * commit for a worktree at that head (`worktree_from = "head"`); null when unknown or not so.
   */
  readonly baseCommit?: string | null;
  readonly headCommit?: string | null;
  /**
   * The result the agent reported (issue 32): one outcome of the automation's declared set, a
   * one-line reason and optional fields; null when it reported none or the automation declares no
   * outcomes.
   */
  readonly result?: RunResult | null;
  /** The inputs this run was given (`--set key=value`, the API's `inputs`); null when none. */
  readonly inputs?: Readonly<Record<string, string>> | null;
}

/**
 * What an agent reported it did (the seed's result line `#N <outcome>`, `noop: <reason>`…, or the
 * result tool). `noop`, `skipped` and `failed` are always in the set; `via` says how it came.
 */
export interface RunResult {
  readonly outcome: string;
  readonly reason: string | null;
  /** The item number the line named (`#31 ready-for-agent`), when it named one. */
  readonly item?: number;
  readonly fields?: Readonly<Record<string, string>>;
  readonly via: 'line' | 'tool';
}

/** One screening finding as a run records it (the shape of `Finding` in src/screening/). */
export interface ScreeningFinding {
  readonly scanner: string;
  readonly rule: string;
  readonly severity: 'low' | 'medium' | 'high' | 'critical';
  readonly field: string;
  readonly offset: number;
  readonly excerpt: string;
}

export interface AgentOutcome {
  status: RunStatus;
  reason: string | null;
}

/** An automation's daily spend and budget state (src/cost/budget.ts). */
export interface BudgetStatus {
  /** USD spent today (UTC) by the automation's runs of known cost, running ones included. */
  spentTodayUsd: number;
  /** Its daily budget (own or default), when it has one. */
  limitPerDayUsd?: number;
  /** `ok`, `warning` (80 % of a daily budget used) or `parked` (a budget ran out). */
  state: 'ok' | 'warning' | 'parked';
  /** While parked: until when (ISO 8601) and why. */
  parkedUntil?: string;
  reason?: string;
}

/** The store key of an automation's pause reason (an empty value: paused by hand, or none). */
export function pauseReasonKey(automationId: string): string {
  return `pause-reason:${automationId}`;
}
