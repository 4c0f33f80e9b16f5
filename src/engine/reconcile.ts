/**
 * Reconciliation (watch mode): once per poll interval, while an automation has tasks queued or
 * running, the trigger reads their items again. An item closed, deleted or no longer matching
 * drops its queued task (recorded as cancelled) and stops its running agent through the same
 * per-run cancel the board uses (`on_unmatch = "stop"`), or lets it finish (`"finish"`).
 */

import type { ResolvedAutomation } from '../config/types.js';
import { RUN_CANCELLED } from '../core/outcome.js';
import type { Task } from '../core/types.js';
import type { Feed } from './feed.js';
import type { KernelState } from './state.js';
import { runInit } from './task.js';

export class Reconciler {
  /** When each automation's active tasks are checked next (epoch ms, engine clock). */
  private readonly reconcileAt = new Map<string, number>();
  /** Why a running task is being stopped (its item closed or stopped matching), by task key. */
  private readonly stopReasons = new Map<string, string>();
  /** Running tasks whose item stopped matching under `on_unmatch = "finish"`: not checked again. */
  private readonly unmatchedFinishing = new Set<string>();

  constructor(private readonly s: KernelState) {}

  /** Why a running task was stopped by reconciliation, if it was. */
  stopReason(taskKey: string): string | undefined {
    return this.stopReasons.get(taskKey);
  }

  /** A task's run ended: reconciliation forgets it. */
  ended(taskKey: string): void {
    this.stopReasons.delete(taskKey);
    this.unmatchedFinishing.delete(taskKey);
  }

  /** The soonest check due (epoch ms), for the watch loop's sleep. */
  nextAt(): number {
    return Math.min(...this.reconcileAt.values(), Number.POSITIVE_INFINITY);
  }

  /**
   * Once per poll interval, the trigger reads again the items its feed has not seen matching since
   * the last check (in one request per 100 items); what stopped matching is dropped or stopped.
   */
  async reconcile(): Promise<void> {
    const now = this.s.options.clock.now();
    const interval = this.s.settings.execution.polling.poll_interval_seconds * 1000;
    const { queued } = this.s.core.snapshot();
    for (const feed of this.s.feeds) {
      const { automation } = feed;
      if (!automation.trigger.unmatched || this.s.winding) continue;
      const tasks = [
        ...queued.filter((c) => c.automationId === automation.id).map((c) => c.task),
        ...[...this.s.running.values()]
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
        github: this.s.options.github,
        signal: this.s.pollSignal,
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
    const { log, store, clock } = this.s.options;
    // Offered again if the item matches again later (a saved session then resumes).
    const forget = (task: Task): void => feed.forget?.(task);
    const dropped = this.s.core.clearQueue(
      (c) => c.automationId === automation.id && reasons.has(c.task.key),
    );
    for (const candidate of dropped) {
      const { task } = candidate;
      this.s.pending.delete(task.key);
      forget(task);
      const reason = `${reasons.get(task.key)}: dropped from the queue before it started`;
      const created = await store.createRun({ ...runInit(automation, task, 'cancelled'), reason });
      const run = await store.updateRun(created.id, { finishedAt: new Date(clock.now()).toISOString() });
      this.s.runs.push(run);
      this.s.options.onRun?.(run);
      log.info({ automation: automation.id, id: task.item.id, run: run.id, reason }, 'Dropped a queued task');
    }
    for (const entry of this.s.running.values()) {
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
      entry.cancel.abort(RUN_CANCELLED);
    }
    if (dropped.length > 0) this.s.emitStatus();
  }
}
