/**
 * What the engine keeps to look after runs nobody watches (issue 15): retries waiting for their
 * backoff, providers parked by a usage limit, and the auto-pause rule. The engine asks and tells;
 * nothing here starts a run. Times are epoch ms on the engine's clock.
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { FAILED_STATUSES, isFailure, type RunRecord, type Task } from '../core/types.js';
import type { Store } from '../store/types.js';
import { clockTime, describeRetry, maxAttempts } from './retry.js';

/** A task waiting to run again: a retry after a failure, or a parked run waiting for its reset. */
export interface ScheduledRetry {
  kind: 'retry' | 'parked';
  automationId: string;
  task: Task;
  /** The run that asked for it (its `retryAt` is cleared when the task starts again). */
  runId: string;
  /** The try the next run will be (a parked run's next run keeps its try). */
  attempt: number;
  maxAttempts: number;
  at: number;
}

/** Something an operator may want to hear about (notifications plug in through `onEvent`). */
export type EngineEvent =
  | { kind: 'retry_scheduled'; run: RunRecord; attempt: number; maxAttempts: number; at: number }
  | { kind: 'provider_parked'; provider: string; until: number; run: RunRecord }
  | { kind: 'automation_paused'; automationId: string; reason: string };

export class RetryBook {
  private readonly waiting = new Map<string, ScheduledRetry>();
  private readonly parked = new Map<string, number>();

  schedule(retry: ScheduledRetry): void {
    this.waiting.set(retry.task.key, retry);
  }

  has(taskKey: string): boolean {
    return this.waiting.has(taskKey);
  }

  /** Forgets a task's retry (it started again some other way); returns it. */
  cancel(taskKey: string): ScheduledRetry | undefined {
    const retry = this.waiting.get(taskKey);
    this.waiting.delete(taskKey);
    return retry;
  }

  /** Retries due at `now`, soonest first (still in the book until `cancel`). */
  due(now: number): ScheduledRetry[] {
    return [...this.waiting.values()].filter((r) => r.at <= now).sort((a, b) => a.at - b.at);
  }

  list(automationId?: string): ScheduledRetry[] {
    return [...this.waiting.values()]
      .filter((r) => automationId === undefined || r.automationId === automationId)
      .sort((a, b) => a.at - b.at);
  }

  /** Parks a provider until `until` (a later park wins). */
  park(provider: string, until: number): void {
    this.parked.set(provider, Math.max(until, this.parked.get(provider) ?? 0));
  }

  /** When `provider` may run again, if it is parked at `now`. */
  parkedUntil(provider: string, now: number): number | undefined {
    const until = this.parked.get(provider);
    if (until === undefined) return undefined;
    if (until > now) return until;
    this.parked.delete(provider);
    return undefined;
  }

  parkedProviders(now: number): { provider: string; until: number }[] {
    return [...this.parked.keys()]
      .map((provider) => ({ provider, until: this.parkedUntil(provider, now) }))
      .filter((p): p is { provider: string; until: number } => p.until !== undefined);
  }

  /**
   * The soonest time something here needs the engine after `now`: a retry coming due (not one
   * `waits` holds back, e.g. of a paused automation), or a provider's reset. A retry already due
   * but not offered yet (the queue was full) is looked at again a second later.
   */
  nextAt(now: number, waits: (retry: ScheduledRetry) => boolean = () => false): number {
    const retries = [...this.waiting.values()]
      .filter((r) => !waits(r))
      .map((r) => Math.max(r.at, now + 1000));
    const resets = this.parkedProviders(now).map((p) => p.until);
    return Math.min(...retries, ...resets, Number.POSITIVE_INFINITY);
  }
}

/** `retry 2/3 at 14:05:30` or `parked until 15:00:00`. */
export function describeScheduled(retry: ScheduledRetry, timeZone = 'UTC'): string {
  return retry.kind === 'parked'
    ? `parked until ${clockTime(retry.at, timeZone)}`
    : describeRetry(retry, timeZone);
}

/** What a run's `retryAt` means, for `runs` and the board (undefined when nothing is due). */
export function pendingNote(run: RunRecord, maxAttempts?: number, timeZone = 'UTC'): string | undefined {
  if (!run.retryAt) return undefined;
  const at = Date.parse(run.retryAt);
  if (run.status === 'parked') return `parked until ${clockTime(at, timeZone)}`;
  const attempt = (run.attempt ?? 1) + 1;
  return maxAttempts === undefined
    ? `retry ${attempt} at ${clockTime(at, timeZone)}`
    : describeRetry({ attempt, maxAttempts, at }, timeZone);
}

export function pauseAfterFailures(settings: Settings, automation: ResolvedAutomation): number {
  return automation.config.pause_after_failures ?? settings.execution.pause_after_failures;
}

/**
 * Auto-pause: the reason to pause `automation` when its last `pause_after_failures` finished runs
 * (succeeded or failed; blocked, skipped, cancelled, parked and escalated runs are left out) all
 * failed; undefined when it should go on.
 */
export async function autoPauseReason(
  store: Store,
  settings: Settings,
  automation: ResolvedAutomation,
): Promise<string | undefined> {
  const limit = pauseAfterFailures(settings, automation);
  if (limit <= 0) return undefined;
  const last = await store.listRuns({
    automationId: automation.id,
    status: [...FAILED_STATUSES, 'succeeded', 'merged'],
    limit,
  });
  if (last.length < limit || !last.every((run) => isFailure(run.status))) return undefined;
  return `paused automatically: its last ${limit} runs all failed (pause_after_failures = ${limit}), the last ${last[0]!.id} (${last[0]!.status}); \`curupira resume ${automation.id}\` or Resume on the board runs it again`;
}

export { pauseReasonKey } from '../core/types.js';

/**
 * At start: runs whose task was to run again by itself (a retry a previous process scheduled, a
 * parked run) are scheduled again, and parked providers stay parked until their reset. A task with
 * no saved session is left to its trigger (the next poll finds it), and its run's time cleared, as
 * are those of runs whose automation is gone: `runs` and the board never show a retry that no one
 * will start. A one-shot `run` does not wait
 * for a backoff: its retries are due at once (the next `curupira run` is the retry).
 */
export async function loadPendingRetries(
  book: RetryBook,
  context: { store: Store; settings: Settings; mode: 'drain' | 'watch'; now: number },
): Promise<void> {
  const { store, settings, now } = context;
  for (const run of await store.listRuns({ retryPending: true, limit: Number.POSITIVE_INFINITY })) {
    const automation = settings.automations.find((a) => a.id === run.automationId);
    const at = Date.parse(run.retryAt ?? '');
    const parked = run.status === 'parked';
    if (automation && parked && at > now) book.park(automation.profile.provider, at);
    const session =
      automation && !book.has(run.taskKey) && Number.isFinite(at)
        ? await store.getSession(run.taskKey)
        : undefined;
    if (!automation || !session) {
      // Nothing runs it again by itself (its automation is gone, another run of its task holds the
      // retry, or no session was saved and its trigger will find it): its time is not shown again.
      // Only what `runs` and the board show: a store that fails now (a fleet's database coming
      // back) must not stop the start, and the next start clears it.
      await store.updateRun(run.id, { retryAt: null }).catch(() => undefined);
      continue;
    }
    book.schedule({
      kind: parked ? 'parked' : 'retry',
      automationId: automation.id,
      task: session.task,
      runId: run.id,
      attempt: (run.attempt ?? 1) + (parked ? 0 : 1),
      maxAttempts: maxAttempts(settings, automation),
      at: context.mode === 'drain' && !parked ? now : at,
    });
  }
}
