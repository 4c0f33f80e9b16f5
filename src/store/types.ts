/**
 * The store holds what GitHub cannot: sessions to resume, the run ledger, cron marks, item memory.
 * Async so that a PostgreSQL implementation can serve a fleet later; nothing here may assume one
 * process forever. Killing the process at any instant must leave a consistent store.
 */
import type { AgentOutcome, RunRecord, RunStatus, Task, Usage } from '../core/types.js';

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
  prompt?: string | null;
  profile?: string | null;
  provider?: string | null;
  agentPid?: number | null;
  agentOutcome?: AgentOutcome | null;
  /** When an operator dismissed the run from Needs attention (null brings it back). */
  dismissedAt?: string | null;
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
}

export interface ItemMemoryEntry {
  itemKey: string;
  /** The run that dispatched (or skipped) the item. */
  runId: string | null;
  /** True for items recorded by `ignore_backlog` on the first poll: never run. */
  skipped: boolean;
}

export interface Store {
  /** Absolute path of the database file. */
  readonly path: string;

  saveSession(session: SessionRecord): Promise<void>;
  getSession(taskKey: string): Promise<SessionRecord | undefined>;
  listSessions(): Promise<SessionRecord[]>;
  deleteSession(taskKey: string): Promise<void>;
  /** Counts one more failed resume of the task's session; returns the count (0 when none is saved). */
  recordResumeFailure(taskKey: string): Promise<number>;

  createRun(init: RunInit): Promise<RunRecord>;
  updateRun(id: string, patch: RunPatch): Promise<RunRecord>;
  getRun(id: string): Promise<RunRecord | undefined>;
  listRuns(filter?: RunFilter): Promise<RunRecord[]>;
  /** How many runs match (limit and offset are ignored). */
  countRuns(filter?: RunFilter): Promise<number>;
  /** Deletes all but the newest `keep` finished runs of an automation; returns the deleted rows. */
  pruneRuns(automationId: string, keep: number): Promise<RunRecord[]>;
  /** Runs left `queued`, `preparing` or `running` by a process that died: the caller decides their fate. */
  listUnfinishedRuns(): Promise<RunRecord[]>;

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

  /** Small named values (baselines, filter hashes). */
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;

  close(): Promise<void>;
}
