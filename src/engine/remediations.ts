/**
 * Remediation runs of delivered pull requests (src/delivery/remediation.ts) go through the
 * kernel's scheduler like any run: a slot of `max_active_tasks`, the item's lock, a wait while
 * the automation is paused or parked, a place in the status, and `cancel`.
 */
import type { ResolvedAutomation } from '../config/types.js';
import { isTerminal, type RunRecord, type Task } from '../core/types.js';
import { taskItemName } from '../triggers/registry.js';
import { executeTask, type RemediationRun } from './executor.js';
import { locksFor } from './scheduler.js';
import type { KernelState, RemediationTurn } from './state.js';
import type { RunningTask } from './types.js';

/** The scheduler's key of a delivery's remediation: one at a time per pull request. */
function remediationKey(deliveryRunId: string): string {
  return `remediation:${deliveryRunId}`;
}

export class Remediations {
  constructor(
    private readonly s: KernelState,
    /** Starts what the scheduler lets through now. */
    private readonly dispatch: () => void,
  ) {}

  /**
   * One remediation run (src/delivery/remediation.ts), through the scheduler like any run: it takes
   * a slot of `max_active_tasks` (waiting its turn when they are full, ahead of new work, as a
   * resumed session does), holds the item's lock (never beside a run of the same item, nor a second
   * remediation of the pull request), waits while its automation is paused or parked, is listed
   * in the status, and `cancel` ends it. Resolves undefined when the engine stopped or drained
   * before it started. No claim, result comment or delivery of its own (it pushes to the
   * delivery's branch).
   */
  remediate(
    automation: ResolvedAutomation,
    task: Task,
    remediation: RemediationRun,
    onRun: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined> {
    if (this.s.winding) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const turn: RemediationTurn = {
        task,
        run: remediation,
        onRun,
        settle: (run, error) => (error === undefined ? resolve(run) : reject(error)),
      };
      const key = remediationKey(remediation.deliveryRunId);
      const result = this.s.core.offer({
        task: { ...task, key },
        automationId: automation.id,
        // A remediation works in the delivery's worktree, never in the shared checkout.
        locks: locksFor(task, { serialAutomation: automation.trigger.serialRuns }),
        priority: 'resume',
        unbounded: true,
      });
      if (result !== 'queued') {
        // The remediator runs one per pull request: another in the queue means a bug, not a wait.
        this.s.options.log.warn(
          { automation: automation.id, delivery: remediation.deliveryRunId, result },
          'A remediation could not be queued',
        );
        resolve(undefined);
        return;
      }
      this.s.pending.set(key, { automation, remediation: turn });
      this.dispatch();
      this.s.emitStatus();
    });
  }

  /** Starts a remediation the scheduler let through (see `remediate`). */
  start(slot: Task, automation: ResolvedAutomation, turn: RemediationTurn): void {
    const { task } = turn;
    const info: RunningTask = {
      automationId: automation.id,
      repo: task.identity.repo,
      itemId: task.item.id,
      item: taskItemName(automation, task),
      title: task.item.title,
      status: 'preparing',
      startedAt: this.s.options.clock.now(),
      remediationOf: turn.run.deliveryRunId,
    };
    const cancel = new AbortController();
    const {
      writes: _writes,
      claim: _claim,
      delivery: _delivery,
      ...deps
    } = this.s.executorDeps((run) => {
      info.runId = run.id;
      info.status = run.status;
      turn.onRun(run);
      if (!isTerminal(run.status)) this.s.emitStatus();
    });
    const done = executeTask(deps, {
      automation,
      task,
      signal: AbortSignal.any([this.s.runAbort.signal, this.s.options.stopSignal, cancel.signal]),
      remediation: turn.run,
    })
      .then(async (finished) => {
        // Cancelled by an operator: its key counts as answered (the remediator marks it handled).
        const run =
          finished.status === 'cancelled' && cancel.signal.aborted && !this.s.stopping
            ? await this.s.options.store.updateRun(finished.id, {
                reason:
                  'cancelled by an operator: the feedback it answered counts as handled (a new review, a new failing head or a push asks again)',
              })
            : finished;
        this.s.runs.push(run);
        this.s.options.onRun?.(run);
        for (const feature of this.s.features) feature.remediated?.(automation.id, run);
        turn.settle(run);
      })
      .catch((error: unknown) => turn.settle(undefined, error ?? new Error('remediation failed')))
      .finally(() => {
        this.s.running.delete(slot.key);
        this.s.core.finish(slot.key);
        this.s.wakeup.wake();
      });
    this.s.running.set(slot.key, { task: slot, automation, info, done, cancel, remediation: true });
    this.s.emitStatus();
  }

  /** The engine winds down: remediations still waiting for their turn are given back unstarted. */
  release(): void {
    const waiting = this.s.core.clearQueue((c) => this.s.pending.get(c.task.key)?.remediation !== undefined);
    for (const candidate of waiting) {
      const turn = this.s.pending.get(candidate.task.key)?.remediation;
      this.s.pending.delete(candidate.task.key);
      turn?.settle(undefined);
    }
  }
}
