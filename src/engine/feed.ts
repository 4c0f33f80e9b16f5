/**
 * Feeds turn triggers into tasks. An event feed polls its source with the seed's backoff and
 * remembers (per automation, per process) the fingerprints it dispatched; a schedule feed checks
 * the clock, claims due occurrences in the store (coalescing overdue ticks into one) and routes late
 * fires through the `missed` policy.
 */
import { createHash } from 'node:crypto';
import type { ResolvedAutomation } from '../config/types.js';
import { classifyFailure, nextPollAfterFailure } from '../core/outcome.js';
import { decideMissed, dueOccurrence, MISSED_THRESHOLD_MS, parseScheduleDate } from '../core/schedule.js';
import type { Item, Task } from '../core/types.js';
import type { CronState } from '../store/types.js';
import type { TriggerSource } from '../triggers/source.js';
import type { Feed, PollContext, ScheduleSpec } from '../triggers/types.js';
import { Backoff } from './backoff.js';
import { neverEligible } from './eligibility.js';
import { IdleGate } from './idle-gate.js';
import { baselineInfo, baselineState, takeBaseline, unremembered, usesMemory } from './memory.js';
import { recordSkippedRun, taskFromItem } from './task.js';

export type { Feed, PollContext };

/** How many matches the first poll of an `ignore_backlog` automation records (GitHub Search's cap). */
export const BACKLOG_LIMIT = 1000;

export class EventFeed implements Feed {
  readonly eventDriven = true;
  nextPollAt = 0;
  waiting = 0;
  matching: number | undefined;
  /** With item memory (`once`, `ignore_backlog`): whether the baseline is taken, and when. */
  baseline: { set: boolean; at: string | null } | undefined;
  private readonly seen = new Set<string>();
  /** Task key of each dispatched fingerprint (to forget a task whatever its text was). */
  private readonly keys = new Map<string, string>();
  private readonly backoff: Backoff;
  /** Skips the search of an idle poll (idle-gate.ts), for sources that offer a change probe. */
  private gate: IdleGate | undefined;
  /** Set when a task was forgotten: the next poll searches whatever the probe says. */
  private mustSearch = false;
  /** Fingerprints the last poll returned that the engine has not taken yet (a full queue, a busy task). */
  private readonly offered = new Set<string>();
  /** Task keys of every item the last search saw matching, new or already dispatched. */
  private matched = new Set<string>();
  /** When those items were last known to match (epoch ms). */
  private matchedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly automation: ResolvedAutomation,
    private readonly source: TriggerSource,
    pollIntervalSeconds: number,
    /** Longest time without a full search (ms); undefined: no change probe, every poll searches. */
    private readonly maxStalenessMs?: number,
  ) {
    this.backoff = new Backoff(pollIntervalSeconds);
  }

  /** Searches skipped because GitHub said nothing changed (a 304 to the change probe). */
  get idleSkips(): number {
    return this.gate?.skipped ?? 0;
  }

  /** True when this poll may skip the search: nothing changed, nothing waits, the last search is fresh. */
  private async idle(context: PollContext, baselineCurrent: boolean): Promise<boolean> {
    if (!this.source.probe || this.maxStalenessMs === undefined) return false;
    this.gate ??= new IdleGate(this.source.probe, this.maxStalenessMs, context.clock);
    const force = !baselineCurrent || this.mustSearch || this.waiting > 0 || this.offered.size > 0;
    return this.gate.unchanged(force, context.signal);
  }

  /** Reads the baseline's state from the store (for the board, before the first poll). */
  async loadBaseline(store: PollContext['store']): Promise<void> {
    if (usesMemory(this.automation)) this.baseline = await baselineInfo(store, this.automation);
  }

  async poll(context: PollContext): Promise<Task[]> {
    const memory = usesMemory(this.automation);
    const baseline = memory ? await baselineState(context.store, this.automation) : 'current';
    const limit = baseline === 'current' ? context.limit : Math.max(context.limit, BACKLOG_LIMIT);
    const probedAt = context.clock.now();
    if (!context.preview && (await this.idle(context, baseline === 'current'))) {
      // Nothing changed since the last search: what it saw matching still matches.
      this.matchedAt = probedAt;
      this.nextPollAt = context.clock.now() + this.backoff.next(false);
      return [];
    }
    const searchStartedAt = context.clock.now();
    this.mustSearch = false;
    let items: Item[];
    let report: { matching: number; examined: number } | undefined;
    const matched = new Set<string>();
    try {
      items = await this.source.discover({
        limit,
        ...(context.signal ? { signal: context.signal } : {}),
        // Page past what this process already dispatched (the baseline poll must see everything).
        ...(baseline === 'current'
          ? {
              wanted: (item: Item) => {
                const task = taskFromItem(this.automation, item);
                matched.add(task.key);
                return !this.seen.has(task.fingerprint);
              },
            }
          : {}),
        onTotal: (r) => {
          report = r;
        },
      });
    } catch (error) {
      // Timed from when the failure came back: a slow failing request must not make the next poll immediate.
      this.mustSearch = true;
      const outcome = classifyFailure(error, { stage: 'discovery' });
      this.nextPollAt = nextPollAfterFailure(outcome, context.clock.now() + this.backoff.next(false));
      throw error;
    }
    this.gate?.searched(searchStartedAt);
    this.waiting = report ? Math.max(0, report.matching - report.examined) : 0;
    this.matching = report?.matching;
    let tasks = items
      .filter((item) => !neverEligible(item))
      .map((item) => taskFromItem(this.automation, item));
    if (!context.preview) {
      for (const task of tasks) matched.add(task.key);
      this.matched = matched;
      this.matchedAt = searchStartedAt;
    }
    if (baseline !== 'current') {
      const ignoreBacklog = this.automation.config.ignore_backlog;
      if (!context.preview) {
        const at = new Date(context.clock.now()).toISOString();
        const skipped = await takeBaseline(context.store, this.automation, tasks, at);
        this.baseline = { set: true, at };
        if (skipped > 0) {
          context.log.info(
            { automation: this.automation.id, skipped },
            'Recorded the backlog as skipped (ignore_backlog)',
          );
        }
      }
      // With ignore_backlog, everything matching at the first poll is backlog (a preview records nothing).
      if (ignoreBacklog) tasks = [];
    }
    if (memory && tasks.length > 0) tasks = await unremembered(context.store, this.automation, tasks);
    tasks = tasks.filter((task) => !this.seen.has(task.fingerprint));
    this.offered.clear();
    for (const task of tasks) this.offered.add(task.fingerprint);
    this.nextPollAt = context.clock.now() + this.backoff.next(tasks.length > 0);
    return tasks;
  }

  matchedSince(taskKey: string, since: number): boolean {
    return this.matchedAt >= since && this.matched.has(taskKey);
  }

  markDispatched(task: Task): void {
    this.offered.delete(task.fingerprint);
    this.seen.add(task.fingerprint);
    this.keys.set(task.fingerprint, task.key);
  }

  /** A launch that never started the agent is retried on the next poll (item memory only). */
  forget(task: Task): void {
    this.seen.delete(task.fingerprint);
    this.mustSearch = true;
  }

  searchNow(): void {
    this.mustSearch = true;
  }

  /** Offers the task with this key again on the next poll; false when it was never dispatched. */
  forgetKey(key: string): boolean {
    let found = false;
    for (const [fingerprint, taskKey] of this.keys) {
      if (taskKey !== key || !this.seen.has(fingerprint)) continue;
      this.seen.delete(fingerprint);
      found = true;
    }
    if (found) this.mustSearch = true;
    return found;
  }

  async runFinished(): Promise<void> {}
}

/** Hash of what decides a schedule: a change resets its marks. */
export function scheduleHash(schedule: ScheduleSpec): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        schedule.expr,
        schedule.timezone,
        String(schedule.startDate ?? ''),
        String(schedule.endDate ?? ''),
      ]),
    )
    .digest('hex')
    .slice(0, 16);
}

/** A feed that fires from a schedule (its trigger reads the schedule from its table). */
export class ScheduleFeed implements Feed {
  nextPollAt = 0;
  private emitted: string | undefined;

  constructor(
    readonly automation: ResolvedAutomation,
    private readonly schedule: ScheduleSpec,
    private readonly intervalSeconds: number,
  ) {}

  private window(): { start?: Date; end?: Date } {
    const { startDate, endDate, timezone } = this.schedule;
    return {
      ...(startDate === undefined ? {} : { start: parseScheduleDate(startDate, timezone, 'start') }),
      ...(endDate === undefined ? {} : { end: parseScheduleDate(endDate, timezone, 'end') }),
    };
  }

  private async state(context: PollContext, nowIso: string): Promise<CronState> {
    const hash = scheduleHash(this.schedule);
    const existing = await context.store.getCronState(this.automation.id);
    if (existing && existing.configHash === hash) return existing;
    // First sight of a schedule (kept in the state across restarts): the missed-run policy applies
    // only to fires after it, so a daily 03:00 added at 08:08 does not fire that day's 03:00. A fire
    // still on time at first sight runs (it is not missed); `start_date` opens the window earlier.
    // A changed schedule starts from now.
    const createdAt = existing ? nowIso : new Date(Date.parse(nowIso) - MISSED_THRESHOLD_MS).toISOString();
    const fresh: CronState = {
      automationId: this.automation.id,
      createdAt,
      lastScheduledFor: null,
      pendingScheduledFor: null,
      lastExecutionAt: existing?.lastExecutionAt ?? null,
      configHash: hash,
    };
    if (!context.preview) await context.store.putCronState(fresh);
    return fresh;
  }

  async poll(context: PollContext): Promise<Task[]> {
    const nowMs = context.clock.now();
    this.nextPollAt = nowMs + this.intervalSeconds * 1000;
    const now = new Date(nowMs);
    const state = await this.state(context, now.toISOString());
    const { start, end } = this.window();
    const occurrence = dueOccurrence({
      expr: this.schedule.expr,
      timezone: this.schedule.timezone,
      ...(start ? { startDate: start } : {}),
      ...(end ? { endDate: end } : {}),
      state,
      now,
    });
    if (!occurrence) return [];
    const claimed = state.pendingScheduledFor !== null;
    const decision = claimed
      ? { action: 'run' as const, missed: false, lateMs: 0 }
      : decideMissed(this.schedule.missed ?? 'run', occurrence, now);
    const task = taskFromItem(this.automation, this.schedule.item(occurrence, decision.missed));
    if (context.preview) return decision.action === 'run' ? [task] : [];
    if (decision.action === 'skip') {
      await this.recordSkippedMiss(context, task, decision.lateMs);
      await context.store.putCronState({
        ...state,
        lastScheduledFor: occurrence.toISOString(),
        pendingScheduledFor: null,
      });
      return [];
    }
    if (!claimed)
      await context.store.putCronState({ ...state, pendingScheduledFor: occurrence.toISOString() });
    if (this.emitted === task.key) return [];
    return [task];
  }

  private async recordSkippedMiss(context: PollContext, task: Task, lateMs: number): Promise<void> {
    const runId = await recordSkippedRun(
      context.store,
      this.automation,
      task,
      `missed: the ${task.item.scheduledFor} fire was noticed ${Math.round(lateMs / 1000)} s late (curupira was stopped or the machine slept); missed = "skip"`,
      new Date(context.clock.now()).toISOString(),
    );
    context.log.warn(
      { automation: this.automation.id, scheduledFor: task.item.scheduledFor, run: runId },
      'Skipped a missed scheduled run',
    );
  }

  fire(at: Date): Task {
    return taskFromItem(this.automation, this.schedule.item(at, false));
  }

  markDispatched(task: Task): void {
    this.emitted = task.key;
  }

  async runFinished(task: Task, context: PollContext): Promise<void> {
    const state = await context.store.getCronState(this.automation.id);
    if (!state || state.pendingScheduledFor !== task.item.scheduledFor) return;
    await context.store.putCronState({
      ...state,
      lastScheduledFor: state.pendingScheduledFor,
      pendingScheduledFor: null,
      lastExecutionAt: new Date(context.clock.now()).toISOString(),
    });
    this.emitted = undefined;
  }
}
