/**
 * The engine: feeds → scheduler core → executor, in two modes. `drain` runs what is available now
 * and returns; `watch` polls until stopped, reloading the settings file when it changes. On start
 * it stops agents a dead curupira left behind, closes their runs, and resumes saved sessions first.
 */
import { rm } from 'node:fs/promises';
import { resolveScreening } from '../config/screening.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { afterRunWrites } from '../coordination/after-run.js';
import { checkBudget, countRun } from '../coordination/budget.js';
import { Escalation } from '../coordination/escalation.js';
import { wantsLeases } from '../coordination/lease.js';
import { Sweeper } from '../coordination/sweep.js';
import type { Clock } from '../core/clock.js';
import { ConfigError, ControlError, errorMessage, StateError } from '../core/errors.js';
import { isFailure, isTerminal, type RunRecord, type Task } from '../core/types.js';
import { type BudgetReachedEvent, type BudgetStatus, CostBudgets } from '../cost/budget.js';
import { createFollower, DEFAULT_FOLLOW_INTERVAL_SECONDS } from '../delivery/follow.js';
import { followHooks } from '../delivery/follow-hooks.js';
import { createDeliveryDeps, openDelivery } from '../delivery/index.js';
import { createRemediator, type Remediator } from '../delivery/remediation.js';
import { createGitHubClient, type GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import type { Logger } from '../log.js';
import { createNotifier, type NotificationEvent, type Notifier, runNotification } from '../notify/index.js';
import { groupsOfRun, processWorksIn, terminateGroup } from '../process/process-group.js';
import { createClassifier } from '../screening/classifier/lazy.js';
import type { Classifier, ClassifierSettings } from '../screening/classifier/types.js';
import { printableStateLocation } from '../store/index.js';
import type { SessionRecord, Store } from '../store/types.js';
import { loadTelemetry, type Telemetry } from '../telemetry/index.js';
import { maintainCheckouts } from '../workspace/index.js';
import { ChainFeed } from './chain.js';
import {
  type ExecutorDeps,
  executeTask,
  finishInterruptedRun,
  type PreviousAttempt,
  type RemediationRun,
  reportedInTranscript,
} from './executor.js';
import { CronFeed, cronItem, EventFeed, type Feed, type PollContext } from './feed.js';
import { createFeed } from './feed-factory.js';
import { LeaseHooks } from './lease-hooks.js';
import { classifyFailure } from './outcome.js';
import { maxAttempts, planRetry } from './retry.js';
import { createRunWrites, type RunWrites, wantsGitHubWrites } from './run-writes.js';
import { locksFor, type OfferResult, SchedulerCore } from './scheduler.js';
import { type GateDeps, gateTask, trustRules } from './screen.js';
import { TeamCache } from './screen-context.js';
import { runInit, taskFromItem } from './task.js';
import {
  autoPauseReason,
  describeScheduled,
  type EngineEvent,
  loadPendingRetries,
  pauseReasonKey,
  RetryBook,
} from './unattended.js';
import { Wakeup } from './wakeup.js';

export type { EngineEvent } from './unattended.js';

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
  retries?: { itemId: string; note: string; at: number }[];
  /** Its provider is parked by a usage limit until then (epoch ms). */
  parkedUntil?: number;
  /** Today's spend and budget state; parked automations are not polled until the next UTC day. */
  budget?: BudgetStatus;
}

/** What an operator's retry did. */
export type RetryResult = 'resumed' | 'polling' | 'fired';

export interface RunningTask {
  automationId: string;
  repo: string;
  itemId: string;
  title: string;
  runId?: string;
  status: string;
  startedAt: number;
  /** A remediation run (src/delivery/remediation.ts): the delivery run whose pull request it answers. */
  remediationOf?: string;
}

export interface EngineStatus {
  mode: 'drain' | 'watch';
  running: RunningTask[];
  queued: number;
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

export interface EngineOptions {
  settings: Settings;
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
  tokens?: TokenSource;
  transcriptsDir: string;
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
  /** A budget ran out: the run was stopped and its automation (or all, for the global one) parked. */
  onBudgetReached?(event: BudgetReachedEvent): void;
  /** Builds the screening classifier (default `createClassifier`; tests pass scripted ones). */
  classifierFactory?(settings: ClassifierSettings): Classifier | null;
  /** How often telemetry exports metrics (default 60 s; tests shorten it). */
  telemetryIntervalMs?: number;
  /** Retries scheduled, providers parked, automations paused automatically (for notifications). */
  onEvent?(event: EngineEvent): void;
  /** The retry backoff's jitter source, a number in [0, 1) (default Math.random; tests fix it). */
  random?: () => number;
  /** Notifications (default: built from `[notifications]`, the URLs read from `env`). */
  notifier?: Notifier;
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

/** How often an idle watch lets git do its housekeeping in the checkouts. */
const MAINTENANCE_INTERVAL_MS = 60 * 60_000;

/** How long the engine waits, when it returns, for the last notifications to go out. */
const NOTIFY_FLUSH_MS = 5000;

/** Finished runs per automation in the ledger, as last counted (see `prune`). */
type RunCounts = Map<string, number>;

interface Pending {
  automation: ResolvedAutomation;
  resume?: SessionRecord;
  /** Epoch ms when a poll returned the task: a fetch started after it serves the run. */
  discoveredAt?: number;
  /** A retry (or a parked run's rerun): which try it is, and the run it follows. */
  attempt?: number;
  retryOf?: string;
  /** A remediation run waiting for its turn (see `remediate`). */
  remediation?: RemediationTurn;
  /** A fleet restart after its host was lost (see `DispatchedTask`). */
  previousAttempt?: PreviousAttempt;
}

/** A remediation handed to the scheduler: what it runs, and who waits for its record. */
interface RemediationTurn {
  /** The item's own task (the scheduler queues it under `remediationKey`). */
  task: Task;
  run: RemediationRun;
  onRun(run: RunRecord): void;
  /** Its record once it ran; undefined when it never started (the engine stopped meanwhile). */
  settle(run: RunRecord | undefined, error?: unknown): void;
}

/** The scheduler's key of a delivery's remediation: one at a time per pull request. */
function remediationKey(deliveryRunId: string): string {
  return `remediation:${deliveryRunId}`;
}

export class Engine {
  private settings: Settings;
  /** `otlp_endpoint` (src/telemetry/): loaded when `run` starts, shut down when it returns. */
  private telemetry: Telemetry | undefined;
  private readonly core: SchedulerCore;
  private feeds: Feed[] = [];
  private readonly pending = new Map<string, Pending>();
  private readonly finishedRuns: RunCounts = new Map();
  private readonly running = new Map<
    string,
    {
      task: Task;
      automation: ResolvedAutomation;
      info: RunningTask;
      done: Promise<void>;
      cancel: AbortController;
      /** A remediation run (its task is keyed `remediationKey`): not reconciled with its item. */
      remediation?: boolean;
      /** Its agent reported its final result (a success) and has only to exit: not stopped. */
      reported?: boolean;
    }
  >();
  /** Automations paused by an operator (loaded from the store at start). */
  private readonly paused = new Set<string>();
  /** Paused automations an operator asked to poll once anyway ("run now"). */
  private readonly forced = new Set<string>();
  private readonly lastPolls = new Map<string, { at: number; found: number }>();
  private readonly runs: RunRecord[] = [];
  private readonly held: RunRecord[] = [];
  private readonly classifiers = new Map<string, Classifier | null>();
  private readonly teams: TeamCache;
  private started = 0;
  private readonly wakeup = new Wakeup();
  private readonly runAbort = new AbortController();
  private lastReloadCheck = 0;
  /** Real time of the last idle `git maintenance` (runs leave it out of their path); see `maybeMaintain`. */
  private lastMaintenance = Date.now();
  private readonly discoveryErrors = new Map<string, string>();
  /** Tasks whose item changed while their run was going: polled again as soon as that run ends. */
  private readonly changedWhileRunning = new Set<string>();
  /** Reconciliation: when each automation's active tasks are checked next (epoch ms, engine clock). */
  private readonly reconcileAt = new Map<string, number>();
  /** Why a running task is being stopped (its item closed or stopped matching), by task key. */
  private readonly stopReasons = new Map<string, string>();
  /** Running tasks whose item stopped matching under `on_unmatch = "finish"`: not checked again. */
  private readonly unmatchedFinishing = new Set<string>();
  /** Escalated tasks held back by this process (task key → automation): a reset is noticed in watch mode. */
  private readonly escalated = new Map<string, string>();
  /** Opt-in GitHub writes, built the first time an automation asks for one (run-writes.ts). */
  private githubWrites: RunWrites | undefined;
  /** Leases (claims as comments), built the first time an automation sets `lease_ttl`. */
  private leaseHooks: LeaseHooks | undefined;
  /** Retries waiting for their backoff, and providers parked by a usage limit (unattended.ts). */
  private readonly retries = new RetryBook();
  /** Why automations were paused automatically (loaded from the store at start). */
  private readonly pauseReasons = new Map<string, string>();
  /** `[notifications]` (src/notify/); undefined when the file has none. */
  private readonly notifier: Notifier | undefined;
  /** Notifications being queued (`notify` returns before the store has them). */
  private readonly queueing = new Set<Promise<void>>();
  /** Escalation on GitHub (with GitHub writes only): labels, comments, counts from other hosts. */
  private readonly escalation: Escalation;
  /** The periodic repair sweep (watch mode, with GitHub writes only); see src/coordination/sweep.ts. */
  private readonly sweeper = new Sweeper();
  /** Follows delivered pull requests (src/delivery/follow.ts), built on the first sweep that has any. */
  private follower: ReturnType<typeof createFollower> | undefined;
  /** Remediation runs of delivered pull requests (src/delivery/remediation.ts), built with the follower. */
  private remediator: Remediator | undefined;
  /** Cost budgets: live spend, soft warnings and parks (src/cost/budget.ts). */
  private readonly costs: CostBudgets;

  constructor(private readonly options: EngineOptions) {
    this.settings = options.settings;
    const { store, clock, log } = options;
    this.notifier = options.notifier ?? createNotifier(options.settings, options.env, { store, clock, log });
    this.costs = new CostBudgets({
      store: options.store,
      clock: options.clock,
      log: options.log,
      settings: () => this.settings,
      onBudgetReached: (event) => {
        options.onBudgetReached?.(event);
        this.notify({
          event: 'budget_reached',
          id: `budget:${event.budget}:${event.automationId}:${event.parkedUntil}`,
          automation: event.automationId,
          summary: `${event.automationId}: ${event.reason}`,
          details: {
            budget: event.budget,
            run: event.runId,
            limitUsd: event.limitUsd,
            spentUsd: event.spentUsd,
            parkedUntil: event.parkedUntil,
          },
        });
      },
    });
    this.teams = new TeamCache(() => options.clock.now());
    this.escalation = new Escalation({
      store: options.store,
      settings: () => this.settings,
      github: () => options.github(),
      log: options.log,
    });
    this.core = new SchedulerCore(this.limits());
    this.feeds = this.buildFeeds(options.settings, []);
    this.pollSignal = options.drainSignal
      ? AbortSignal.any([options.stopSignal, options.drainSignal])
      : options.stopSignal;
    this.stopped = new Promise((resolve) => {
      if (options.stopSignal.aborted) resolve();
      options.stopSignal.addEventListener('abort', () => resolve(), { once: true });
    });
    options.stopSignal.addEventListener('abort', () => this.wakeup.wake(), { once: true });
    options.drainSignal?.addEventListener(
      'abort',
      () => {
        this.emitStatus();
        this.wakeup.wake();
      },
      { once: true },
    );
  }

  /** Resolves when a stop (not a drain) is asked. */
  private readonly stopped: Promise<void>;
  /** Aborts a poll in flight when a stop or a drain is asked. */
  private readonly pollSignal: AbortSignal;

  private limits(): { maxActive: number; maxPending: number } {
    return {
      maxActive: this.settings.execution.max_active_tasks,
      maxPending: this.settings.execution.max_pending_tasks,
    };
  }

  private get stopping(): boolean {
    return this.options.stopSignal.aborted;
  }

  /** No new work: a stop or a drain was asked. */
  private get winding(): boolean {
    return this.options.stopSignal.aborted || this.options.drainSignal?.aborted === true;
  }

  private get sizeReached(): boolean {
    return this.options.size !== undefined && this.started >= this.options.size;
  }

  private buildFeeds(settings: Settings, previous: readonly Feed[]): Feed[] {
    const { log, clock } = this.options;
    return settings.automations.map((automation) => {
      const old = previous.find((f) => f.automation.id === automation.id);
      if (old && sameAutomation(old.automation, automation)) return old;
      return createFeed(automation, settings.execution.polling, { github: this.options.github, clock, log });
    });
  }

  private pollContext(): PollContext {
    return {
      store: this.options.store,
      clock: this.options.clock,
      log: this.options.log,
      limit: this.settings.execution.polling.batch_size,
      preview: false,
      signal: this.pollSignal,
    };
  }

  private emitStatus(nextPollAt?: number): EngineStatus {
    const status: EngineStatus = {
      mode: this.options.mode,
      running: [...this.running.values()].map((r) => r.info),
      queued: this.core.queuedCount,
      maxActive: this.settings.execution.max_active_tasks,
      ...(nextPollAt === undefined ? {} : { nextPollAt }),
      stopping: this.stopping,
      draining: !this.stopping && this.options.drainSignal?.aborted === true,
      waiting: this.feeds.reduce((sum, f) => sum + (f.waiting ?? 0), 0),
      parked: this.retries.parkedProviders(this.options.clock.now()),
      retrying: this.retries.list().length,
    };
    this.options.onStatus?.(status);
    return status;
  }

  /** The write queue's front, only when some automation opted in to a GitHub write. */
  private writes(): RunWrites | undefined {
    const { tokens } = this.options;
    if (
      !this.githubWrites &&
      tokens &&
      wantsGitHubWrites(this.settings.automations, this.settings.execution)
    ) {
      const { store, clock, log, stopSignal } = this.options;
      const apiUrl = this.options.github().apiUrl;
      this.githubWrites = createRunWrites({ store, apiUrl, tokens, clock, log, signal: stopSignal });
    }
    return this.githubWrites;
  }

  /** The lease hooks, only when some automation takes leases (and writes are possible). */
  private leases(): LeaseHooks | undefined {
    const writes = this.writes();
    const { tokens, store, clock, log, stopSignal } = this.options;
    if (!this.leaseHooks && writes && tokens && wantsLeases(this.settings)) {
      const client = createGitHubClient({
        apiUrl: this.options.github().apiUrl,
        tokens,
        clock,
        log,
        maxAttempts: 1,
        signal: stopSignal,
      });
      this.leaseHooks = new LeaseHooks({
        settings: () => this.settings,
        client,
        clock,
        log,
        store,
        trust: (automation) =>
          trustRules(
            this.gateDeps(),
            resolveScreening(
              this.settings.execution.screening,
              automation.config.screening,
              this.settings.dir,
            ),
          ),
        queueEdit: (item, runId, marker, body) => writes.queueEdit(item, runId, marker, body),
      });
    }
    return this.leaseHooks;
  }

  /** Watch mode: reads the delivered pull requests still open, each at most once per `follow_interval`. */
  private async followPullRequests(): Promise<void> {
    const { tokens } = this.options;
    const following = this.settings.automations.filter((a) => a.config.deliver === 'pr');
    if (!tokens || following.length === 0) return;
    const { store, clock, log, stopSignal } = this.options;
    const github = createGitHubClient({
      apiUrl: this.options.github().apiUrl,
      tokens,
      clock,
      log,
      maxAttempts: 1,
      signal: stopSignal,
    });
    this.remediator ??= createRemediator({
      store,
      clock,
      log,
      github,
      tokens,
      automation: (id) => this.settings.automations.find((a) => a.id === id),
      execute: (automation, task, remediation, onRun) => this.remediate(automation, task, remediation, onRun),
      stopping: () => this.stopping,
    });
    const remediator = this.remediator;
    this.follower ??= createFollower({
      store,
      clock,
      log,
      github,
      remediate: (record, request) => remediator.remediate(record, request),
      inFlight: (record) => remediator.resumeInFlight(record),
      intervalSeconds: (id) =>
        this.settings.automations.find((a) => a.id === id)?.config.follow_interval ??
        DEFAULT_FOLLOW_INTERVAL_SECONDS,
      ...followHooks({
        store,
        log,
        automation: (id) => this.settings.automations.find((a) => a.id === id),
        notify: (event) => this.notify(event),
        redevelop: (record) => {
          const feed = this.feeds.find((f) => f.automation.id === record.automationId);
          if (feed instanceof EventFeed) feed.forgetKey(record.taskKey);
          if (feed) feed.nextPollAt = 0;
          this.wakeup.wake();
        },
      }),
    });
    await this.follower.sweep().catch((error: unknown) => {
      log.warn({ error: errorMessage(error) }, 'Could not follow the delivered pull requests');
    });
  }

  /**
   * One remediation run (src/delivery/remediation.ts), through the scheduler like any run: it takes
   * a slot of `max_active_tasks` (waiting its turn when they are full, ahead of new work, as a
   * resumed session does), holds the item's lock (never beside a run of the same item, nor a second
   * remediation of the pull request), waits while its automation is paused or parked, is listed
   * in the status, and `cancel` ends it. Resolves undefined when the engine stopped or drained
   * before it started. No claim, result comment or delivery of its own (it pushes to the
   * delivery's branch).
   */
  private remediate(
    automation: ResolvedAutomation,
    task: Task,
    remediation: RemediationRun,
    onRun: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined> {
    if (this.winding) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const turn: RemediationTurn = {
        task,
        run: remediation,
        onRun,
        settle: (run, error) => (error === undefined ? resolve(run) : reject(error)),
      };
      const key = remediationKey(remediation.deliveryRunId);
      const result = this.core.offer({
        task: { ...task, key },
        automationId: automation.id,
        // A remediation works in the delivery's worktree, never in the shared checkout.
        locks: locksFor(task, { serialAutomation: automation.trigger.serialRuns }),
        priority: 'resume',
        unbounded: true,
      });
      if (result !== 'queued') {
        // The remediator runs one per pull request: another in the queue means a bug, not a wait.
        this.options.log.warn(
          { automation: automation.id, delivery: remediation.deliveryRunId, result },
          'A remediation could not be queued',
        );
        resolve(undefined);
        return;
      }
      this.pending.set(key, { automation, remediation: turn });
      this.dispatch();
      this.emitStatus();
    });
  }

  /** A remediation's automation paused (by an operator or its budget): it waits until resumed. */
  private remediationHeld(automationId: string): boolean {
    return this.isPaused(automationId) || this.costs.parked(automationId) !== undefined;
  }

  /** Starts a remediation the scheduler let through (see `remediate`). */
  private startRemediation(slot: Task, automation: ResolvedAutomation, turn: RemediationTurn): void {
    const { task } = turn;
    const info: RunningTask = {
      automationId: automation.id,
      repo: task.identity.repo,
      itemId: task.item.id,
      title: task.item.title,
      status: 'preparing',
      startedAt: this.options.clock.now(),
      remediationOf: turn.run.deliveryRunId,
    };
    const cancel = new AbortController();
    const {
      writes: _writes,
      claim: _claim,
      delivery: _delivery,
      ...deps
    } = this.executorDeps((run) => {
      info.runId = run.id;
      info.status = run.status;
      turn.onRun(run);
      if (!isTerminal(run.status)) this.emitStatus();
    });
    const done = executeTask(deps, {
      automation,
      task,
      signal: AbortSignal.any([this.runAbort.signal, this.options.stopSignal, cancel.signal]),
      remediation: turn.run,
    })
      .then(async (finished) => {
        // Cancelled by an operator: its key counts as answered (the remediator marks it handled).
        const run =
          finished.status === 'cancelled' && cancel.signal.aborted && !this.stopping
            ? await this.options.store.updateRun(finished.id, {
                reason:
                  'cancelled by an operator: the feedback it answered counts as handled (a new review, a new failing head or a push asks again)',
              })
            : finished;
        this.runs.push(run);
        this.options.onRun?.(run);
        const event = runNotification(automation.id, run);
        if (event) this.notify(event);
        turn.settle(run);
      })
      .catch((error: unknown) => turn.settle(undefined, error ?? new Error('remediation failed')))
      .finally(() => {
        this.running.delete(slot.key);
        this.core.finish(slot.key);
        this.wakeup.wake();
      });
    this.running.set(slot.key, { task: slot, automation, info, done, cancel, remediation: true });
    this.emitStatus();
  }

  /** The engine winds down: remediations still waiting for their turn are given back unstarted. */
  private releaseRemediations(): void {
    const waiting = this.core.clearQueue((c) => this.pending.get(c.task.key)?.remediation !== undefined);
    for (const candidate of waiting) {
      const turn = this.pending.get(candidate.task.key)?.remediation;
      this.pending.delete(candidate.task.key);
      turn?.settle(undefined);
    }
  }

  private executorDeps(
    onUpdate?: (run: RunRecord) => void,
    onReported?: (reported: boolean) => void,
  ): ExecutorDeps {
    const writes = this.writes();
    const leases = this.leases();
    const delivery = createDeliveryDeps(this.settings.automations, this.options);
    return {
      ...(writes ? { writes } : {}),
      ...(delivery ? { delivery } : {}),
      ...(leases ? { claim: (automation, task, run) => leases.claim(automation, task, run) } : {}),
      execution: this.settings.execution,
      store: this.options.store,
      clock: this.options.clock,
      log: this.options.log,
      env: this.options.env,
      ...(this.options.tokens ? { tokens: this.options.tokens } : {}),
      transcriptsDir: this.options.transcriptsDir,
      ...(this.options.killGraceMs === undefined ? {} : { killGraceMs: this.options.killGraceMs }),
      ...(onUpdate ? { onUpdate } : {}),
      ...(onReported ? { onReported } : {}),
      ...(this.settings.pricing ? { pricing: this.settings.pricing } : {}),
      budgets: this.costs,
      ...(this.telemetry ? { telemetry: this.telemetry } : {}),
    };
  }

  private gateDeps(): GateDeps {
    const { store, log, clock, github } = this.options;
    return {
      store,
      log,
      clock,
      github,
      teams: this.teams,
      classifier: (settings) => {
        const key = JSON.stringify(settings);
        if (!this.classifiers.has(key))
          this.classifiers.set(key, (this.options.classifierFactory ?? createClassifier)(settings));
        return this.classifiers.get(key) ?? null;
      },
    };
  }

  /**
   * Screens a new task (resumed sessions were screened when they started), then runs it. Returns
   * the run record, or undefined when the item's unchanged text is already blocked.
   */
  private async screenAndExecute(
    deps: ExecutorDeps,
    automation: ResolvedAutomation,
    task: Task,
    pending: Pending,
    signal: AbortSignal,
  ): Promise<RunRecord | undefined> {
    const park = this.costs.parked(automation.id);
    if (park) {
      // Not recorded as a run: its saved session (or the item, at the next poll) comes back tomorrow.
      if (!pending.resume) this.forgetTask(automation.id, task);
      this.options.log.info(
        { automation: automation.id, id: task.item.id, until: park.until },
        'Parked by its budget: not started',
      );
      return undefined;
    }
    if (
      deps.writes &&
      (await this.escalation.gate(automation, task, pending.resume !== undefined)) === 'held'
    )
      return undefined;
    const delivered = automation.config.deliver
      ? await openDelivery(this.options.store, task.key)
      : undefined;
    if (delivered) {
      this.options.log.info(
        { automation: automation.id, id: task.item.id, pullRequest: delivered.number, run: delivered.runId },
        'Its delivery holds it back (pull request open, or closed and decided by a person): not run again',
      );
      return undefined;
    }
    const budget = await checkBudget(
      this.options.store,
      this.settings,
      automation,
      task,
      new Date(this.options.clock.now()).toISOString(),
    );
    if (budget.kind !== 'run') this.escalated.set(task.key, automation.id);
    if (budget.kind === 'escalated') {
      deps.onUpdate?.(budget.run);
      return budget.run;
    }
    if (budget.kind === 'held') {
      this.options.log.info(
        { automation: automation.id, id: task.item.id, failures: budget.failures.failures },
        'Still escalated: not run until `curupira reset` or its text changes',
      );
      return undefined;
    }
    const lease = await this.leases()?.gate(automation, task);
    if (lease?.kind === 'hold') return undefined;
    if (lease?.kind === 'skip') {
      deps.onUpdate?.(lease.run);
      return lease.run;
    }
    let ready = task;
    let screening: Parameters<typeof executeTask>[1]['screening'];
    if (!pending.resume) {
      const settings = resolveScreening(
        this.settings.execution.screening,
        automation.config.screening,
        this.settings.dir,
      );
      const gate = await gateTask(this.gateDeps(), automation, task, settings, signal);
      if (gate.kind === 'stopped') {
        deps.onUpdate?.(gate.run);
        await deps.writes?.finished(automation, task, gate.run);
        return gate.run;
      }
      if (gate.kind === 'held') {
        this.held.push(gate.previous);
        this.options.log.info(
          { automation: automation.id, id: task.item.id, run: gate.previous.id },
          'Still blocked: the text is unchanged since its blocked run; `curupira allow` lets it through once',
        );
        return undefined;
      }
      ready = gate.task;
      screening = gate.screening;
    }
    return executeTask(deps, {
      automation,
      task: ready,
      signal,
      ...(pending.resume ? { resume: pending.resume } : {}),
      ...(pending.discoveredAt === undefined ? {} : { discoveredAt: pending.discoveredAt }),
      ...(pending.attempt === undefined ? {} : { attempt: pending.attempt }),
      ...(screening ? { screening } : {}),
      ...(pending.previousAttempt ? { previousAttempt: pending.previousAttempt } : {}),
      ...upstreamOf(automation, task),
    });
  }

  // ---- Fleet hosts (issue 17; src/fleet/): a worker runs the tasks a poller dispatched ----

  /**
   * A worker's start: budget parks and baselines are read, and this host's runs that a dead
   * process left unfinished are closed (their sessions resume when the poller hands them back).
   * `inFlight`: runs this process still runs (a host back from a database cut), left alone.
   */
  async startWorker(inFlight?: ReadonlySet<string>): Promise<RunRecord[]> {
    await this.loadBaselines();
    await this.costs.refresh();
    return this.recover(inFlight);
  }

  /**
   * Runs one task a poller dispatched to this host: screening, the failure budget, leases and the
   * agent, exactly as `start` does here (the poller does the bookkeeping after it).
   */
  async executeDispatched(
    job: DispatchedTask,
    signal: AbortSignal,
    onUpdate?: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined> {
    const automation = this.settings.automations.find((a) => a.id === job.automationId);
    if (!automation) throw new StateError(`automation ${job.automationId} is not configured on this host`);
    const resume = job.resume ? await this.options.store.getSession(job.task.key) : undefined;
    const pending: Pending = {
      automation,
      ...(resume ? { resume } : {}),
      ...(job.discoveredAt === undefined ? {} : { discoveredAt: job.discoveredAt }),
      ...(job.attempt === undefined ? {} : { attempt: job.attempt }),
      ...(job.retryOf === undefined ? {} : { retryOf: job.retryOf }),
      ...(job.previousAttempt ? { previousAttempt: job.previousAttempt } : {}),
    };
    let launched = false;
    const deps = this.executorDeps((run) => {
      if (run.status === 'running' && !launched) {
        launched = true;
        this.agentLaunched(automation, job.task, run);
      }
      onUpdate?.(run);
    });
    return this.screenAndExecute(
      deps,
      automation,
      job.task,
      pending,
      AbortSignal.any([this.runAbort.signal, signal]),
    );
  }

  /**
   * Stops agents a dead curupira process left running, and closes their runs. A run whose agent
   * had already exited is finished as its saved outcome says (its session is not resumed), and so
   * is one whose transcript ends with the agent's reported success.
   */
  private async recover(inFlight?: ReadonlySet<string>): Promise<RunRecord[]> {
    const { store, log, clock } = this.options;
    const closed: RunRecord[] = [];
    // A fleet poller's unfinished runs belong to the hosts running them (src/fleet/ takes back a lost host's).
    if (this.options.runner) return closed;
    const unfinished = await store.listUnfinishedRuns(
      this.options.host === undefined ? undefined : { host: this.options.host },
    );
    for (const run of unfinished) {
      // A fleet host back from a database cut: its runs still in flight here are not left over.
      if (inFlight?.has(run.id)) continue;
      closed.push(run);
      if (run.agentOutcome) {
        const automation = this.settings.automations.find((a) => a.id === run.automationId);
        await finishInterruptedRun(this.executorDeps(), automation, run);
        continue;
      }
      // A `checkout = "main"` run has no worktree: its agent worked in the repository's checkout.
      const folder =
        run.worktreePath ??
        this.settings.automations.find((a) => a.id === run.automationId)?.repository.checkoutPath;
      const orphans = new Set(groupsOfRun(run.id));
      if (run.agentPid && folder && processWorksIn(run.agentPid, folder)) orphans.add(run.agentPid);
      for (const pgid of orphans) {
        log.warn(
          { automation: run.automationId, run: run.id, pid: pgid },
          'Stopping an agent left running by a previous curupira process',
        );
        await terminateGroup(pgid, this.options.killGraceMs ?? 10_000);
      }
      // Its agent had reported its result (the exit was never recorded): finished, not resumed.
      if (await reportedInTranscript(run)) {
        const automation = this.settings.automations.find((a) => a.id === run.automationId);
        const reported = await store.updateRun(run.id, {
          agentPid: null,
          agentOutcome: {
            status: 'succeeded',
            reason: 'the agent reported its result; its exit was not recorded',
          },
        });
        await finishInterruptedRun(this.executorDeps(), automation, reported);
        continue;
      }
      await store.updateRun(run.id, {
        status: 'cancelled',
        reason:
          'interrupted: curupira stopped (crash, kill or reboot) while this run was in progress; a saved session resumes in a new run',
        finishedAt: new Date(clock.now()).toISOString(),
        agentPid: null,
      });
    }
    return closed;
  }

  /**
   * Saved sessions go first, with their original tasks (of one automation, when resumed by an
   * operator). A paused automation's sessions are kept for when it is resumed. A session whose
   * item no longer matches (closed, its label removed: usually why its agent was stopped) is kept
   * for a person and not resumed; it resumes when its item matches again and is offered anew.
   */
  private async resumeSessions(only?: string): Promise<void> {
    const { store, log } = this.options;
    const resumable: { automation: ResolvedAutomation; session: SessionRecord }[] = [];
    for (const session of await store.listSessions()) {
      if (only !== undefined && session.automationId !== only) continue;
      if (this.isPaused(session.automationId)) continue;
      const automation = this.settings.automations.find((a) => a.id === session.automationId);
      if (!automation) {
        log.info(
          { automation: session.automationId, session: session.sessionId },
          'A saved session belongs to an automation that is no longer configured; keeping it',
        );
        continue;
      }
      // A retry or a parked run waits for its time (loadRetries); the watch loop offers it then.
      if (this.retries.has(session.taskKey)) continue;
      resumable.push({ automation, session });
    }
    const unmatched = await this.unmatchedSessions(resumable);
    for (const { automation, session } of resumable) {
      const reason = unmatched.get(session.taskKey);
      if (reason === undefined) {
        this.offer(automation, session.task, session);
        continue;
      }
      log.info(
        { automation: automation.id, id: session.task.item.id, session: session.sessionId, reason },
        'A saved session is kept, not resumed: its item no longer matches',
      );
    }
  }

  /**
   * Which saved sessions' items no longer match, by task key: one read per automation (its
   * trigger's reconciliation). A read that fails leaves them to be resumed, as before the check.
   */
  private async unmatchedSessions(
    sessions: readonly { automation: ResolvedAutomation; session: SessionRecord }[],
  ): Promise<Map<string, string>> {
    const reasons = new Map<string, string>();
    const byAutomation = new Map<ResolvedAutomation, Task[]>();
    for (const { automation, session } of sessions) {
      if (!automation.trigger.unmatched) continue;
      byAutomation.set(automation, [...(byAutomation.get(automation) ?? []), session.task]);
    }
    for (const [automation, tasks] of byAutomation) {
      if (!automation.trigger.unmatched) continue;
      try {
        const found = await automation.trigger.unmatched(automation, tasks, {
          github: this.options.github,
          signal: this.pollSignal,
        });
        for (const [key, reason] of found) reasons.set(key, reason);
      } catch (error) {
        this.options.log.warn(
          { automation: automation.id, error: errorMessage(error) },
          'Could not check the items of saved sessions; resuming them',
        );
      }
    }
    return reasons;
  }

  private offer(
    automation: ResolvedAutomation,
    task: Task,
    resume?: SessionRecord,
    discoveredAt?: number,
    retry?: { attempt: number; retryOf: string },
  ): OfferResult {
    const result = this.core.offer({
      task,
      automationId: automation.id,
      locks: locksFor(task, {
        ...(automation.config.checkout === 'main'
          ? { sharedCheckout: automation.repository.checkoutPath }
          : {}),
        serialAutomation: automation.trigger.serialRuns,
      }),
      priority: resume ? 'resume' : 'normal',
    });
    if (result === 'queued' || result === 'updated')
      this.pending.set(task.key, {
        automation,
        ...(resume ? { resume } : {}),
        ...(discoveredAt === undefined ? {} : { discoveredAt }),
        ...(retry ?? {}),
      });
    // A changed item whose older version runs now is not marked: it is offered again when that run ends.
    if (result === 'busy') this.changedWhileRunning.add(task.key);
    else if (result !== 'full')
      this.feeds.find((f) => f.automation.id === automation.id)?.markDispatched(task);
    return result;
  }

  /** Watch mode: an escalated item reset (`curupira reset`) since it was held back is polled again. */
  private async offerReset(): Promise<void> {
    for (const [key, automationId] of this.escalated) {
      if ((await this.options.store.getItemFailures(key))?.escalatedAt) continue;
      this.escalated.delete(key);
      const feed = this.feeds.find((f) => f.automation.id === automationId);
      if (feed instanceof EventFeed && feed.forgetKey(key)) feed.nextPollAt = 0;
    }
  }

  /** Watch mode: an item allowed (`curupira allow`) since it was blocked is offered again. */
  private async offerAllowed(): Promise<void> {
    const pending = await this.options.store.listAllowances({ pending: true });
    for (const allowance of pending) {
      for (const feed of this.feeds) {
        if (feed instanceof EventFeed && feed.forgetKey(allowance.taskKey)) feed.nextPollAt = 0;
      }
    }
  }

  private async pollFeed(feed: Feed): Promise<number> {
    let tasks: Task[];
    const pollStarted = Date.now();
    try {
      tasks = await feed.poll(this.pollContext());
    } catch (error) {
      this.telemetry?.poll(feed.automation.id, pollStarted, 0, errorMessage(error));
      // The feed already chose when to poll again (see outcome.ts); here only a stop matters.
      if (classifyFailure(error, { stage: 'discovery', stopping: this.winding }).action === 'cancel')
        return 0;
      this.discoveryErrors.set(feed.automation.id, errorMessage(error));
      this.lastPolls.set(feed.automation.id, { at: this.options.clock.now(), found: 0 });
      this.options.log.warn(
        { automation: feed.automation.id, error: errorMessage(error) },
        `Discovery failed for ${feed.automation.id}`,
      );
      return 0;
    }
    this.discoveryErrors.delete(feed.automation.id);
    // Real time, not the engine's clock: it is compared with when git fetches started.
    const discoveredAt = Date.now();
    let offered = 0;
    for (const task of tasks) {
      const result = this.offer(feed.automation, task, undefined, discoveredAt);
      if (result === 'queued' || result === 'busy') offered += 1;
      if (result === 'full') break;
    }
    this.lastPolls.set(feed.automation.id, { at: this.options.clock.now(), found: offered });
    this.telemetry?.poll(feed.automation.id, pollStarted, tasks.length);
    return offered;
  }

  private dispatch(): void {
    while (!this.winding && !this.sizeReached) {
      const now = this.options.clock.now();
      const candidate = this.core.next((c) => {
        const pending = this.pending.get(c.task.key);
        if (pending?.remediation && this.remediationHeld(c.automationId)) return true;
        const provider = pending?.automation.profile.provider;
        return provider !== undefined && this.retries.parkedUntil(provider, now) !== undefined;
      });
      if (!candidate) return;
      const pending = this.pending.get(candidate.task.key);
      this.pending.delete(candidate.task.key);
      if (!pending) {
        this.core.finish(candidate.task.key);
        continue;
      }
      if (pending.remediation) {
        const automation =
          this.settings.automations.find((a) => a.id === candidate.automationId) ?? pending.automation;
        this.startRemediation(candidate.task, automation, pending.remediation);
        continue;
      }
      this.start(candidate.task, pending);
    }
  }

  private start(task: Task, pending: Pending): void {
    const { automation } = pending;
    this.started += 1;
    this.retryStarted(task, pending);
    const info: RunningTask = {
      automationId: automation.id,
      repo: task.identity.repo,
      itemId: task.item.id,
      title: task.item.title,
      status: 'preparing',
      startedAt: this.options.clock.now(),
    };
    const feed = this.feeds.find((f) => f.automation.id === automation.id);
    const cancel = new AbortController();
    const onUpdate = (run: RunRecord): void => {
      info.runId = run.id;
      if (run.status === 'running' && info.status !== 'running') this.agentLaunched(automation, task, run);
      info.status = run.status;
      if (!isTerminal(run.status)) this.emitStatus();
    };
    const { runner } = this.options;
    const execution = runner
      ? runner.run(
          dispatchedTask(automation, task, pending),
          { cancel: cancel.signal, stop: this.runAbort.signal },
          onUpdate,
        )
      : this.screenAndExecute(
          this.executorDeps(onUpdate, (reported) => {
            const entry = this.running.get(task.key);
            if (entry) entry.reported = reported;
          }),
          automation,
          task,
          pending,
          AbortSignal.any([this.runAbort.signal, cancel.signal]),
        );
    const done = execution
      .then(async (finished) => {
        if (!finished) return;
        const noted = cancel.signal.aborted ? await this.noteCancelled(finished) : finished;
        const counted = await countRun(this.options.store, this.settings, automation, task, noted);
        const run = await this.planNext(automation, task, counted);
        // The reason of a stop is known only here: the result comment sent at the end is edited.
        if (noted !== finished) await this.writes()?.resultChanged(automation, task, run);
        await this.afterCounted(automation, task, run);
        // Every failed try notifies (a retry may never come: a one-shot run leaves it to the next).
        const event = runNotification(automation.id, run);
        if (event) this.notify(event);
        this.runs.push(run);
        this.options.onRun?.(run);
        await this.afterRun(automation, task, run, feed);
      })
      .catch((error: unknown) => {
        this.options.log.error(
          { automation: automation.id, id: task.item.id, error: errorMessage(error) },
          'Run could not be recorded',
        );
      })
      .then(() => this.leaseHooks?.abandon(task.key))
      .then(() => {
        // Not run because of a lease (or GitHub unreachable while claiming): a watch polls it again.
        if (
          this.leaseHooks?.retry.delete(task.key) &&
          this.options.mode === 'watch' &&
          feed instanceof EventFeed
        )
          feed.forget(task);
      })
      .then(() => feed?.runFinished(task, this.pollContext()))
      // Only now is the fleet's dispatch settled: a poller killed before this does it again.
      .then(() => this.options.runner?.settled?.(task.key))
      .catch((error: unknown) => {
        this.options.log.error(
          { automation: automation.id, error: errorMessage(error) },
          'Could not update the schedule state',
        );
      })
      .finally(() => {
        this.running.delete(task.key);
        this.stopReasons.delete(task.key);
        this.unmatchedFinishing.delete(task.key);
        this.core.finish(task.key);
        if (this.changedWhileRunning.delete(task.key) && feed) feed.nextPollAt = 0;
        this.wakeup.wake();
      });
    this.running.set(task.key, { task, automation, info, done, cancel });
    this.emitStatus();
  }

  /** Escalation and run-log writes of a counted run (only when GitHub writes are configured). */
  private async afterCounted(automation: ResolvedAutomation, task: Task, run: RunRecord): Promise<void> {
    const writes = this.writes();
    if (!writes) return;
    const { store, clock, log } = this.options;
    await afterRunWrites(
      { store, settings: this.settings, clock, log, writes, escalation: this.escalation },
      automation,
      task,
      run,
    );
  }

  /** The repair sweep, when due (watch mode, with GitHub writes only). */
  private async maybeSweep(): Promise<void> {
    const writes = this.writes();
    if (!writes) return;
    const { store, clock, log } = this.options;
    await this.sweeper.maybeRun({
      store,
      settings: this.settings,
      clock,
      log,
      queue: (w) => writes.queue(w),
      signal: this.pollSignal,
      ...(this.leases() ? { leases: this.leases()!.leases } : {}),
    });
  }

  /** The agent started: for `once`, the item counts as handled from now on. */
  private agentLaunched(automation: ResolvedAutomation, task: Task, run: RunRecord): void {
    if (!automation.config.once) return;
    this.options.store
      .recordItemKeys(automation.id, [{ itemKey: task.item.itemKey, runId: run.id, skipped: false }])
      .catch((error: unknown) => {
        this.options.log.error(
          { automation: automation.id, error: errorMessage(error) },
          'Could not record the item as handled',
        );
      });
  }

  private async afterRun(
    automation: ResolvedAutomation,
    task: Task,
    run: RunRecord,
    feed: Feed | undefined,
  ): Promise<void> {
    // A launch that never reached the agent carries no item key: the next watch poll retries it
    // (a drain retries it on the next `curupira run`, instead of looping on a broken launch).
    // A blocked or skipped item is handled: it is offered again only when its text changes.
    if (
      this.options.mode === 'watch' &&
      run.startedAt === null &&
      run.status !== 'blocked' &&
      run.status !== 'skipped' &&
      run.status !== 'escalated' &&
      feed instanceof EventFeed &&
      automation.config.once
    ) {
      feed.forget(task);
    }
    for (const chain of this.feeds) {
      if (chain instanceof ChainFeed && chain.upstream === automation.id) chain.nudge();
    }
    if (isFailure(run.status)) await this.maybeAutoPause(automation);
    await this.prune(automation.id);
  }

  // ---- Unattended runs: retries, parked providers, auto-pause (issue 15; unattended.ts) ----

  /**
   * After a run: a parked run parks its provider until the reset and (watching) reruns its task
   * then; a failed, timed-out or stalled run is retried after its backoff, in watch mode, while
   * tries are left and the failure budget did not escalate the item. Returns the run as recorded.
   */
  private async planNext(automation: ResolvedAutomation, task: Task, run: RunRecord): Promise<RunRecord> {
    const { store, clock, log } = this.options;
    const now = clock.now();
    const fields = { automation: automation.id, id: task.item.id, run: run.id };
    if (run.status === 'parked' && run.retryAt) {
      const until = Date.parse(run.retryAt);
      const provider = automation.profile.provider;
      this.retries.park(provider, until);
      if (this.options.mode === 'watch')
        this.retries.schedule({
          kind: 'parked',
          automationId: automation.id,
          task,
          runId: run.id,
          attempt: run.attempt ?? 1,
          maxAttempts: maxAttempts(this.settings, automation),
          at: until,
        });
      log.warn(
        { ...fields, provider, until: run.retryAt },
        'Provider usage limit: its runs are parked until the reset',
      );
      this.options.onEvent?.({ kind: 'provider_parked', provider, until, run });
      return run;
    }
    if (this.options.mode !== 'watch' || this.winding) return run;
    const escalated = (await store.getItemFailures(task.key))?.escalatedAt != null;
    const plan = planRetry({
      run,
      maxAttempts: maxAttempts(this.settings, automation),
      escalated,
      now,
      random: (this.options.random ?? Math.random)(),
    });
    if (!plan) return run;
    const updated = await store.updateRun(run.id, { retryAt: new Date(plan.at).toISOString() });
    this.retries.schedule({ kind: 'retry', automationId: automation.id, task, runId: run.id, ...plan });
    log.info({ ...fields, attempt: plan.attempt, at: updated.retryAt }, 'Retrying the task after a backoff');
    this.options.onEvent?.({ kind: 'retry_scheduled', run: updated, ...plan });
    return updated;
  }

  /** A task starts: a retry waiting for it is done (or superseded), and its run's `retryAt` cleared. */
  private retryStarted(task: Task, pending: Pending): void {
    const superseded = this.retries.cancel(task.key);
    for (const runId of new Set([pending.retryOf, superseded?.runId])) {
      if (runId === undefined) continue;
      this.options.store.updateRun(runId, { retryAt: null }).catch((error: unknown) => {
        this.options.log.warn({ run: runId, error: errorMessage(error) }, 'Could not clear a retry time');
      });
    }
  }

  /** Offers the retries that are due (not of paused automations: they wait for a resume). */
  private async offerDueRetries(): Promise<void> {
    for (const retry of this.retries.due(this.options.clock.now())) {
      const automation = this.settings.automations.find((a) => a.id === retry.automationId);
      if (!automation) {
        this.retries.cancel(retry.task.key);
        continue;
      }
      if (this.isPaused(automation.id) || this.core.capacity === 0) continue;
      const session = await this.options.store.getSession(retry.task.key);
      const result = this.offer(automation, session?.task ?? retry.task, session, undefined, {
        attempt: retry.attempt,
        retryOf: retry.runId,
      });
      if (result !== 'full') this.retries.cancel(retry.task.key);
    }
  }

  /** At start: retries and parked runs a previous process left are scheduled again (unattended.ts). */
  private async loadRetries(): Promise<void> {
    const { store, clock } = this.options;
    await loadPendingRetries(this.retries, {
      store,
      settings: this.settings,
      mode: this.options.mode,
      now: clock.now(),
    });
  }

  /** Pauses an automation whose last `pause_after_failures` runs all failed. */
  private async maybeAutoPause(automation: ResolvedAutomation): Promise<void> {
    if (this.paused.has(automation.id)) return;
    const reason = await autoPauseReason(this.options.store, this.settings, automation);
    if (!reason) return;
    await this.setPaused(automation.id, true, reason);
    this.options.log.warn({ automation: automation.id, reason }, 'Automation paused after repeated failures');
    this.options.onEvent?.({ kind: 'automation_paused', automationId: automation.id, reason });
  }

  /**
   * Keeps the last `history_limit` runs of an automation; older runs go with their transcripts. The
   * ledger is counted once per automation, then the count is kept here, so a run costs a prune only
   * when its automation is over the limit (not a scan of its whole history every time).
   */
  private async prune(automationId: string): Promise<void> {
    const { store } = this.options;
    const limit = this.settings.execution.history_limit;
    const known = this.finishedRuns.get(automationId);
    const count = known === undefined ? await store.countFinishedRuns(automationId) : known + 1;
    this.finishedRuns.set(automationId, count);
    if (count <= limit) return;
    const removed = await store.pruneRuns(automationId, limit);
    // Another process may write the same ledger: count again when the prune found less than expected.
    this.finishedRuns.set(
      automationId,
      removed.length > 0 ? limit : await store.countFinishedRuns(automationId),
    );
    for (const run of removed) {
      if (!run.transcriptPath) continue;
      for (const file of [run.transcriptPath, run.transcriptPath.replace(/\.jsonl$/, '.stderr.log')]) {
        await rm(file, { force: true }).catch(() => undefined);
      }
    }
  }

  /** Until every run ended; a stop asked meanwhile ends the running agents. */
  private async waitForRunning(): Promise<void> {
    while (this.running.size > 0) {
      await Promise.race([...[...this.running.values()].map((r) => r.done), this.stopped]);
      if (this.stopping) {
        await this.shutdown();
        return;
      }
      this.dispatch();
    }
  }

  private async shutdown(): Promise<void> {
    if (this.running.size > 0 && !this.runAbort.signal.aborted) {
      // A fleet poller's tasks run on workers: only its own remediation runs have agents here.
      const runs = [...this.running.values()];
      const agents = this.options.runner ? runs.filter((r) => r.remediation).length : runs.length;
      if (agents > 0)
        this.options.log.warn(
          { running: agents },
          'Stopping: ending running agents; their sessions resume on the next start',
        );
      if (agents < runs.length)
        this.options.log.info(
          { dispatched: runs.length - agents },
          'Stopping: dispatched tasks keep running on their workers; the next poller takes them over',
        );
      this.runAbort.abort();
    }
    this.emitStatus();
    while (this.running.size > 0) await Promise.race([...this.running.values()].map((r) => r.done));
  }

  async run(): Promise<EngineResult> {
    const { settings, options } = this;
    const { env, log } = options;
    const interval = options.telemetryIntervalMs;
    this.telemetry = await loadTelemetry({
      execution: settings.execution,
      env,
      log,
      ...(interval === undefined ? {} : { exportIntervalMs: interval }),
    });
    try {
      return await this.runLoops();
    } finally {
      await this.telemetry?.shutdown();
    }
  }

  private async runLoops(): Promise<EngineResult> {
    for (const id of await this.options.store.listPaused()) {
      this.paused.add(id);
      const reason = await this.options.store.getMeta(pauseReasonKey(id));
      if (reason) this.pauseReasons.set(id, reason);
    }
    await this.loadBaselines();
    const interrupted = await this.recover();
    await this.costs.refresh();
    for (const automation of this.settings.automations) await this.prune(automation.id);
    for (const feed of this.feeds) if (feed instanceof ChainFeed) await feed.init(this.pollContext());
    await this.loadRetries();
    // A poller taking over: what ran under the previous one counts as dispatched, and what it
    // handed out is awaited, never sent again.
    for (const job of (await this.options.runner?.dispatched?.()) ?? []) {
      const feed = this.feeds.find((f) => f.automation.id === job.automationId);
      if (feed instanceof EventFeed) feed.markDispatched(job.task);
    }
    for (const job of (await this.options.runner?.adopt?.()) ?? []) {
      const automation = this.settings.automations.find((a) => a.id === job.automationId);
      if (automation) this.offer(automation, job.task);
    }
    await this.resumeSessions();
    // A resumed session takes its lease back; the leases of the other interrupted runs are released.
    await this.leases()?.releaseInterrupted(interrupted.filter((run) => !this.pending.has(run.taskKey)));
    if (this.options.mode === 'drain') await this.offerDueRetries();
    // Writes a previous process queued but never sent go out first.
    void this.writes()?.drain();
    const notifyStop = new AbortController();
    const notifying = this.notifier?.run(notifyStop.signal);
    if (this.options.mode === 'drain') await this.drain();
    else await this.watch();
    if (this.stopping) await this.shutdown();
    else await this.waitForRunning();
    this.releaseRemediations();
    await this.remediator?.idle();
    this.core.clearQueue();
    await this.githubWrites?.flush(this.options.stopSignal);
    // What the last runs queued gets one try now; anything still pending goes out on the next start.
    await this.flushNotifications(notifyStop, notifying);
    return {
      runs: this.runs,
      stoppedEarly: this.winding,
      discoveryErrors: [...this.discoveryErrors].map(([automationId, message]) => ({
        automationId,
        message,
      })),
      waiting: this.feeds
        .filter((f) => (f.waiting ?? 0) > 0)
        .map((f) => ({ automationId: f.automation.id, count: f.waiting ?? 0 })),
      held: this.held,
    };
  }

  private async flushNotifications(stop: AbortController, loop: Promise<void> | undefined): Promise<void> {
    if (!this.notifier) return;
    await Promise.all(this.queueing);
    const limit = new AbortController();
    await Promise.race([
      this.notifier.drain().catch(() => undefined),
      this.options.clock.sleep(NOTIFY_FLUSH_MS, limit.signal).catch(() => undefined),
    ]);
    limit.abort();
    stop.abort();
    await loop;
  }

  private async drain(): Promise<void> {
    this.dispatch();
    for (;;) {
      let offered = 0;
      // A full queue cuts a round short; the round after the queue drains polls the rest.
      let cutShort = false;
      for (const feed of this.feeds) {
        if (this.winding || this.sizeReached) break;
        if (this.core.capacity === 0) {
          cutShort = true;
          break;
        }
        if (this.skips(feed)) continue;
        offered += await this.pollFeed(feed);
        this.dispatch();
      }
      if (this.winding) return;
      while (this.running.size > 0 || (this.core.queuedCount > 0 && !this.sizeReached)) {
        this.dispatch();
        if (this.running.size === 0) break;
        await this.wakeup.wait(60_000, this.options.clock);
        if (this.winding) return;
      }
      if ((offered === 0 && !cutShort) || this.sizeReached) return;
    }
  }

  private async watch(): Promise<void> {
    const { clock } = this.options;
    const reloadEvery = this.options.reloadIntervalMs ?? 1000;
    while (!this.winding && !this.sizeReached) {
      this.maybeReload();
      await this.loadBaselines();
      await this.offerAllowed().catch((error: unknown) => {
        this.options.log.warn({ error: errorMessage(error) }, 'Could not read allowances');
      });
      await this.offerReset().catch((error: unknown) => {
        this.options.log.warn({ error: errorMessage(error) }, 'Could not read escalations');
      });
      await this.offerDueRetries().catch((error: unknown) => {
        this.options.log.warn({ error: errorMessage(error) }, 'Could not offer the retries due');
      });
      await this.offerUnparked().catch((error: unknown) => {
        this.options.log.warn({ error: errorMessage(error) }, 'Could not read the budgets');
      });
      this.dispatch();
      for (const feed of this.feeds) {
        if (this.winding || this.sizeReached) break;
        if (feed.nextPollAt > clock.now() || this.core.capacity === 0 || this.skips(feed)) continue;
        this.forced.delete(feed.automation.id);
        await this.pollFeed(feed);
        this.dispatch();
      }
      this.dispatch();
      if (this.winding || this.sizeReached) break;
      await this.reconcile().catch((error: unknown) => {
        this.options.log.warn({ error: errorMessage(error) }, 'Could not check the items of active tasks');
      });
      await this.maybeMaintain();
      await this.maybeSweep();
      await this.followPullRequests();
      void this.githubWrites?.drain();
      // A full queue polls nothing (see above) until a run ends, which wakes this loop: a feed
      // already due must not make the wait 0 and spin the loop meanwhile.
      const pollable = this.core.capacity > 0 ? this.feeds.filter((f) => !this.skips(f)) : [];
      const nextPoll = Math.min(
        ...pollable.map((f) => f.nextPollAt),
        ...this.reconcileAt.values(),
        this.retries.nextAt(clock.now(), (r) => this.isPaused(r.automationId)),
        Number.POSITIVE_INFINITY,
      );
      this.options.onTick?.(this.emitStatus(Number.isFinite(nextPoll) ? nextPoll : undefined));
      const until = Math.min(
        nextPoll,
        this.options.reload ? clock.now() + reloadEvery : Number.POSITIVE_INFINITY,
      );
      await this.wakeup.wait(Number.isFinite(until) ? until - clock.now() : 60_000, clock);
    }
  }

  /**
   * Reconciliation (watch mode): once per poll interval, while an automation has tasks queued or
   * running, the trigger reads again the items its feed has not seen matching since the last check
   * (issue 34: in one request per 100 items). An item closed, deleted or no longer matching
   * drops its queued task (recorded as cancelled) and stops its running agent through the same
   * per-run cancel the board uses (`on_unmatch = "stop"`), or lets it finish (`"finish"`).
   */
  private async reconcile(): Promise<void> {
    const now = this.options.clock.now();
    const interval = this.settings.execution.polling.poll_interval_seconds * 1000;
    const { queued } = this.core.snapshot();
    for (const feed of this.feeds) {
      const { automation } = feed;
      if (!automation.trigger.unmatched || this.winding) continue;
      const tasks = [
        ...queued.filter((c) => c.automationId === automation.id).map((c) => c.task),
        ...[...this.running.values()]
          .filter((r) => r.automation.id === automation.id && !r.remediation)
          .filter((r) => !this.stopReasons.has(r.task.key) && !this.unmatchedFinishing.has(r.task.key))
          .map((r) => r.task),
      ];
      const due = this.reconcileAt.get(automation.id);
      if (tasks.length === 0) this.reconcileAt.delete(automation.id);
      // The poll that found the tasks just saw their items: the first check is one interval later.
      else if (due === undefined) this.reconcileAt.set(automation.id, now + interval);
      if (tasks.length === 0 || due === undefined || due > now) continue;
      this.reconcileAt.set(automation.id, now + interval);
      // What the feed saw matching since the last check needs no second read; the rest is read in
      // one request per 100 items.
      const unread = tasks.filter((task) => !feed.matchedSince?.(task.key, now - interval));
      if (unread.length === 0) continue;
      const reasons = await automation.trigger.unmatched(automation, unread, {
        github: this.options.github,
        signal: this.pollSignal,
      });
      if (reasons.size > 0) await this.unmatched(automation, feed, reasons);
    }
  }

  /** Drops the queued tasks and stops (or lets finish) the running ones whose items stopped matching. */
  private async unmatched(
    automation: ResolvedAutomation,
    feed: Feed,
    reasons: ReadonlyMap<string, string>,
  ): Promise<void> {
    const { log, store, clock } = this.options;
    // Offered again if the item matches again later (a saved session then resumes).
    const forget = (task: Task): void => {
      if (feed instanceof EventFeed) feed.forget(task);
    };
    const dropped = this.core.clearQueue((c) => c.automationId === automation.id && reasons.has(c.task.key));
    for (const candidate of dropped) {
      const { task } = candidate;
      this.pending.delete(task.key);
      forget(task);
      const reason = `${reasons.get(task.key)}: dropped from the queue before it started`;
      const created = await store.createRun({ ...runInit(automation, task, 'cancelled'), reason });
      const run = await store.updateRun(created.id, { finishedAt: new Date(clock.now()).toISOString() });
      this.runs.push(run);
      this.options.onRun?.(run);
      log.info({ automation: automation.id, id: task.item.id, run: run.id, reason }, 'Dropped a queued task');
    }
    for (const entry of this.running.values()) {
      const reason = reasons.get(entry.task.key);
      if (entry.automation.id !== automation.id || reason === undefined) continue;
      forget(entry.task);
      const fields = { automation: automation.id, id: entry.task.item.id, run: entry.info.runId, reason };
      // An agent that reported its result may well have closed its item itself: it only has to exit.
      if (entry.reported) {
        this.unmatchedFinishing.add(entry.task.key);
        log.info(
          fields,
          'The item no longer matches, but its agent already reported its result: not stopped',
        );
        continue;
      }
      if (automation.config.on_unmatch === 'finish') {
        this.unmatchedFinishing.add(entry.task.key);
        log.info(fields, 'The item no longer matches; on_unmatch = "finish" lets the run finish');
        continue;
      }
      this.stopReasons.set(entry.task.key, reason);
      log.warn(fields, 'The item no longer matches: stopping its agent');
      entry.cancel.abort();
    }
    if (dropped.length > 0) this.emitStatus();
  }

  /**
   * git's housekeeping for the checkouts, at most once an hour, only while nothing runs or waits:
   * runs keep it out of their path (a fetch would otherwise start `git maintenance run --auto`).
   */
  private async maybeMaintain(): Promise<void> {
    if (this.running.size > 0 || this.core.queuedCount > 0) return;
    if (Date.now() - this.lastMaintenance < MAINTENANCE_INTERVAL_MS) return;
    this.lastMaintenance = Date.now();
    const checkouts = new Set(this.settings.automations.map((a) => a.repository.checkoutPath));
    await maintainCheckouts([...checkouts]);
  }

  // ---- Operator controls (`curupira serve`: the board, the API and the CLI) ----

  /** The board's "baseline set" line for event feeds with item memory not read yet (new or reloaded). */
  private async loadBaselines(): Promise<void> {
    for (const feed of this.feeds)
      if (feed instanceof EventFeed && feed.baseline === undefined)
        await feed.loadBaseline(this.options.store);
  }

  /**
   * A paused (or disabled) feed is not polled, unless an operator asked to run it now; a feed
   * parked by its budget is not polled until the next UTC day.
   */
  private skips(feed: Feed): boolean {
    const id = feed.automation.id;
    return (this.isPaused(id) && !this.forced.has(id)) || this.costs.parked(id) !== undefined;
  }

  /** An item held back by a budget park: the next poll after the park offers it again. */
  private forgetTask(automationId: string, task: Task): void {
    const feed = this.feeds.find((f) => f.automation.id === automationId);
    if (feed instanceof EventFeed) feed.forget(task);
  }

  /** Watch mode, once the UTC day changed: saved sessions of the automations a budget parked resume. */
  private async offerUnparked(): Promise<void> {
    const unparked = await this.costs.unparked();
    if (unparked.length === 0) return;
    const resumable: { automation: ResolvedAutomation; session: SessionRecord }[] = [];
    for (const session of await this.options.store.listSessions()) {
      const automation = this.settings.automations.find((a) => a.id === session.automationId);
      if (!automation || !unparked.includes(automation.id) || this.running.has(session.taskKey)) continue;
      resumable.push({ automation, session });
    }
    const unmatched = await this.unmatchedSessions(resumable);
    for (const { automation, session } of resumable)
      if (!unmatched.has(session.taskKey)) this.offer(automation, session.task, session);
    this.dispatch();
  }

  /** `enabled = false` in the settings file as they are now (a reload may change it). */
  private disabled(id: string): boolean {
    return this.settings.automations.find((a) => a.id === id)?.config.enabled === false;
  }

  private isPaused(id: string): boolean {
    return this.paused.has(id) || this.disabled(id);
  }

  private automation(id: string): ResolvedAutomation {
    const automation = this.settings.automations.find((a) => a.id === id);
    if (!automation) throw new ControlError('automation_not_found', `no automation '${id}' is configured`);
    return automation;
  }

  /** What each configured automation is doing now. */
  automations(): AutomationStatus[] {
    return this.feeds.map((feed) => {
      const id = feed.automation.id;
      const last = this.lastPolls.get(id);
      const error = this.discoveryErrors.get(id);
      return {
        id,
        paused: this.isPaused(id),
        disabled: this.disabled(id),
        ...(feed instanceof EventFeed && feed.baseline ? { baseline: feed.baseline } : {}),
        nextPollAt: feed.nextPollAt,
        ...(last ? { lastPollAt: last.at, lastFound: last.found } : {}),
        ...(error === undefined ? {} : { lastError: error }),
        waiting: feed.waiting ?? 0,
        ...(feed.matching === undefined ? {} : { matching: feed.matching }),
        ...this.unattendedStatus(feed.automation),
        budget: this.costs.status(feed.automation),
      };
    });
  }

  /** An automation's auto-pause reason, waiting retries and parked provider, for `automations()`. */
  private unattendedStatus(
    automation: ResolvedAutomation,
  ): Pick<AutomationStatus, 'pausedReason' | 'retries' | 'parkedUntil'> {
    const reason = this.paused.has(automation.id) ? this.pauseReasons.get(automation.id) : undefined;
    const retries = this.retries.list(automation.id).map((r) => ({
      itemId: r.task.item.id,
      note: describeScheduled(r),
      at: r.at,
    }));
    const parkedUntil = this.retries.parkedUntil(automation.profile.provider, this.options.clock.now());
    return {
      ...(reason ? { pausedReason: reason } : {}),
      ...(retries.length > 0 ? { retries } : {}),
      ...(parkedUntil === undefined ? {} : { parkedUntil }),
    };
  }

  /** The settings the engine runs with now (they change on reload). */
  currentSettings(): Settings {
    return this.settings;
  }

  /**
   * Pauses or resumes an automation; remembered in the store across restarts. Running runs go on.
   * An automation disabled in the settings file is not resumed from here: its file says so.
   */
  async setPaused(id: string, paused: boolean, reason?: string): Promise<void> {
    this.automation(id);
    if (!paused && this.disabled(id))
      throw new ControlError(
        'automation_disabled',
        `automation '${id}' is disabled in ${this.settings.file} (enabled = false): edit the file to resume it`,
      );
    const wasPaused = this.paused.has(id);
    await this.options.store.setPaused(id, paused);
    // The reason of an automatic pause; a pause by hand or a resume clears it.
    await this.options.store.setMeta(pauseReasonKey(id), paused ? (reason ?? '') : '');
    if (paused && reason) this.pauseReasons.set(id, reason);
    else this.pauseReasons.delete(id);
    if (paused && !wasPaused) {
      const at = new Date(this.options.clock.now()).toISOString();
      this.notify({
        event: 'automation_paused',
        id: `pause:${id}:${at}`,
        automation: id,
        summary: `${id}: automation paused (${reason ?? 'by an operator'})`,
        details: { reason: reason ?? 'paused by an operator' },
        occurredAt: at,
      });
    }
    if (paused) this.paused.add(id);
    else this.paused.delete(id);
    if (!paused) {
      await this.resumeSessions(id);
      this.dispatch();
    }
    this.emitStatus();
    this.wakeup.wake();
  }

  /**
   * Runs an automation now: a schedule fires an occurrence at this instant; an event trigger polls
   * at once (its matching items start as usual). Works on a paused automation too, once.
   */
  trigger(id: string): 'fired' | 'polling' {
    const automation = this.automation(id);
    const feed = this.feeds.find((f) => f.automation.id === id);
    if (feed instanceof CronFeed) {
      const item = cronItem(feed.automation, new Date(this.options.clock.now()), false);
      this.offer(automation, taskFromItem(automation, item));
      this.dispatch();
      this.wakeup.wake();
      return 'fired';
    }
    if (feed) feed.nextPollAt = 0;
    if (this.isPaused(id)) this.forced.add(id);
    this.wakeup.wake();
    return 'polling';
  }

  /**
   * Queues a notification for every `[notifications]` target that wants it (durably; sent by the
   * delivery loop, retried, once per target per `event.id`). Never throws: a failure is logged.
   * Events and their payload: docs/notifications.md.
   */
  notify(event: NotificationEvent): void {
    if (!this.notifier) return;
    const queued = this.notifier
      .notify(event)
      .then(() => undefined)
      .catch((error: unknown) => {
        this.options.log.warn(
          { event: event.event, id: event.id, error: errorMessage(error) },
          'Could not queue a notification',
        );
      })
      .finally(() => this.queueing.delete(queued));
    this.queueing.add(queued);
  }

  /**
   * A GitHub webhook concerns these automations: each event automation that is not paused polls
   * now instead of at its next interval (schedules and chains are not moved). Returns those polled.
   */
  pollNow(ids: readonly string[]): string[] {
    const polled: string[] = [];
    for (const feed of this.feeds) {
      const id = feed.automation.id;
      if (!ids.includes(id) || !(feed instanceof EventFeed) || this.isPaused(id)) continue;
      feed.nextPollAt = 0;
      polled.push(id);
    }
    if (polled.length > 0) this.wakeup.wake();
    return polled;
  }

  /** An operator allowed a blocked item: the watch loop offers it now instead of at its next poll. */
  allowed(): void {
    this.wakeup.wake();
  }

  /** Cancels one running run: its agent's process group is stopped; its saved session is kept. */
  cancel(runId: string): void {
    const entry = [...this.running.values()].find((r) => r.info.runId === runId);
    if (!entry) throw new ControlError('run_not_active', `run ${runId} is not running in this daemon`);
    entry.cancel.abort();
  }

  private async noteCancelled(run: RunRecord): Promise<RunRecord> {
    if (run.status !== 'cancelled') return run;
    const session = await this.options.store.getSession(run.taskKey);
    const unmatched = this.stopReasons.get(run.taskKey);
    if (unmatched !== undefined) {
      const kept = [session ? 'its session' : '', run.worktreeKept ? 'its worktree' : '']
        .filter((k) => k !== '')
        .join(' and ');
      return this.options.store.updateRun(run.id, {
        reason: `${unmatched}: the agent was stopped (on_unmatch = "stop")${kept ? `; ${kept} ${kept.includes(' and ') ? 'are' : 'is'} kept` : ''}`,
      });
    }
    return this.options.store.updateRun(run.id, {
      reason: `cancelled by an operator${session ? '; its session is kept (retry resumes it)' : ''}`,
    });
  }

  /**
   * Runs a finished run's task again: a saved session is resumed; otherwise a schedule fires the
   * same occurrence again and an event trigger forgets the item and polls now.
   */
  async retry(runId: string): Promise<RetryResult> {
    const run = await this.options.store.getRun(runId);
    if (!run) throw new ControlError('run_not_found', `no run ${runId}`);
    if (!isTerminal(run.status)) throw new ControlError('run_active', `run ${runId} has not finished`);
    const automation = this.automation(run.automationId);
    // A person asking again is the reset an escalation waits for.
    if (run.status === 'escalated') await this.options.store.clearItemFailures(run.taskKey);
    const session = await this.options.store.getSession(run.taskKey);
    if (session) {
      this.offer(automation, session.task, session);
      this.dispatch();
      return 'resumed';
    }
    const feed = this.feeds.find((f) => f.automation.id === automation.id);
    if (feed instanceof CronFeed && run.scheduledFor) {
      const item = cronItem(feed.automation, new Date(run.scheduledFor), false);
      this.offer(automation, taskFromItem(automation, item));
      this.dispatch();
      return 'fired';
    }
    if (feed instanceof EventFeed) {
      feed.forgetKey(run.taskKey);
      this.trigger(automation.id);
      return 'polling';
    }
    throw new ControlError(
      'not_retryable',
      `run ${runId} has no saved session and its trigger cannot fire it again`,
    );
  }

  private maybeReload(): void {
    const { reload, clock, log } = this.options;
    if (!reload) return;
    const now = clock.now();
    if (now - this.lastReloadCheck < (this.options.reloadIntervalMs ?? 1000)) return;
    this.lastReloadCheck = now;
    const next = reload();
    if (next === undefined) return;
    if (next instanceof ConfigError) {
      log.warn({ error: next.message }, 'Configuration reload failed; keeping the last good configuration');
      return;
    }
    if (next.execution.state_db_path !== this.settings.execution.state_db_path) {
      log.warn(
        { from: this.settings.execution.state_db_path, to: next.execution.state_db_path },
        'state_db_path changed: the new state file is used after a restart; this process keeps the current one',
      );
    }
    if (next.execution.state_db_url !== this.settings.execution.state_db_url) {
      log.warn(
        { from: printableStateLocation(this.settings.execution), to: printableStateLocation(next.execution) },
        'state_db_url changed: the new state database is used after a restart; this process keeps the current one',
      );
    }
    const removed = this.settings.automations
      .filter((a) => !next.automations.some((b) => b.id === a.id))
      .map((a) => a.id);
    const changed = next.automations.filter((a) => {
      const old = this.settings.automations.find((b) => b.id === a.id);
      return !old || !sameAutomation(old, a);
    });
    this.settings = next;
    this.core.setLimits(this.limits());
    this.feeds = this.buildFeeds(next, this.feeds);
    // A waiting remediation keeps its place: its remediator waits for it (it runs with the new settings).
    const dropped = this.core.clearQueue(
      (c) =>
        !this.pending.get(c.task.key)?.remediation &&
        (removed.includes(c.automationId) || changed.some((a) => a.id === c.automationId)),
    );
    for (const candidate of dropped) this.pending.delete(candidate.task.key);
    log.info(
      { automations: next.automations.length, changed: changed.map((a) => a.id), removed },
      'Configuration reloaded',
    );
  }
}

function sameAutomation(a: ResolvedAutomation, b: ResolvedAutomation): boolean {
  return (
    JSON.stringify([a.config, a.profile, a.repository, a.timezone]) ===
    JSON.stringify([b.config, b.profile, b.repository, b.timezone])
  );
}

/** The plain-data form of a pending task, for a `TaskRunner`. */
function dispatchedTask(automation: ResolvedAutomation, task: Task, pending: Pending): DispatchedTask {
  return {
    automationId: automation.id,
    task,
    resume: pending.resume !== undefined,
    ...(pending.discoveredAt === undefined ? {} : { discoveredAt: pending.discoveredAt }),
    ...(pending.attempt === undefined ? {} : { attempt: pending.attempt }),
    ...(pending.retryOf === undefined ? {} : { retryOf: pending.retryOf }),
    ...(pending.previousAttempt ? { previousAttempt: pending.previousAttempt } : {}),
  };
}

export async function runEngine(options: EngineOptions): Promise<EngineResult> {
  return new Engine(options).run();
}

/** The run a task follows (chains), for its run record. */
function upstreamOf(automation: ResolvedAutomation, task: Task): { upstreamRunId?: string } {
  const upstreamRunId = automation.trigger.upstreamRunId(task);
  return upstreamRunId === undefined ? {} : { upstreamRunId };
}
