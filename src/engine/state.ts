/**
 * What the kernel's parts share: the settings in force, the feeds, the scheduler core, the tasks
 * waiting and running, pauses, and the few helpers every part needs (status, offers, executor
 * dependencies). The kernel (engine.ts), reconciliation, remediations, recovery, reload and the
 * operator controls each hold this one object.
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { ControlError } from '../core/errors.js';
import type { Feature, OfferOptions } from '../core/feature.js';
import type { RunRecord, Task } from '../core/types.js';
import type { SessionRecord } from '../store/types.js';
import { taskItemName } from '../triggers/registry.js';
import { createServiceKit } from '../triggers/service.js';
import type { ExecutorDeps, PreviousAttempt, RemediationRun } from './executor.js';
import type { Feed, PollContext } from './feed.js';
import { createFeed } from './feed-factory.js';
import { locksFor, type OfferResult, SchedulerCore } from './scheduler.js';
import type { EngineStatus, ExecutorDepsPart, KernelOptions, QueuedTask, RunningTask } from './types.js';
import { Wakeup } from './wakeup.js';

/** Queued tasks the status lists (the count says how many in all). */
const QUEUED_SHOWN = 20;

/** A task waiting in the scheduler's queue, with what its run needs. */
export interface Pending {
  automation: ResolvedAutomation;
  resume?: SessionRecord;
  /** Epoch ms when a poll returned the task: a fetch started after it serves the run. */
  discoveredAt?: number;
  /** A retry (or a parked run's rerun): which try it is, and the run it follows. */
  attempt?: number;
  retryOf?: string;
  /** A remediation run waiting for its turn (see remediations.ts). */
  remediation?: RemediationTurn;
  /** A fleet restart after its host was lost (see `DispatchedTask`). */
  previousAttempt?: PreviousAttempt;
  /** Inputs a trigger gave this run (issue 32), over the engine's own. */
  inputs?: Readonly<Record<string, string>>;
}

/** A remediation handed to the scheduler: what it runs, and who waits for its record. */
export interface RemediationTurn {
  /** The item's own task (the scheduler queues it under `remediationKey`). */
  task: Task;
  run: RemediationRun;
  onRun(run: RunRecord): void;
  /** Its record once it ran; undefined when it never started (the engine stopped meanwhile). */
  settle(run: RunRecord | undefined, error?: unknown): void;
}

/** A task running in this process. */
export interface RunningEntry {
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

export class KernelState {
  settings: Settings;
  feeds: Feed[];
  readonly core: SchedulerCore;
  features: readonly Feature<ExecutorDepsPart>[] = [];
  readonly pending = new Map<string, Pending>();
  readonly running = new Map<string, RunningEntry>();
  /** The last settings reload that failed (the last good settings are kept), until one succeeds. */
  reloadError: { message: string; at: string } | null = null;
  /** Automations paused by an operator (loaded from the store at start). */
  readonly paused = new Set<string>();
  /** Why automations were paused automatically (loaded from the store at start). */
  readonly pauseReasons = new Map<string, string>();
  /** Paused automations an operator asked to poll once anyway ("run now"). */
  readonly forced = new Set<string>();
  /** Inputs a "run now" gave an event automation: the items its next poll offers get them. */
  readonly triggerInputs = new Map<string, Readonly<Record<string, string>>>();
  /** Every run this engine recorded, in order, with its final state. */
  readonly runs: RunRecord[] = [];
  /** Items found again whose unchanged text an earlier run holds (blocked): nothing new recorded. */
  readonly held: RunRecord[] = [];
  readonly wakeup = new Wakeup();
  /** Aborted when a stop asks running agents to end. */
  readonly runAbort = new AbortController();
  /** Aborts a poll in flight when a stop or a drain is asked. */
  readonly pollSignal: AbortSignal;
  /** Runs started so far (for `size`). */
  started = 0;
  /** Tasks whose item changed while their run was going: polled again as soon as that run ends. */
  readonly changedWhileRunning = new Set<string>();
  /**
   * Retries asked while their task was in flight (a held dispatch still settling, another run of the
   * item): the run id to retry again as soon as that task's slot is free.
   */
  readonly retryWhenFree = new Map<string, string>();
  /** When each automation was last polled, and the new tasks that poll found. */
  readonly lastPolls = new Map<string, { at: number; found: number }>();
  /** The last poll error per automation, until a poll succeeds. */
  readonly discoveryErrors = new Map<string, string>();

  constructor(readonly options: KernelOptions) {
    this.settings = options.settings;
    this.core = new SchedulerCore(this.limits());
    this.feeds = this.buildFeeds(options.settings, []);
    this.pollSignal = options.drainSignal
      ? AbortSignal.any([options.stopSignal, options.drainSignal])
      : options.stopSignal;
  }

  limits(): { maxActive: number; maxPending: number } {
    return {
      maxActive: this.settings.execution.max_active_tasks,
      maxPending: this.settings.execution.max_pending_tasks,
    };
  }

  get stopping(): boolean {
    return this.options.stopSignal.aborted;
  }

  /** No new work: a stop or a drain was asked. */
  get winding(): boolean {
    return this.options.stopSignal.aborted || this.options.drainSignal?.aborted === true;
  }

  get sizeReached(): boolean {
    return this.options.size !== undefined && this.started >= this.options.size;
  }

  buildFeeds(settings: Settings, previous: readonly Feed[]): Feed[] {
    const { log, clock } = this.options;
    return settings.automations.map((automation) => {
      const old = previous.find((f) => f.automation.id === automation.id);
      if (old && sameAutomation(old.automation, automation)) return old;
      return createFeed(
        automation,
        settings.execution.polling,
        {
          github: this.options.github,
          clock,
          log,
          service: this.options.service ?? createServiceKit({ env: this.options.env, dir: settings.dir }),
        },
        settings.automations,
      );
    });
  }

  feedOf(automationId: string): Feed | undefined {
    return this.feeds.find((f) => f.automation.id === automationId);
  }

  pollContext(): PollContext {
    return {
      store: this.options.store,
      clock: this.options.clock,
      log: this.options.log,
      limit: this.settings.execution.polling.batch_size,
      preview: false,
      signal: this.pollSignal,
    };
  }

  /** What waits for a slot, as the board and `status` list it. */
  private queuedTasks(): QueuedTask[] {
    const shown: QueuedTask[] = [];
    for (const candidate of this.core.snapshot().queued.slice(0, QUEUED_SHOWN)) {
      const automation = this.settings.automations.find((a) => a.id === candidate.automationId);
      if (!automation) continue;
      const { task } = candidate;
      shown.push({
        automationId: automation.id,
        repo: task.identity.repo,
        itemId: task.item.id,
        item: taskItemName(automation, task),
        title: task.item.title,
        url: task.item.url,
      });
    }
    return shown;
  }

  emitStatus(nextPollAt?: number): EngineStatus {
    const status: EngineStatus = {
      mode: this.options.mode,
      running: [...this.running.values()].map((r) => r.info),
      queued: this.core.queuedCount,
      queuedTasks: this.queuedTasks(),
      maxActive: this.settings.execution.max_active_tasks,
      ...(nextPollAt === undefined ? {} : { nextPollAt }),
      stopping: this.stopping,
      draining: !this.stopping && this.options.drainSignal?.aborted === true,
      waiting: this.feeds.reduce((sum, f) => sum + (f.waiting ?? 0), 0),
      ...(this.reloadError ? { reloadError: this.reloadError } : {}),
      ...Object.assign({}, ...this.features.map((f) => f.engineStatus?.() ?? {})),
    };
    this.options.onStatus?.(status);
    return status;
  }

  /** The event feeds forget an item (see `KernelPort.forget`). */
  forget(taskKey: string, options: { automationId?: string; task?: Task; pollNow?: boolean } = {}): void {
    for (const feed of this.feeds) {
      if (!feed.forget || !feed.forgetKey) continue;
      if (options.automationId !== undefined && feed.automation.id !== options.automationId) continue;
      if (options.task) feed.forget(options.task);
      else if (feed.forgetKey(taskKey) && options.pollNow) feed.nextPollAt = 0;
    }
  }

  /** The executor's dependencies for one run: the kernel's own, and what the features contribute. */
  executorDeps(onUpdate?: (run: RunRecord) => void, onReported?: (reported: boolean) => void): ExecutorDeps {
    const contributed: ExecutorDepsPart = Object.assign({}, ...this.features.map((f) => f.runDeps?.() ?? {}));
    const { options } = this;
    return {
      ...contributed,
      execution: this.settings.execution,
      store: options.store,
      clock: options.clock,
      log: options.log,
      env: options.env,
      ...(options.tokens ? { tokens: options.tokens } : {}),
      transcriptsDir: options.transcriptsDir,
      ...(options.selfCommand ? { selfCommand: options.selfCommand } : {}),
      ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
      ...(onUpdate ? { onUpdate } : {}),
      ...(onReported ? { onReported } : {}),
      ...(this.settings.pricing ? { pricing: this.settings.pricing } : {}),
      ...(options.inputs ? { inputs: options.inputs } : {}),
    };
  }

  /** Offers a task to the scheduler; a queued one is remembered with what its run needs. */
  offer(
    automation: ResolvedAutomation,
    task: Task,
    options: OfferOptions & { discoveredAt?: number; inputs?: Readonly<Record<string, string>> } = {},
  ): OfferResult {
    const { resume, discoveredAt, retry, inputs } = options;
    const result = this.core.offer({
      task,
      automationId: automation.id,
      locks: locksFor(task, {
        ...(automation.config.checkout === 'main'
          ? { sharedCheckout: automation.repository.checkoutPath }
          : {}),
        serialAutomation: automation.trigger.serialRuns,
      }),
      priority: retry ? 'retry' : resume ? 'resume' : 'normal',
    });
    if (result === 'queued' || result === 'updated')
      this.pending.set(task.key, {
        automation,
        ...(resume ? { resume } : {}),
        ...(discoveredAt === undefined ? {} : { discoveredAt }),
        ...(retry ?? {}),
        ...(inputs ? { inputs } : {}),
      });
    // A changed item whose older version runs now is not marked: it is offered again when that run ends.
    if (result === 'busy') this.changedWhileRunning.add(task.key);
    else if (result !== 'full') this.feedOf(automation.id)?.markDispatched(task);
    return result;
  }

  /** `enabled = false` in the settings file as they are now (a reload may change it). */
  disabled(id: string): boolean {
    return this.settings.automations.find((a) => a.id === id)?.config.enabled === false;
  }

  isPaused(id: string): boolean {
    return this.paused.has(id) || this.disabled(id);
  }

  automation(id: string): ResolvedAutomation {
    const automation = this.settings.automations.find((a) => a.id === id);
    if (!automation) throw new ControlError('automation_not_found', `no automation '${id}' is configured`);
    return automation;
  }

  /** The board's "baseline set" line for event feeds with item memory not read yet (new or reloaded). */
  async loadBaselines(): Promise<void> {
    for (const feed of this.feeds)
      if (feed.baseline === undefined) await feed.loadBaseline?.(this.options.store);
  }
}

export function sameAutomation(a: ResolvedAutomation, b: ResolvedAutomation): boolean {
  return (
    JSON.stringify([a.config, a.profile, a.repository, a.timezone]) ===
    JSON.stringify([b.config, b.profile, b.repository, b.timezone])
  );
}
