/**
 * The store holds what GitHub cannot: sessions to resume, the run ledger, cron marks, item memory.
 * Async so that a PostgreSQL implementation can serve a fleet later; nothing here may assume one
 * process forever. Killing the process at any instant must leave a consistent store.
 */
import type {
  AgentOutcome,
  RunRecord,
  RunResult,
  RunStatus,
  ScreeningFinding,
  Task,
  Usage,
} from '../core/types.js';

/** A running agent session, saved the moment the agent announces it, removed on success. */
export interface SessionRecord {
  /** `identityKey` of the task. */
  taskKey: string;
  automationId: string;
  /** The run that started (or last continued) the session. */
  runId: string;
  provider: string;
  profile: string;
  sessionId: string;
  /** The original rendered prompt: a resumed run is told to continue, and records this prompt. */
  prompt: string;
  /** Hash of the automation's prompt template when the session started: a changed template means a fresh start. */
  promptTemplateHash: string;
  /** The task snapshot, so the session can be resumed before (or without) discovery finding it again. */
  task: Task;
  worktreePath: string | null;
  branch: string | null;
  createdAt: string;
  updatedAt: string;
  /** Resumes of this session that failed in a row (kept by the store; reset when the id changes). */
  resumeFailures?: number;
}

export interface CronState {
  automationId: string;
  /** When curupira first saw this automation: schedules start from here unless `start_date` says otherwise. */
  createdAt: string;
  /** Last occurrence claimed for a run. */
  lastScheduledFor: string | null;
  /** An occurrence claimed but not yet finished (coalesced overdue ticks collapse into this one). */
  pendingScheduledFor: string | null;
  lastExecutionAt: string | null;
  /** Hash of the schedule settings; a change resets the marks. */
  configHash: string | null;
}

/** Fields required to open a run; everything else starts empty. */
export interface RunInit {
  automationId: string;
  taskKey: string;
  repo: string;
  taskType: string;
  itemId: string;
  itemKey: string;
  itemTitle: string;
  itemUrl: string;
  status: RunStatus;
  reason?: string | null;
  profile?: string | null;
  provider?: string | null;
  prompt?: string | null;
  scheduledFor?: string | null;
  upstreamRunId?: string | null;
  resumed?: boolean;
  sessionId?: string | null;
  screeningFindings?: readonly ScreeningFinding[] | null;
  screeningReason?: string | null;
  screenedDigest?: string | null;
  /** Which try of its task this run is (default 1). */
  attempt?: number;
  /** The fleet host that runs it (migration 12); omitted: none recorded. */
  host?: string | null;
}

export interface RunPatch {
  status?: RunStatus;
  reason?: string | null;
  startedAt?: string | null;
  finishedAt?: string | null;
  sessionId?: string | null;
  resumed?: boolean;
  exitCode?: number | null;
  signal?: string | null;
  transcriptPath?: string | null;
  branch?: string | null;
  worktreePath?: string | null;
  worktreeKept?: boolean;
  commits?: number;
  usage?: Usage | null;
  model?: string | null;
  costUsd?: number | null;
  prompt?: string | null;
  profile?: string | null;
  provider?: string | null;
  agentPid?: number | null;
  agentOutcome?: AgentOutcome | null;
  /** When an operator dismissed the run from Needs attention (null brings it back). */
  dismissedAt?: string | null;
  screeningFindings?: readonly ScreeningFinding[] | null;
  screeningReason?: string | null;
  screenedDigest?: string | null;
  /** When the task runs again by itself (a retry, or a parked run's reset); null: none due. */
  retryAt?: string | null;
  /** The fleet host that runs it (migration 12). */
  host?: string | null;
  /** The base commit the worktree was cut from (migration 13). */
  baseCommit?: string | null;
  /** The pull request's head commit a `worktree_from = "head"` worktree started at (migration 13). */
  headCommit?: string | null;
  /** The result the agent reported (migration 15). */
  result?: RunResult | null;
  /** The run's inputs (migration 15). */
  inputs?: Readonly<Record<string, string>> | null;
}

/** An operator's `curupira allow RUN_ID`: the blocked text of that run may run once. */
export interface Allowance {
  id: number;
  /** The blocked run that was allowed. */
  runId: string;
  taskKey: string;
  /** The screened text's digest: only this exact text is let through. */
  textDigest: string;
  /** Who allowed it (`--by`, else the local user). */
  allowedBy: string;
  allowedAt: string;
  /** When a run used it; null while it still waits. */
  usedAt: string | null;
}

/** An automation (or `*`, every automation) parked by a spent budget until a time. */
export interface BudgetPark {
  scope: string;
  until: string;
  reason: string;
}

export interface RunFilter {
  automationId?: string;
  /** Any of these statuses; an empty array means no status filter. */
  status?: readonly RunStatus[];
  /** Newest first; default 50; `Infinity` for all. */
  limit?: number;
  offset?: number;
  /** Only runs whose worktree was kept and still exists on record. */
  worktreeKept?: boolean;
  /** Only runs older than this id (cursor pagination: pass the last id of the previous page). */
  beforeId?: string;
  /**
   * true: runs that need a human (a kept worktree, or a status outside the running and calm ones:
   * failed, timed out, blocked, any new one) and were not dismissed; false: every other run.
   */
  attention?: boolean;
  /** true: only runs whose task runs again by itself (a `retryAt` is set: a retry, a parked run). */
  retryPending?: boolean;
  /** Only the runs of this task (`identityKey`): an item's attempts. */
  taskKey?: string;
  /** Only runs of this agent profile. */
  profile?: string;
  /** Only runs on this repository (`owner/name`). */
  repo?: string;
  /** Only runs whose item title contains this text (case-insensitive for ASCII letters). */
  text?: string;
  /** Only runs created at or after this time (ISO 8601). */
  createdSince?: string;
  /** Only runs created before this time (ISO 8601). */
  createdBefore?: string;
}

export interface ItemMemoryEntry {
  itemKey: string;
  /** The run that dispatched (or skipped) the item. */
  runId: string | null;
  /** True for items recorded by `ignore_backlog` on the first poll: never run. */
  skipped: boolean;
}

/**
 * The local failure budget of one automation's work on one item (issue 12): failed runs counted
 * since the last success or reset, on the item text they failed on.
 */
export interface ItemFailures {
  /** `identityKey` of the task (automation, repo, task type, id). */
  taskKey: string;
  automationId: string;
  itemKey: string;
  failures: number;
  /** Digest of the item's title and body at the last failure: other text starts the count again. */
  textDigest: string;
  lastRunId: string;
  /** When the count reached `max_item_failures`: no further runs until a reset or new text. */
  escalatedAt: string | null;
  /** The `escalated` run recorded for this escalation (one per escalation, not one per poll). */
  noticeRunId: string | null;
  updatedAt: string;
}

/**
 * One intended write to GitHub (the write queue, src/github/write-queue.ts). Each is idempotent:
 * `comment` creates or edits the comment that holds its marker; labels and state are set, not toggled.
 */
export type GitHubWrite =
  | {
      readonly kind: 'comment';
      readonly body: string;
      /** Only edit the marked comment: when none is there, nothing is posted (lease releases). */
      readonly editOnly?: boolean;
      /** On the issue the `create-issue` write with this marker made (the record's `number` is 0). */
      readonly onIssueOf?: string;
    }
  | {
      readonly kind: 'create-issue';
      readonly title: string;
      /** Must hold no other write's marker; the queue appends this write's own. */
      readonly body: string;
      readonly labels: readonly { name: string; color?: string; description?: string }[];
    }
  | {
      readonly kind: 'add-labels';
      /** Created in the repository (with the colour and description) when missing. */
      readonly labels: readonly { name: string; color?: string; description?: string }[];
    }
  | { readonly kind: 'remove-label'; readonly label: string }
  /** Asks people (logins) and teams (slugs) to review the pull request (`human_reviewer`). */
  | {
      readonly kind: 'request-reviewers';
      readonly reviewers: readonly string[];
      readonly teamReviewers: readonly string[];
    }
  /** A pull-request review with the run's verdict (a handoff's `review`); the body holds the marker. */
  | {
      readonly kind: 'review';
      readonly event: 'APPROVE' | 'REQUEST_CHANGES' | 'COMMENT';
      readonly body: string;
    }
  | {
      readonly kind: 'set-state';
      readonly state: 'open' | 'closed';
      readonly stateReason?: 'completed' | 'not_planned' | 'reopened';
      /** Of the issue the `create-issue` write with this marker made (the record's `number` is 0). */
      readonly onIssueOf?: string;
    }
  /**
   * A write to an item outside GitHub (a Linear issue): sent by the trigger's own sender, which the
   * write queue is handed (src/triggers/write-back.ts). The record's `repo` is `<service>:<team>`.
   */
  | {
      readonly kind: 'service';
      /** The trigger type that sends it (`linear`). */
      readonly service: string;
      /** The automation whose credentials and endpoint it is sent with. */
      readonly automation: string;
      /** The item's key in its service (`ENG-7`). */
      readonly item: string;
      readonly action: 'comment' | 'move';
      /** The comment's text (`comment`). */
      readonly body?: string;
      /** The workflow state's name (`move`). */
      readonly state?: string;
    };

/** A write to an item outside GitHub, sent by its trigger's `writeBack` hook. */
export type ServiceWrite = Extract<GitHubWrite, { kind: 'service' }>;

export type WriteStatus = 'pending' | 'sent' | 'failed';

export interface WriteInit {
  /** Idempotency key, unique in the queue: enqueueing it again replaces the write and sends it anew. */
  marker: string;
  /** `owner/name`. */
  repo: string;
  /** Issue or pull request number; 0 for `create-issue` and for writes `onIssueOf` a created issue. */
  number: number;
  write: GitHubWrite;
  runId?: string | null;
  /** When the first attempt may start (ISO 8601); default now. */
  notBefore?: string;
}

export interface WriteRecord {
  id: number;
  marker: string;
  repo: string;
  number: number;
  write: GitHubWrite;
  runId: string | null;
  status: WriteStatus;
  /** Attempts started (counted before each request, so a crash mid-request still counts). */
  attempts: number;
  /** When the next attempt may start (ISO 8601). */
  nextAttemptAt: string;
  lastError: string | null;
  /** The comment's REST id (an issue's number for `create-issue`), once known. */
  resultId: number | null;
  createdAt: string;
  sentAt: string | null;
}

export interface WritePatch {
  status?: WriteStatus;
  attempts?: number;
  nextAttemptAt?: string;
  lastError?: string | null;
  resultId?: number | null;
  sentAt?: string | null;
}

export type NotificationStatus = 'pending' | 'sent' | 'failed';

/** One notification to deliver to one target (src/notify/): queued before any request is sent. */
export interface NotificationInit {
  /** Idempotency key, unique in the table: `<event id>@<target>`; queueing it again does nothing. */
  key: string;
  /** The `[notifications.<name>]` it goes to. */
  target: string;
  eventId: string;
  event: string;
  /** The exact JSON body to send (already redacted). */
  payload: string;
  /** When the first attempt may start (ISO 8601); default now. */
  notBefore?: string;
}

/** How bad a finding of a code review is, worst first. */
export const FINDING_SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/** What a review reports of one problem (`findings_report`), with the run and commit it was seen at. */
export interface FindingInit {
  /** The watch (its automation id) that owns the finding. */
  watch: string;
  repo: string;
  /** Same fingerprint, same finding (see src/review/fingerprint.ts). */
  fingerprint: string;
  file: string;
  lineStart: number;
  lineEnd: number;
  severity: FindingSeverity;
  category: string;
  title: string;
  detail: string;
  commit: string;
  runId: string;
}

export interface FindingRecord {
  id: number;
  watch: string;
  repo: string;
  fingerprint: string;
  file: string;
  lineStart: number;
  lineEnd: number;
  severity: FindingSeverity;
  category: string;
  title: string;
  detail: string;
  status: 'open' | 'resolved';
  firstSeenCommit: string;
  lastSeenCommit: string;
  firstRunId: string;
  lastRunId: string;
  firstSeenAt: string;
  lastSeenAt: string;
  resolvedAt: string | null;
  resolvedCommit: string | null;
  resolvedRunId: string | null;
  /** What the review said when it resolved the finding. */
  resolution: string | null;
}

/** What recording a finding did: a new one, one still open seen again, or a resolved one back. */
export type FindingOutcome = 'new' | 'seen-again' | 'reopened';

export interface NotificationRecord {
  id: number;
  key: string;
  target: string;
  eventId: string;
  event: string;
  payload: string;
  status: NotificationStatus;
  /** Attempts started (counted before each request, so a crash mid-request still counts). */
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  createdAt: string;
  sentAt: string | null;
}

export interface NotificationPatch {
  status?: NotificationStatus;
  attempts?: number;
  nextAttemptAt?: string;
  lastError?: string | null;
  sentAt?: string | null;
}

/**
 * Where a delivery stands (migration 9). `pushing` until the branch is on the remote, `pushed` until
 * its pull request is known (a `branch` delivery stops there); then the pull request's own state.
 * A pull request closed unmerged is `needs_human` until a person picks a way on with a label
 * (src/delivery/follow.ts): `landed` (the work landed elsewhere), `abandoned`, or `redeveloped`
 * (the item is run afresh).
 */
export type PullRequestState =
  | 'pushing'
  | 'pushed'
  | 'open'
  | 'merged'
  | 'closed'
  | 'needs_human'
  | 'landed'
  | 'abandoned'
  | 'redeveloped'
  | 'failed';

/**
 * Where an open pull request stands for following (migration 11), next to its lifecycle `state`:
 * what curupira waits for or acts on. `needs_human` here means a follow-up step gave up (budget
 * spent, a conflict it could not resolve); the lifecycle state stays `open`.
 */
export type PullRequestGate =
  | 'open'
  | 'awaiting_review'
  | 'changes_requested'
  | 'ci_failing'
  | 'conflicted'
  | 'behind'
  | 'ready'
  | 'needs_human';

/** One small per-delivery value (migration 11): a high-water mark, a round count, a notice sent. */
export interface PullRequestMark {
  runId: string;
  key: string;
  value: string;
  /** When it was last set. */
  at: string;
}

/** A run's delivery: its pushed branch and the pull request curupira opened or adopted (a "gate"). */
export interface PullRequestRecord {
  runId: string;
  automationId: string;
  taskKey: string;
  /** `owner/name` the pull request lives in. */
  repo: string;
  delivery: 'pr' | 'branch';
  headBranch: string;
  /** The commit pushed last. */
  headSha: string | null;
  baseBranch: string | null;
  number: number | null;
  url: string | null;
  /** True when the pull request was already open (opened by the agent or a person) and curupira adopted it. */
  adopted: boolean;
  state: PullRequestState;
  /** A word on the state (the push error, who closed it…). */
  detail: string | null;
  /** When `state` last changed. */
  since: string;
  /** While open and followed: its gate (null until first followed). */
  gate: PullRequestGate | null;
  /** When `gate` last changed. */
  gateSince: string | null;
  /** A word on the gate (which checks fail, who asked for changes…). */
  gateDetail: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface PullRequestFilter {
  states?: readonly PullRequestState[];
  taskKey?: string;
  /** Only the deliveries of these runs (the cards of a page: one query for all of them). */
  runIds?: readonly string[];
}

/** The window of `runFigures`: runs created in [createdSince, createdBefore), of one automation or all. */
export interface RunFigureFilter {
  createdSince: string;
  createdBefore: string;
  automationId?: string;
}

/** Sums over the runs of one automation, agent profile and status in a window (`runFigures`). */
export interface RunTally {
  automationId: string;
  profile: string | null;
  status: RunStatus;
  runs: number;
  /** USD over the runs of known cost. */
  costUsd: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Deliveries of these runs that are pull requests with a number, and those merged. */
  pullRequestsOpened: number;
  pullRequestsMerged: number;
}

/**
 * Medians over the runs of a window, per scope: `byAutomation` / `byProfile` false means over every
 * automation / every profile (`automationId` / `profile` are then null).
 */
export interface RunMedian {
  byAutomation: boolean;
  byProfile: boolean;
  automationId: string | null;
  profile: string | null;
  /** Median milliseconds a finished run took (start to finish). */
  durationMs: number | null;
  /**
   * Median milliseconds from the item to its merged pull request: from the creation of the first
   * attempt of the run's task (the item picked up; a retry that delivered counts from the first
   * try), or from a scheduled occurrence's time when that is earlier, to the merge.
   */
  toMergeMs: number | null;
}

export interface RunFigures {
  tallies: RunTally[];
  medians: RunMedian[];
}

export type PullRequestInit = Pick<
  PullRequestRecord,
  'runId' | 'automationId' | 'taskKey' | 'repo' | 'delivery' | 'headBranch'
>;

export type PullRequestPatch = Partial<
  Pick<
    PullRequestRecord,
    'headSha' | 'baseBranch' | 'number' | 'url' | 'adopted' | 'state' | 'detail' | 'gate' | 'gateDetail'
  >
>;

/**
 * How a write reaches the disk. By default a write is durable when it returns: it survives a power
 * cut, not only a kill (`synchronous = FULL`: SQLite waits for `fsync`). `durable: false` is for a
 * write that a durable write of the same flow soon follows: it survives a kill at once (it is in the
 * operating system's cache) and a power cut once any later durable write returns (SQLite recovers a
 * prefix of its write-ahead log, so that write carries every earlier one). Use it only where a
 * power cut that loses it leaves what a kill just before it leaves (see docs/design-notes.md).
 */
export interface WriteOptions {
  durable?: boolean;
}

export interface Store {
  /**
   * Where the state lives: the database file's absolute path, or for PostgreSQL the URL with its
   * password left out (safe to print).
   */
  readonly path: string;
  /** Which backend holds it: `sqlite` (the embedded default) or `postgres` (`state_db_url`). */
  readonly backend?: 'sqlite' | 'postgres';

  saveSession(session: SessionRecord, options?: WriteOptions): Promise<void>;
  getSession(taskKey: string): Promise<SessionRecord | undefined>;
  listSessions(): Promise<SessionRecord[]>;
  deleteSession(taskKey: string, options?: WriteOptions): Promise<void>;
  /** Counts one more failed resume of the task's session; returns the count (0 when none is saved). */
  recordResumeFailure(taskKey: string): Promise<number>;

  /**
   * Counts one more failed run of a task on text `textDigest` (a different digest starts the count
   * at 1); escalates it when the count reaches `limit` (0: never). Returns the new state.
   */
  recordItemFailure(failure: {
    taskKey: string;
    automationId: string;
    itemKey: string;
    runId: string;
    textDigest: string;
    limit: number;
  }): Promise<ItemFailures>;
  /**
   * Raises a task's count to at least `failures` (another host's count, read from its result
   * markers); never lowers it and never escalates by itself. Other text starts from `failures`.
   */
  raiseItemFailures(floor: {
    taskKey: string;
    automationId: string;
    itemKey: string;
    runId: string;
    textDigest: string;
    failures: number;
  }): Promise<ItemFailures>;
  getItemFailures(taskKey: string): Promise<ItemFailures | undefined>;
  /** Escalated tasks, oldest escalation first. */
  listEscalations(): Promise<ItemFailures[]>;
  /** Records the `escalated` run that told the user about this escalation. */
  setEscalationNotice(taskKey: string, runId: string): Promise<void>;
  /** Forgets a task's failures (a success, a reset, new text); true when there were any. */
  clearItemFailures(taskKey: string): Promise<boolean>;

  createRun(init: RunInit, options?: WriteOptions): Promise<RunRecord>;
  updateRun(id: string, patch: RunPatch, options?: WriteOptions): Promise<RunRecord>;
  getRun(id: string): Promise<RunRecord | undefined>;
  listRuns(filter?: RunFilter): Promise<RunRecord[]>;
  /** How many runs match (limit and offset are ignored). */
  countRuns(filter?: RunFilter): Promise<number>;
  /** The newest run of each of these tasks (a task without runs is absent), in no set order. */
  newestRunsOfTasks(taskKeys: readonly string[]): Promise<RunRecord[]>;
  /**
   * A window's figures without reading run records (issue 28: figures at 100,000 runs): sums per
   * automation, profile and status computed by the database, and medians per scope from two
   * numbers per run (duration, time to merge) that the database computes.
   */
  runFigures(filter: RunFigureFilter): Promise<RunFigures>;
  /** Deletes all but the newest `keep` finished runs of an automation; returns the deleted rows. */
  pruneRuns(automationId: string, keep: number): Promise<RunRecord[]>;
  /** How many finished runs of an automation the ledger holds (what `pruneRuns` would count). */
  countFinishedRuns(automationId: string): Promise<number>;
  /**
   * USD spent by runs that started at or after `since` (ISO 8601), of one automation or of all;
   * runs of unknown cost count nothing.
   */
  sumCost(filter: { since: string; automationId?: string }): Promise<number>;
  /** Parks an automation (or `*`: every automation) until `until` (ISO 8601) because a budget ran out. */
  setBudgetPark(park: BudgetPark): Promise<void>;
  /** Budget parks that last beyond `at` (ISO 8601); older ones are gone for good. */
  listBudgetParks(at: string): Promise<BudgetPark[]>;
  /**
   * Runs left `queued`, `preparing` or `running` by a process that died: the caller decides their
   * fate. With `host`, only the runs recorded with that host (a fleet worker recovers its own).
   */
  listUnfinishedRuns(filter?: { host?: string }): Promise<RunRecord[]>;

  getCronState(automationId: string): Promise<CronState | undefined>;
  putCronState(state: CronState): Promise<void>;

  hasItemKey(automationId: string, itemKey: string): Promise<boolean>;
  recordItemKeys(automationId: string, entries: readonly ItemMemoryEntry[]): Promise<void>;
  /** Everything remembered for an automation, ordered by item key; the first record of a key wins. */
  listItemKeys(automationId: string): Promise<ItemMemoryEntry[]>;
  /** Forgets an automation's item memory (used when its filters change). */
  clearItemKeys(automationId: string): Promise<void>;

  /** Pauses (or resumes) an automation by hand; remembered across restarts. */
  setPaused(automationId: string, paused: boolean): Promise<void>;
  /** Automations paused by hand, by id. */
  listPaused(): Promise<string[]>;
  /** The newest `blocked` run of a task whose screened text had this digest. */
  findBlockedRun(taskKey: string, digest: string): Promise<RunRecord | undefined>;
  /**
   * Records that a blocked run's exact text may run once; throws `StateError` for a run that is not
   * blocked. `allowedAt` (default now): an allowance given back keeps the time the person allowed it.
   */
  addAllowance(runId: string, allowedBy: string, allowedAt?: string): Promise<Allowance>;
  /**
   * Uses (marks used) the oldest waiting allowance of a task for this digest; undefined when none
   * waits. With `token` (unique per call), a call sent again after its answer was lost returns the
   * allowance its first try took.
   */
  takeAllowance(taskKey: string, digest: string, token?: string): Promise<Allowance | undefined>;
  /** Allowances of one run, or every one still waiting (`pending`), oldest first. */
  listAllowances(filter: { runId?: string; pending?: boolean }): Promise<Allowance[]>;

  /** Queues a write (or replaces the one with the same marker, making it pending again). */
  enqueueWrite(init: WriteInit): Promise<WriteRecord>;
  /**
   * Pending writes whose next attempt is due at `dueBy` (ISO 8601), oldest due first; a write waits
   * while an earlier write to the same item is still pending (each item's writes keep their order).
   */
  listDueWrites(dueBy: string, limit?: number): Promise<WriteRecord[]>;
  /** Writes in queue order, optionally only those with a status, of a run, or with a marker. */
  listWrites(filter?: { status?: WriteStatus; runId?: string; marker?: string }): Promise<WriteRecord[]>;
  updateWrite(id: number, patch: WritePatch): Promise<WriteRecord>;

  /** Queues a notification; one that already has this key is left as it is. Returns the row. */
  enqueueNotification(init: NotificationInit): Promise<NotificationRecord>;

  /**
   * Records a finding of a review: a new row, or the watch's row with the same fingerprint updated
   * (lines, text, last-seen commit and run) and open again if it was resolved.
   */
  recordFinding(init: FindingInit): Promise<{ finding: FindingRecord; outcome: FindingOutcome }>;
  /** Marks an open finding resolved at `commit` by `runId`; undefined when no open finding has that id. */
  resolveFinding(
    id: number,
    resolved: { commit: string; runId: string; resolution: string },
  ): Promise<FindingRecord | undefined>;
  /** Findings, oldest first: of one watch, of one status, at most `limit` (default all). */
  listFindings(filter?: {
    watch?: string;
    status?: FindingRecord['status'];
    limit?: number;
  }): Promise<FindingRecord[]>;
  /** Pending notifications whose next attempt is due at `dueBy` (ISO 8601), oldest due first. */
  listDueNotifications(dueBy: string, limit?: number): Promise<NotificationRecord[]>;
  /** Notifications in queue order, optionally only those with a status. */
  listNotifications(filter?: { status?: NotificationStatus }): Promise<NotificationRecord[]>;
  updateNotification(id: number, patch: NotificationPatch): Promise<NotificationRecord>;
  /**
   * Remembers a GitHub webhook delivery id; false when it was already recorded (a redelivery).
   * Ids received before `pruneBefore` (ISO 8601) are forgotten in the same step. With `receipt`
   * (unique per call), a call sent again after its answer was lost is true again, not a redelivery.
   */
  recordWebhookDelivery(delivery: {
    id: string;
    event: string;
    pruneBefore: string;
    receipt?: string;
  }): Promise<boolean>;
  /** Records a run's delivery (state `pushing`), or returns the one already recorded for the run. */
  beginPullRequest(init: PullRequestInit): Promise<PullRequestRecord>;
  /** Changes a delivery; `since` moves when the state changes. */
  updatePullRequest(runId: string, patch: PullRequestPatch): Promise<PullRequestRecord>;
  getPullRequest(runId: string): Promise<PullRequestRecord | undefined>;
  /** Deliveries, oldest first, optionally only those in some states or of one task. */
  listPullRequests(filter?: PullRequestFilter): Promise<PullRequestRecord[]>;
  /** One mark of a delivery (migration 11), if set. */
  getPullRequestMark(runId: string, key: string): Promise<PullRequestMark | undefined>;
  /** Sets (or replaces) a mark of a delivery. */
  setPullRequestMark(runId: string, key: string, value: string): Promise<PullRequestMark>;
  /** Removes a mark; true when there was one. */
  deletePullRequestMark(runId: string, key: string): Promise<boolean>;
  /** Every mark of a delivery, by key. */
  listPullRequestMarks(runId: string): Promise<PullRequestMark[]>;

  /** Small named values (baselines, filter hashes). */
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;

  /**
   * Runs `action` while no other process sharing this state runs one of the same `name` (a
   * fleet's hosts drain one write queue: two drains at once could both send a write). The embedded
   * store, one process, has no need of it: callers run the action directly when it is absent.
   */
  exclusive?<T>(name: string, action: () => Promise<T>): Promise<T>;

  close(): Promise<void>;
}
