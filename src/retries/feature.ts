/**
 * Unattended runs (issue 15) as a feature: a failed, timed-out or stalled run is retried after
 * its backoff (watch mode, while tries are left and the item is not escalated); a run parked by a
 * provider's usage limit parks that provider and reruns its task at the reset; an automation whose
 * last `pause_after_failures` runs all failed is paused.
 */
import type { ResolvedAutomation } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import type { Feature, KernelPort, RunOutcome } from '../core/feature.js';
import { isFailure, type RunRecord, type Task } from '../core/types.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { taskItemName } from '../triggers/registry.js';
import { maxAttempts, planRetry } from './retry.js';
import {
  autoPauseReason,
  describeScheduled,
  type EngineEvent,
  loadPendingRetries,
  RetryBook,
} from './unattended.js';

export interface RetriesOptions {
  port: KernelPort;
  store: Store;
  log: Logger;
  /** The backoff's jitter source, a number in [0, 1) (default Math.random; tests fix it). */
  random?: () => number;
  /** Retries scheduled, providers parked, automations paused automatically. */
  onEvent?(event: EngineEvent): void;
}

export interface RetriesStatus {
  retries: { itemId: string; item: string; note: string; at: number }[];
  parkedUntil: number;
}

export class RetriesFeature implements Feature<never, RetriesStatus> {
  readonly name = 'retries';
  /** Retries waiting for their backoff, and providers parked by a usage limit. */
  readonly book = new RetryBook();

  constructor(private readonly options: RetriesOptions) {}

  async start(): Promise<void> {
    const { store, port } = this.options;
    await loadPendingRetries(this.book, {
      store,
      settings: port.settings(),
      mode: port.mode,
      now: port.clock.now(),
    });
  }

  async started(): Promise<void> {
    if (this.options.port.mode === 'drain') await this.offerDue();
  }

  /** A task starts: a retry waiting for it is done (or superseded), and its run's `retryAt` cleared. */
  dispatched(task: Task, retryOf: string | undefined): void {
    const superseded = this.book.cancel(task.key);
    for (const runId of new Set([retryOf, superseded?.runId])) {
      if (runId === undefined) continue;
      this.options.store.updateRun(runId, { retryAt: null }).catch((error: unknown) => {
        this.options.log.warn({ run: runId, error: errorMessage(error) }, 'Could not clear a retry time');
      });
    }
  }

  /**
   * After a run: a parked run parks its provider until the reset and (watching) reruns its task
   * then; a failed, timed-out or stalled run is retried after its backoff, in watch mode, while
   * tries are left and the failure budget did not escalate the item. Returns the run as recorded.
   */
  async runEnded({ automation, task, run }: RunOutcome): Promise<RunRecord> {
    const { store, log, port } = this.options;
    const now = port.clock.now();
    const fields = { automation: automation.id, id: task.item.id, run: run.id };
    const settings = port.settings();
    if (run.status === 'parked' && run.retryAt) {
      const until = Date.parse(run.retryAt);
      const provider = automation.profile.provider;
      this.book.park(provider, until);
      if (port.mode === 'watch')
        this.book.schedule({
          kind: 'parked',
          automationId: automation.id,
          task,
          runId: run.id,
          attempt: run.attempt ?? 1,
          maxAttempts: maxAttempts(settings, automation),
          at: until,
        });
      log.warn(
        { ...fields, provider, until: run.retryAt },
        'Provider usage limit: its runs are parked until the reset',
      );
      this.options.onEvent?.({ kind: 'provider_parked', provider, until, run });
      return run;
    }
    if (port.mode !== 'watch' || port.winding()) return run;
    const escalated = (await store.getItemFailures(task.key))?.escalatedAt != null;
    const plan = planRetry({
      run,
      maxAttempts: maxAttempts(settings, automation),
      escalated,
      now,
      random: (this.options.random ?? Math.random)(),
    });
    if (!plan) return run;
    const updated = await store.updateRun(run.id, { retryAt: new Date(plan.at).toISOString() });
    this.book.schedule({ kind: 'retry', automationId: automation.id, task, runId: run.id, ...plan });
    log.info({ ...fields, attempt: plan.attempt, at: updated.retryAt }, 'Retrying the task after a backoff');
    this.options.onEvent?.({ kind: 'retry_scheduled', run: updated, ...plan });
    return updated;
  }

  /** Pauses an automation whose last `pause_after_failures` runs all failed. */
  async afterRun({ automation, run }: RunOutcome): Promise<void> {
    if (!isFailure(run.status)) return;
    const { port, store, log } = this.options;
    if (port.paused(automation.id)) return;
    const reason = await autoPauseReason(store, port.settings(), automation);
    if (!reason) return;
    await port.pause(automation.id, reason);
    log.warn({ automation: automation.id, reason }, 'Automation paused after repeated failures');
    this.options.onEvent?.({ kind: 'automation_paused', automationId: automation.id, reason });
  }

  beforePoll(): Promise<void> {
    return this.offerDue().catch((error: unknown) => {
      this.options.log.warn({ error: errorMessage(error) }, 'Could not offer the retries due');
    });
  }

  /** Offers the retries that are due (not of paused automations: they wait for a resume). */
  private async offerDue(): Promise<void> {
    const { port, store } = this.options;
    for (const retry of this.book.due(port.clock.now())) {
      const automation = port.settings().automations.find((a) => a.id === retry.automationId);
      if (!automation) {
        this.book.cancel(retry.task.key);
        continue;
      }
      if (port.paused(automation.id) || port.capacity() === 0) continue;
      const session = await store.getSession(retry.task.key);
      // The retry keeps the inputs of the run it follows (`run --set`, a trigger's, the API's).
      const inputs = (await store.getRun(retry.runId))?.inputs;
      const result = port.offer(automation.id, session?.task ?? retry.task, {
        ...(session ? { resume: session } : {}),
        retry: { attempt: retry.attempt, retryOf: retry.runId },
        ...(inputs ? { inputs } : {}),
      });
      if (result !== 'full') this.book.cancel(retry.task.key);
    }
  }

  wakeAt(now: number): number {
    return this.book.nextAt(now, (r) => this.options.port.paused(r.automationId));
  }

  holds(candidate: { provider: string }): boolean {
    return this.book.parkedUntil(candidate.provider, this.options.port.clock.now()) !== undefined;
  }

  defers(taskKey: string): boolean {
    return this.book.has(taskKey);
  }

  status(automation: ResolvedAutomation): Partial<RetriesStatus> {
    const retries = this.book.list(automation.id).map((r) => ({
      itemId: r.task.item.id,
      item: taskItemName(automation, r.task),
      note: describeScheduled(r),
      at: r.at,
    }));
    const parkedUntil = this.book.parkedUntil(automation.profile.provider, this.options.port.clock.now());
    return {
      ...(retries.length > 0 ? { retries } : {}),
      ...(parkedUntil === undefined ? {} : { parkedUntil }),
    };
  }

  engineStatus(): { parked: { provider: string; until: number }[]; retrying: number } {
    return {
      parked: this.book.parkedProviders(this.options.port.clock.now()),
      retrying: this.book.list().length,
    };
  }
}
