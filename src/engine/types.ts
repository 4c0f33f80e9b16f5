/**
 * The kernel's public shapes: what the board, the CLI and a fleet see of an engine (its status,
 * its automations, dispatched tasks) and what a kernel is built from.
 */

import type { Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { ConfigError } from '../core/errors.js';
import type { Feature, KernelPort } from '../core/feature.js';
import type { BudgetStatus, RunRecord, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import type { ServiceKit } from '../triggers/service.js';
import type { ExecutorDeps, PreviousAttempt, RemediationRun, SelfCommand } from './executor.js';

/** What the engine knows of one automation now (for the board and `curupira status`). */
export interface AutomationStatus {
  id: string;
  /**
   * Not polled until resumed: paused by an operator (`curupira pause`, the board), or disabled in
   * the settings file (`enabled = false`). Either keeps it paused.
   */
  paused: boolean;
  /** `enabled = false` in the settings file: only an edit of the file resumes it. */
  disabled: boolean;
  /**
   * Automations with item memory (`once`, `ignore_backlog`): when the baseline of their filters was
   * taken (null: not yet, or taken before curupira recorded the time). Absent for the others.
   */
  baseline?: { set: boolean; at: string | null };
  /** Epoch ms of the next poll (for a schedule, the next check of the clock). */
  nextPollAt: number;
  /** Epoch ms the last poll finished, and the new tasks it found. */
  lastPollAt?: number;
  lastFound?: number;
  /** The last poll's error, until a poll succeeds. */
  lastError?: string;
  /** Matching items beyond `batch_size` the last poll did not reach. */
  waiting: number;
  /** Open items matching the trigger at the last poll (event triggers that report it). */
  matching?: number;
  /** Why it was paused automatically (`pause_after_failures`); absent when paused by hand or not paused. */
  pausedReason?: string;
  /** Its tasks waiting to run again: `retry 2/3 at 14:05:30`, `parked until 15:00:00` (item id first). */
  retries?: { itemId: string; item: string; note: string; at: number }[];
  /** Its provider is parked by a usage limit until then (epoch ms). */
  parkedUntil?: number;
  /** The scans a person may ask for now (a review watch's `baseline`); absent: none. */
  scans?: readonly string[];
  /** Today's spend and budget state; parked automations are not polled until the next UTC day. */
  budget?: BudgetStatus;
}

/** What an operator's retry did. */
export type RetryResult = 'resumed' | 'polling' | 'fired';

export interface RunningTask {
  automationId: string;
  repo: string;
  itemId: string;
  /** How the item reads to a person (`acme/api#12`, `acme/api@1a2b3c4`, `Linear ENG-1`). */
  item: string;
  title: string;
  runId?: string;
  status: string;
  startedAt: number;
  /** A remediation run (src/delivery/remediation.ts): the delivery run whose pull request it answers. */
  remediationOf?: string;
}

/** A task waiting in this process's queue for a free slot (no run yet). */
export interface QueuedTask {
  automationId: string;
  repo: string;
  itemId: string;
  /** How the item reads to a person (`acme/api#12`). */
  item: string;
  title: string;
  url: string;
}

export interface EngineStatus {
  mode: 'drain' | 'watch';
  running: RunningTask[];
  queued: number;
  /** The queued tasks, in the order they start (the first `QUEUED_SHOWN`). */
  queuedTasks?: QueuedTask[];
  maxActive: number;
  /** Epoch ms of the next poll, in watch mode. */
  nextPollAt?: number;
  /** Running agents are being stopped. */
  stopping: boolean;
  /** No new runs start; running agents finish first (the first Ctrl+C). */
  draining: boolean;
  /** Matching items the last polls did not reach (beyond `batch_size`), over all automations. */
  waiting: number;
  /** Providers parked by a usage limit, and until when (epoch ms). */
  parked?: { provider: string; until: number }[];
  /** Tasks waiting for a retry or a reset. */
  retrying?: number;
  /** The settings file's last reload failed (the last good settings run) until a reload succeeds. */
  reloadError?: { message: string; at: string };
}

/** A task as it is handed to whoever runs it (this process, or a fleet host: issue 17), as JSON. */
export interface DispatchedTask {
  automationId: string;
  task: Task;
  /** Continue the task's saved session (the runner reads it from the store). */
  resume: boolean;
  discoveredAt?: number;
  attempt?: number;
  retryOf?: string;
  /** A restart after the previous attempt's host was lost. */
  previousAttempt?: PreviousAttempt;
  /** Inputs a trigger or a retry gave the run (issue 32): the host that takes it keeps them. */
  inputs?: Readonly<Record<string, string>>;
}

/**
 * Runs dispatched tasks somewhere else (a fleet poller hands them to workers, src/fleet/). Without
 * one, the engine runs them itself.
 */
export interface TaskRunner {
  /**
   * Runs one task and resolves with its final run (undefined: not run, or given up because this
   * engine stops: `stop` aborted, the task keeps running where it is). `cancel`: an operator
   * cancelled it.
   */
  run(
    job: DispatchedTask,
    signals: { cancel: AbortSignal; stop: AbortSignal },
    onUpdate: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined>;
  /** Tasks handed out before this engine started (a poller taking over): offered first, not sent again. */
  adopt?(): Promise<DispatchedTask[]>;
  /**
   * Tasks that earlier engines dispatched and that ran (a poller taking over): the feeds count
   * their text as dispatched, as the earlier engine's own memory did, so an unchanged item does not
   * run again because the poller moved.
   */
  dispatched?(): Promise<DispatchedTask[]>;
  /** The engine finished its after-run work for the task's last run (counting, retries, marks). */
  settled?(taskKey: string): Promise<void>;
}

/** What features contribute to every run's executor (claims, meters, writes, delivery, traces). */
export type ExecutorDepsPart = Partial<ExecutorDeps>;

export interface KernelOptions {
  settings: Settings;
  /**
   * Inputs given to this invocation (`curupira run --set key=value`, issue 32): each run takes the
   * ones its automation declares in `inputs`, over their defaults (checked by src/pipeline/inputs.ts).
   */
  inputs?: Readonly<Record<string, string>>;
  /** Where dispatched tasks run (default: here). */
  runner?: TaskRunner;
  /**
   * This process's fleet host (issue 17): its runs record it, and a restart recovers only the
   * unfinished runs recorded with it.
   */
  host?: string;
  mode: 'drain' | 'watch';
  /** Start at most this many runs, then finish them and return. */
  size?: number;
  store: Store;
  clock: Clock;
  log: Logger;
  /** curupira's own environment (agent variables are copied from it, never wholesale). */
  env: NodeJS.ProcessEnv;
  /** The GitHub client, created on first use. */
  github(): GitHubClient;
  /** Credentials and HTTP for sources outside GitHub; default: from `env`, over the platform's fetch. */
  service?: ServiceKit;
  tokens?: TokenSource;
  transcriptsDir: string;
  /** How an agent's CLI starts this curupira (a review run's findings server); absent: not offered. */
  selfCommand?: SelfCommand;
  /** Aborting stops now: no new runs; running agents are stopped and their sessions kept. */
  stopSignal: AbortSignal;
  /** Aborting drains: no new runs; running agents finish, then the engine returns. */
  drainSignal?: AbortSignal;
  /** Watch mode: re-reads the settings file when it changed; returns undefined when it did not. */
  reload?: () => Settings | ConfigError | undefined;
  /** How often the settings file is checked for changes in watch mode (ms, default 1000). */
  reloadIntervalMs?: number;
  killGraceMs?: number;
  onStatus?(status: EngineStatus): void;
  /** Run settled: a run reached its final record (tests wait on it instead of sleeping). */
  onRun?(run: RunRecord): void;
  /** Tick finished: one round of the watch loop (polls, dispatch, follow-ups) is done; what it left. */
  onTick?(status: EngineStatus): void;
  /**
   * The features, in order (src/features.ts builds the list); each reaches the kernel through
   * `port` only. Without it the kernel runs with none.
   */
  features?(port: KernelPort, kernel: RemediationHost): readonly Feature<ExecutorDepsPart>[];
}

export interface EngineResult {
  /** Every run this engine started, in start order, with its final state. */
  runs: RunRecord[];
  stoppedEarly: boolean;
  /** Polls that failed (the last failure per automation): `run` reports them instead of "nothing to do". */
  discoveryErrors: { automationId: string; message: string }[];
  /** Automations whose last poll left matching items beyond `batch_size` unread. */
  waiting: { automationId: string; count: number }[];
  /** Items found again whose unchanged text an earlier run blocked: nothing new was recorded. */
  held: RunRecord[];
}

/** What a feature wiring may call on the kernel beyond its port: remediation runs (delivery). */
export interface RemediationHost {
  remediate(
    automation: import('../config/types.js').ResolvedAutomation,
    task: Task,
    remediation: RemediationRun,
    onRun: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined>;
}
