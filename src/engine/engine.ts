/**
 * The kernel: feeds → scheduler core → runs, in two modes. `drain` runs what is available now and
 * returns; `watch` polls until stopped, reloading the settings file when it changes. On start it
 * stops agents a dead curupira left behind, closes their runs, and resumes saved sessions first.
 * Cross-cutting features (screening, budgets, leases, GitHub writes, delivery, retries,
 * notifications, telemetry) plug in through the lifecycle contract of src/core/feature.ts; the
 * kernel imports none of them (src/features.ts lists them).
 */
import { rm } from 'node:fs/promises';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { errorMessage, StateError } from '../core/errors.js';
import type { Candidate, GateVerdict, KernelPort, RunOutcome } from '../core/feature.js';
import { classifyFailure } from '../core/outcome.js';
import { isTerminal, pauseReasonKey, type RunRecord, type Task } from '../core/types.js';
import { taskItemName } from '../triggers/registry.js';
import { maintainCheckouts } from '../workspace/index.js';
import { Control } from './control.js';
import { type ExecutorDeps, executeTask, type RemediationRun } from './executor.js';
import type { Feed } from './feed.js';
import { memoryKey } from './memory.js';
import { Reconciler } from './reconcile.js';
import { offerSessions, recover, resumeSessions } from './recovery.js';
import { Reloader } from './reload.js';
import { Remediations } from './remediations.js';
import { KernelState, type Pending } from './state.js';
import type {
  AutomationStatus,
  DispatchedTask,
  EngineResult,
  KernelOptions,
  RetryResult,
  RunningTask,
} from './types.js';

export type {
  AutomationStatus,
  DispatchedTask,
  EngineResult,
  EngineStatus,
  ExecutorDepsPart,
  KernelOptions,
  RemediationHost,
  RetryResult,
  RunningTask,
  TaskRunner,
} from './types.js';

/** How often an idle watch lets git do its housekeeping in the checkouts. */
const MAINTENANCE_INTERVAL_MS = 60 * 60_000;

export class Kernel {
  private readonly s: KernelState;
  private readonly reconciler: Reconciler;
  private readonly remediations: Remediations;
  private readonly control: Control;
  private readonly reloader: Reloader;
  /** Finished runs per automation in the ledger, as last counted (see `prune`). */
  private readonly finishedRuns = new Map<string, number>();
  /** Real time of the last idle `git maintenance` (runs leave it out of their path); see `maybeMaintain`. */
  private lastMaintenance = Date.now();
  /** Resolves when a stop (not a drain) is asked. */
  private readonly stopped: Promise<void>;

  constructor(options: KernelOptions) {
    const s = new KernelState(options);
    this.s = s;
    const dispatch = (): void => this.dispatch();
    this.reconciler = new Reconciler(s);
    this.remediations = new Remediations(s, dispatch);
    this.control = new Control(s, this.reconciler, dispatch);
    this.reloader = new Reloader(s);
    this.stopped = new Promise((resolve) => {
      if (options.stopSignal.aborted) resolve();
      options.stopSignal.addEventListener('abort', () => resolve(), { once: true });
    });
    options.stopSignal.addEventListener('abort', () => s.wakeup.wake(), { once: true });
    options.drainSignal?.addEventListener(
      'abort',
      () => {
        s.emitStatus();
        s.wakeup.wake();
      },
      { once: true },
    );
    s.features = options.features?.(this.port(), this) ?? [];
  }

  /** What features may ask of the kernel (see src/core/feature.ts). */
  private port(): KernelPort {
    const { s } = this;
    return {
      mode: s.options.mode,
      clock: s.options.clock,
      pollSignal: s.pollSignal,
      settings: () => s.settings,
      offer: (automationId, task, options) => {
        const automation = s.settings.automations.find((a) => a.id === automationId);
        return automation ? s.offer(automation, task, options) : 'skipped';
      },
      resume: (sessions) => offerSessions(s, sessions),
      capacity: () => s.core.capacity,
      forget: (taskKey, options) => s.forget(taskKey, options),
      pollSoon: (automationId) => {
        const feed = s.feedOf(automationId);
        if (feed) feed.nextPollAt = 0;
        s.wakeup.wake();
      },
      wake: () => s.wakeup.wake(),
      pause: (automationId, reason) => this.control.setPaused(automationId, true, reason),
      paused: (automationId) => s.isPaused(automationId),
      running: (taskKey) => s.running.has(taskKey),
      winding: () => s.winding,
    };
  }

  /** One remediation run of a delivered pull request, through the scheduler (remediations.ts). */
  remediate(
    automation: ResolvedAutomation,
    task: Task,
    remediation: RemediationRun,
    onRun: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined> {
    return this.remediations.remediate(automation, task, remediation, onRun);
  }

  // ---- Operator controls (control.ts) ----

  /** What each configured automation is doing now. */
  automations(): AutomationStatus[] {
    return this.control.automations();
  }

  /** The settings the engine runs with now (they change on reload). */
  currentSettings(): Settings {
    return this.s.settings;
  }

  setPaused(id: string, paused: boolean, reason?: string): Promise<void> {
    return this.control.setPaused(id, paused, reason);
  }

  trigger(id: string, inputs?: Readonly<Record<string, string>>): 'fired' | 'polling' {
    return this.control.trigger(id, inputs);
  }

  /** Runs one of the scans an automation's feed offers now (a review watch's baseline). */
  scanNow(id: string, scan: string): 'polling' {
    return this.control.scanNow(id, scan);
  }

  pollNow(ids: readonly string[]): string[] {
    return this.control.pollNow(ids);
  }

  /** An operator allowed a blocked item: the watch loop offers it now instead of at its next poll. */
  allowed(): void {
    this.s.wakeup.wake();
  }

  cancel(runId: string): void {
    this.control.cancel(runId);
  }

  retry(runId: string): Promise<RetryResult> {
    return this.control.retry(runId);
  }

  /** The features' gates, in order: the first answer other than `go` wins. */
  private async gate(
    automation: ResolvedAutomation,
    task: Task,
    resumed: boolean,
    signal: AbortSignal,
  ): Promise<GateVerdict> {
    let ready: GateVerdict = { kind: 'go' };
    for (const feature of this.s.features) {
      if (!feature.gate) continue;
      const current = ready.kind === 'go' && ready.task ? ready.task : task;
      const verdict = await feature.gate({ automation, task: current, resumed, signal });
      if (verdict.kind !== 'go') return verdict;
      if (verdict.task || verdict.screening) ready = { ...ready, ...verdict };
    }
    return ready;
  }

  /**
   * Passes a new task through the features' gates, then runs it. Returns the run record, or
   * undefined when a gate held it back.
   */
  private async gateAndExecute(
    deps: ExecutorDeps,
    automation: ResolvedAutomation,
    task: Task,
    pending: Pending,
    signal: AbortSignal,
  ): Promise<RunRecord | undefined> {
    // Inputs a trigger gave this run win over the engine's own (`run --set`).
    if (pending.inputs) deps = { ...deps, inputs: { ...deps.inputs, ...pending.inputs } };
    const verdict = await this.gate(automation, task, pending.resume !== undefined, signal);
    if (verdict.kind === 'hold') {
      if (verdict.previous) this.s.held.push(verdict.previous);
      if (verdict.forget) this.s.forget(task.key, { automationId: automation.id, task });
      return undefined;
    }
    if (verdict.kind === 'record') {
      deps.onUpdate?.(verdict.run);
      return verdict.run;
    }
    return executeTask(deps, {
      automation,
      task: verdict.task ?? task,
      signal,
      ...(pending.resume ? { resume: pending.resume } : {}),
      ...(pending.discoveredAt === undefined ? {} : { discoveredAt: pending.discoveredAt }),
      ...(pending.attempt === undefined ? {} : { attempt: pending.attempt }),
      ...(verdict.screening ? { screening: verdict.screening } : {}),
      ...(pending.previousAttempt ? { previousAttempt: pending.previousAttempt } : {}),
      ...upstreamOf(automation, task),
    });
  }

  /**
   * A worker's start: budget parks and baselines are read, and this host's runs that a dead
   * process left unfinished are closed (their sessions resume when the poller hands them back).
   * `inFlight`: runs this process still runs (a host back from a database cut), left alone.
   */
  async startWorker(inFlight?: (run: RunRecord) => boolean): Promise<RunRecord[]> {
    await this.s.loadBaselines();
    for (const feature of this.s.features) await feature.start?.();
    return recover(this.s, inFlight);
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
    const automation = this.s.settings.automations.find((a) => a.id === job.automationId);
    if (!automation) throw new StateError(`automation ${job.automationId} is not configured on this host`);
    const resume = job.resume ? await this.s.options.store.getSession(job.task.key) : undefined;
    const pending: Pending = {
      automation,
      ...(resume ? { resume } : {}),
      ...(job.discoveredAt === undefined ? {} : { discoveredAt: job.discoveredAt }),
      ...(job.attempt === undefined ? {} : { attempt: job.attempt }),
      ...(job.retryOf === undefined ? {} : { retryOf: job.retryOf }),
      ...(job.previousAttempt ? { previousAttempt: job.previousAttempt } : {}),
      ...(job.inputs ? { inputs: job.inputs } : {}),
    };
    let launched = false;
    const deps = this.s.executorDeps((run) => {
      if (run.status === 'running' && !launched) {
        launched = true;
        this.agentLaunched(automation, job.task, run);
      }
      onUpdate?.(run);
    });
    return this.gateAndExecute(
      deps,
      automation,
      job.task,
      pending,
      AbortSignal.any([this.s.runAbort.signal, signal]),
    );
  }

  private async pollFeed(feed: Feed): Promise<number> {
    let tasks: Task[];
    const pollStarted = Date.now();
    try {
      tasks = await feed.poll(this.s.pollContext());
    } catch (error) {
      for (const feature of this.s.features)
        feature.polled?.(feed.automation.id, pollStarted, 0, errorMessage(error));
      // The feed already chose when to poll again (see outcome.ts); here only a stop matters.
      if (classifyFailure(error, { stage: 'discovery', stopping: this.s.winding }).action === 'cancel')
        return 0;
      this.s.discoveryErrors.set(feed.automation.id, errorMessage(error));
      this.s.lastPolls.set(feed.automation.id, { at: this.s.options.clock.now(), found: 0 });
      this.s.options.log.warn(
        { automation: feed.automation.id, error: errorMessage(error) },
        `Discovery failed for ${feed.automation.id}`,
      );
      return 0;
    }
    this.s.discoveryErrors.delete(feed.automation.id);
    // Real time, not the engine's clock: it is compared with when git fetches started.
    const discoveredAt = Date.now();
    const inputs = this.s.triggerInputs.get(feed.automation.id);
    this.s.triggerInputs.delete(feed.automation.id);
    let offered = 0;
    for (const task of tasks) {
      const result = this.s.offer(feed.automation, task, { discoveredAt, ...(inputs ? { inputs } : {}) });
      if (result === 'queued' || result === 'busy') offered += 1;
      if (result === 'full') break;
    }
    this.s.lastPolls.set(feed.automation.id, { at: this.s.options.clock.now(), found: offered });
    for (const feature of this.s.features) feature.polled?.(feed.automation.id, pollStarted, tasks.length);
    return offered;
  }

  private dispatch(): void {
    while (!this.s.winding && !this.s.sizeReached) {
      const candidate = this.s.core.next((c) => {
        const pending = this.s.pending.get(c.task.key);
        if (!pending) return false;
        return holds(this.s, {
          automationId: c.automationId,
          provider: pending.automation.profile.provider,
          remediation: pending.remediation !== undefined,
        });
      });
      if (!candidate) return;
      const pending = this.s.pending.get(candidate.task.key);
      this.s.pending.delete(candidate.task.key);
      if (!pending) {
        this.s.core.finish(candidate.task.key);
        continue;
      }
      if (pending.remediation) {
        const automation =
          this.s.settings.automations.find((a) => a.id === candidate.automationId) ?? pending.automation;
        this.remediations.start(candidate.task, automation, pending.remediation);
        continue;
      }
      this.start(candidate.task, pending);
    }
  }

  private start(task: Task, pending: Pending): void {
    const { automation } = pending;
    this.s.started += 1;
    for (const feature of this.s.features) feature.dispatched?.(task, pending.retryOf);
    const info: RunningTask = {
      automationId: automation.id,
      repo: task.identity.repo,
      itemId: task.item.id,
      item: taskItemName(automation, task),
      title: task.item.title,
      status: 'preparing',
      startedAt: this.s.options.clock.now(),
    };
    const feed = this.s.feeds.find((f) => f.automation.id === automation.id);
    const cancel = new AbortController();
    const onUpdate = (run: RunRecord): void => {
      info.runId = run.id;
      if (run.status === 'running' && info.status !== 'running') this.agentLaunched(automation, task, run);
      info.status = run.status;
      if (!isTerminal(run.status)) this.s.emitStatus();
    };
    const { runner } = this.s.options;
    const execution = runner
      ? runner.run(
          dispatchedTask(automation, task, pending),
          { cancel: cancel.signal, stop: this.s.runAbort.signal },
          onUpdate,
        )
      : this.gateAndExecute(
          this.s.executorDeps(onUpdate, (reported) => {
            const entry = this.s.running.get(task.key);
            if (entry) entry.reported = reported;
          }),
          automation,
          task,
          pending,
          AbortSignal.any([this.s.runAbort.signal, cancel.signal]),
        );
    const done = execution
      .then((finished) =>
        finished ? this.settle(automation, task, finished, cancel.signal, feed) : undefined,
      )
      .catch((error: unknown) => {
        this.s.options.log.error(
          { automation: automation.id, id: task.item.id, error: errorMessage(error) },
          'Run could not be recorded',
        );
      })
      .then(async () => {
        for (const feature of this.s.features) await feature.finished?.(automation.id, task);
      })
      .then(() => feed?.runFinished(task, this.s.pollContext()))
      // Only now is the fleet's dispatch settled: a poller killed before this does it again.
      .then(() => this.s.options.runner?.settled?.(task.key))
      .catch((error: unknown) => {
        this.s.options.log.error(
          { automation: automation.id, error: errorMessage(error) },
          'Could not update the schedule state',
        );
      })
      .finally(() => {
        this.s.running.delete(task.key);
        this.reconciler.ended(task.key);
        this.s.core.finish(task.key);
        if (this.s.changedWhileRunning.delete(task.key) && feed) feed.nextPollAt = 0;
        this.control.freed(task.key);
        this.s.wakeup.wake();
      });
    this.s.running.set(task.key, { task, automation, info, done, cancel });
    this.s.emitStatus();
  }

  /** A run finished: its outcome through every feature, then the kernel's own follow-up. */
  private async settle(
    automation: ResolvedAutomation,
    task: Task,
    finished: RunRecord,
    cancelled: AbortSignal,
    feed: Feed | undefined,
  ): Promise<void> {
    const noted = cancelled.aborted ? await this.control.noteCancelled(finished) : { run: finished };
    const outcome: RunOutcome = {
      automation,
      task,
      run: noted.run,
      renoted: noted.run !== finished,
      ...(noted.by ? { cancelledBy: noted.by } : {}),
    };
    for (const feature of this.s.features)
      if (feature.runEnded) outcome.run = await feature.runEnded(outcome);
    for (const feature of this.s.features) await feature.afterRun?.(outcome);
    this.s.runs.push(outcome.run);
    this.s.options.onRun?.(outcome.run);
    await this.afterRun(automation, task, outcome.run, feed);
  }

  /** The agent started: for `once`, the item counts as handled from now on. */
  private agentLaunched(automation: ResolvedAutomation, task: Task, run: RunRecord): void {
    for (const feature of this.s.features) feature.launched?.(automation, task, run);
    if (!automation.config.once) return;
    this.s.options.store
      .recordItemKeys(automation.id, [
        { itemKey: memoryKey(automation, task), runId: run.id, skipped: false },
      ])
      .catch((error: unknown) => {
        this.s.options.log.error(
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
      this.s.options.mode === 'watch' &&
      run.startedAt === null &&
      run.status !== 'blocked' &&
      run.status !== 'skipped' &&
      run.status !== 'escalated' &&
      feed?.forget &&
      automation.config.once
    ) {
      feed.forget(task);
    }
    for (const other of this.s.feeds) other.settled?.(automation.id);
    await this.prune(automation.id);
  }

  /**
   * Keeps the last `history_limit` runs of an automation; older runs go with their transcripts. The
   * ledger is counted once per automation, then the count is kept here, so a run costs a prune only
   * when its automation is over the limit (not a scan of its whole history every time).
   */
  private async prune(automationId: string): Promise<void> {
    const { store } = this.s.options;
    const limit = this.s.settings.execution.history_limit;
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
    while (this.s.running.size > 0) {
      await Promise.race([...[...this.s.running.values()].map((r) => r.done), this.stopped]);
      if (this.s.stopping) {
        await this.shutdown();
        return;
      }
      this.dispatch();
    }
  }

  private async shutdown(): Promise<void> {
    if (this.s.running.size > 0 && !this.s.runAbort.signal.aborted) {
      // A fleet poller's tasks run on workers: only its own remediation runs have agents here.
      const runs = [...this.s.running.values()];
      const agents = this.s.options.runner ? runs.filter((r) => r.remediation).length : runs.length;
      if (agents > 0)
        this.s.options.log.warn(
          { running: agents },
          'Stopping: ending running agents; their sessions resume on the next start',
        );
      if (agents < runs.length)
        this.s.options.log.info(
          { dispatched: runs.length - agents },
          'Stopping: dispatched tasks keep running on their workers; the next poller takes them over',
        );
      this.s.runAbort.abort();
    }
    this.s.emitStatus();
    while (this.s.running.size > 0) await Promise.race([...this.s.running.values()].map((r) => r.done));
  }

  async run(): Promise<EngineResult> {
    try {
      return await this.runLoops();
    } finally {
      // Teardown in reverse order: what started first (telemetry) stops last.
      for (const feature of [...this.s.features].reverse()) await feature.stop?.();
    }
  }

  private async runLoops(): Promise<EngineResult> {
    for (const id of await this.s.options.store.listPaused()) {
      this.s.paused.add(id);
      const reason = await this.s.options.store.getMeta(pauseReasonKey(id));
      if (reason) this.s.pauseReasons.set(id, reason);
    }
    await this.s.loadBaselines();
    for (const feature of this.s.features) await feature.start?.();
    const interrupted = await recover(this.s);
    for (const automation of this.s.settings.automations) await this.prune(automation.id);
    for (const feed of this.s.feeds) await feed.start?.(this.s.pollContext());
    // A poller taking over: what ran under the previous one counts as dispatched, and what it
    // handed out is awaited, never sent again.
    for (const job of (await this.s.options.runner?.dispatched?.()) ?? []) {
      const feed = this.s.feeds.find((f) => f.automation.id === job.automationId);
      if (feed?.eventDriven) feed.markDispatched(job.task);
    }
    for (const job of (await this.s.options.runner?.adopt?.()) ?? []) {
      const automation = this.s.settings.automations.find((a) => a.id === job.automationId);
      if (automation) this.s.offer(automation, job.task);
    }
    await resumeSessions(this.s);
    const resumed = (taskKey: string): boolean => this.s.pending.has(taskKey);
    for (const feature of this.s.features) await feature.started?.(interrupted, resumed);
    if (this.s.options.mode === 'drain') await this.drain();
    else await this.watch();
    if (this.s.stopping) await this.shutdown();
    else await this.waitForRunning();
    this.remediations.release();
    this.s.core.clearQueue();
    return {
      runs: this.s.runs,
      stoppedEarly: this.s.winding,
      discoveryErrors: [...this.s.discoveryErrors].map(([automationId, message]) => ({
        automationId,
        message,
      })),
      waiting: this.s.feeds
        .filter((f) => (f.waiting ?? 0) > 0)
        .map((f) => ({ automationId: f.automation.id, count: f.waiting ?? 0 })),
      held: this.s.held,
    };
  }

  private async drain(): Promise<void> {
    this.dispatch();
    for (;;) {
      let offered = 0;
      // A full queue cuts a round short; the round after the queue drains polls the rest.
      let cutShort = false;
      for (const feed of this.s.feeds) {
        if (this.s.winding || this.s.sizeReached) break;
        if (this.s.core.capacity === 0) {
          cutShort = true;
          break;
        }
        if (skips(this.s, feed)) continue;
        offered += await this.pollFeed(feed);
        this.dispatch();
      }
      if (this.s.winding) return;
      while (this.s.running.size > 0 || (this.s.core.queuedCount > 0 && !this.s.sizeReached)) {
        this.dispatch();
        if (this.s.running.size === 0) break;
        await this.s.wakeup.wait(60_000, this.s.options.clock);
        if (this.s.winding) return;
      }
      if ((offered === 0 && !cutShort) || this.s.sizeReached) return;
    }
  }

  private async watch(): Promise<void> {
    const { clock } = this.s.options;
    const reloadEvery = this.s.options.reloadIntervalMs ?? 1000;
    while (!this.s.winding && !this.s.sizeReached) {
      this.reloader.maybeReload();
      await this.s.loadBaselines();
      for (const feature of this.s.features) await feature.beforePoll?.();
      this.dispatch();
      for (const feed of this.s.feeds) {
        if (this.s.winding || this.s.sizeReached) break;
        if (feed.nextPollAt > clock.now() || this.s.core.capacity === 0 || skips(this.s, feed)) continue;
        this.s.forced.delete(feed.automation.id);
        await this.pollFeed(feed);
        this.dispatch();
      }
      this.dispatch();
      if (this.s.winding || this.s.sizeReached) break;
      await this.reconciler.reconcile().catch((error: unknown) => {
        this.s.options.log.warn({ error: errorMessage(error) }, 'Could not check the items of active tasks');
      });
      await this.maybeMaintain();
      for (const feature of this.s.features) await feature.tick?.();
      // A full queue polls nothing (see above) until a run ends, which wakes this loop: a feed
      // already due must not make the wait 0 and spin the loop meanwhile. The status still shows
      // when each feed is due.
      const due = this.s.feeds.filter((f) => !skips(this.s, f)).map((f) => f.nextPollAt);
      const others = Math.min(
        this.reconciler.nextAt(),
        ...this.s.features.map((f) => f.wakeAt?.(clock.now()) ?? Number.POSITIVE_INFINITY),
      );
      const nextPoll = Math.min(...(this.s.core.capacity > 0 ? due : []), others);
      const shown = Math.min(...due, others);
      // Emitted whether or not anyone waits on the round (an optional call would skip its argument).
      const status = this.s.emitStatus(Number.isFinite(shown) ? shown : undefined);
      this.s.options.onTick?.(status);
      const until = Math.min(
        nextPoll,
        this.s.options.reload ? clock.now() + reloadEvery : Number.POSITIVE_INFINITY,
      );
      await this.s.wakeup.wait(Number.isFinite(until) ? until - clock.now() : 60_000, clock);
    }
  }

  /**
   * git's housekeeping for the checkouts, at most once an hour, only while nothing runs or waits:
   * runs keep it out of their path (a fetch would otherwise start `git maintenance run --auto`).
   */
  private async maybeMaintain(): Promise<void> {
    if (this.s.running.size > 0 || this.s.core.queuedCount > 0) return;
    if (Date.now() - this.lastMaintenance < MAINTENANCE_INTERVAL_MS) return;
    this.lastMaintenance = Date.now();
    const checkouts = new Set(this.s.settings.automations.map((a) => a.repository.checkoutPath));
    await maintainCheckouts([...checkouts]);
  }
}

/** A candidate waits in the queue: a remediation of a paused automation, or a feature holds it. */
function holds(s: KernelState, candidate: Candidate): boolean {
  if (candidate.remediation && s.isPaused(candidate.automationId)) return true;
  return s.features.some((f) => f.holds?.(candidate) === true);
}

/**
 * A paused (or disabled) feed is not polled, unless an operator asked to run it now; a feed
 * parked by its budget is not polled until the next UTC day.
 */
function skips(s: KernelState, feed: Feed): boolean {
  const id = feed.automation.id;
  return (s.isPaused(id) && !s.forced.has(id)) || s.features.some((f) => f.parks?.(id) === true);
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
    ...(pending.inputs ? { inputs: pending.inputs } : {}),
  };
}

/** The run a task follows (chains), for its run record. */
function upstreamOf(automation: ResolvedAutomation, task: Task): { upstreamRunId?: string } {
  const upstreamRunId = automation.trigger.upstreamRunId(task);
  return upstreamRunId === undefined ? {} : { upstreamRunId };
}
