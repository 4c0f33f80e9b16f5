/**
 * The operator's controls (`curupira serve`: the board, the API and the CLI over the socket):
 * what each automation is doing, pause and resume, run now, cancel, retry.
 */

import { ControlError, errorMessage } from '../core/errors.js';
import { RUN_CANCELLED } from '../core/outcome.js';
import { isTerminal, pauseReasonKey, type RunRecord } from '../core/types.js';
import type { Reconciler } from './reconcile.js';
import { resumeSessions } from './recovery.js';
import type { OfferResult } from './scheduler.js';
import type { KernelState } from './state.js';
import type { AutomationStatus, RetryResult } from './types.js';

export class Control {
  constructor(
    private readonly s: KernelState,
    private readonly reconciler: Reconciler,
    /** Starts what the scheduler lets through now. */
    private readonly dispatch: () => void,
  ) {}

  /** What each configured automation is doing now. */
  automations(): AutomationStatus[] {
    return this.s.feeds.map((feed) => {
      const id = feed.automation.id;
      const last = this.s.lastPolls.get(id);
      const error = this.s.discoveryErrors.get(id);
      return {
        id,
        paused: this.s.isPaused(id),
        disabled: this.s.disabled(id),
        ...(feed.baseline ? { baseline: feed.baseline } : {}),
        nextPollAt: feed.nextPollAt,
        ...(last ? { lastPollAt: last.at, lastFound: last.found } : {}),
        ...(error === undefined ? {} : { lastError: error }),
        waiting: feed.waiting ?? 0,
        ...(feed.matching === undefined ? {} : { matching: feed.matching }),
        ...(feed.scans?.length ? { scans: feed.scans } : {}),
        ...this.pauseStatus(id),
        ...Object.assign({}, ...this.s.features.map((f) => f.status?.(feed.automation) ?? {})),
      };
    });
  }

  /** Why an automation was paused automatically, for `automations()`. */
  private pauseStatus(id: string): Pick<AutomationStatus, 'pausedReason'> {
    const reason = this.s.paused.has(id) ? this.s.pauseReasons.get(id) : undefined;
    return reason ? { pausedReason: reason } : {};
  }

  /**
   * Pauses or resumes an automation; remembered in the store across restarts. Running runs go on.
   * An automation disabled in the settings file is not resumed from here: its file says so.
   */
  async setPaused(id: string, paused: boolean, reason?: string): Promise<void> {
    this.s.automation(id);
    if (!paused && this.s.disabled(id))
      throw new ControlError(
        'automation_disabled',
        `automation '${id}' is disabled in ${this.s.settings.file} (enabled = false): edit the file to resume it`,
      );
    const wasPaused = this.s.paused.has(id);
    await this.s.options.store.setPaused(id, paused);
    // The reason of an automatic pause; a pause by hand or a resume clears it.
    await this.s.options.store.setMeta(pauseReasonKey(id), paused ? (reason ?? '') : '');
    if (paused && reason) this.s.pauseReasons.set(id, reason);
    else this.s.pauseReasons.delete(id);
    if (paused && !wasPaused) for (const feature of this.s.features) feature.paused?.(id, reason);
    if (paused) this.s.paused.add(id);
    else this.s.paused.delete(id);
    if (!paused) {
      await resumeSessions(this.s, id);
      this.dispatch();
    }
    this.s.emitStatus();
    this.s.wakeup.wake();
  }

  /**
   * Runs an automation now: a schedule fires an occurrence at this instant; an event trigger polls
   * at once (its matching items start as usual). Works on a paused automation too, once.
   * `inputs` (issue 32, checked by the caller) go to the runs it starts: the fired occurrence, or
   * the items that poll offers; they win over the engine's own (`run --set`).
   */
  trigger(id: string, inputs?: Readonly<Record<string, string>>): 'fired' | 'polling' {
    const automation = this.s.automation(id);
    const feed = this.s.feeds.find((f) => f.automation.id === id);
    if (feed?.fire) {
      this.s.offer(automation, feed.fire(new Date(this.s.options.clock.now())), inputs ? { inputs } : {});
      this.dispatch();
      this.s.wakeup.wake();
      return 'fired';
    }
    if (feed) {
      feed.nextPollAt = 0;
      // A person asked: the poll searches even where a change probe would say nothing changed.
      feed.searchNow?.();
    }
    if (inputs) this.s.triggerInputs.set(id, inputs);
    else this.s.triggerInputs.delete(id);
    if (this.s.isPaused(id)) this.s.forced.add(id);
    this.s.wakeup.wake();
    return 'polling';
  }

  /**
   * Asks an automation for one of the scans its feed offers (a review watch's `baseline`: "run a
   * baseline now"): its feed looks at once and the scan runs whatever was reviewed before. Works on
   * a paused automation too, once.
   */
  scanNow(id: string, scan: string): 'polling' {
    this.s.automation(id);
    const feed = this.s.feeds.find((f) => f.automation.id === id);
    if (!feed?.askScan || !feed.scans?.includes(scan))
      throw new ControlError(
        'scan_not_offered',
        `automation '${id}' has no ${scan} scan to run now (its trigger offers ${feed?.scans?.length ? feed.scans.join(', ') : 'none'})`,
      );
    feed.askScan(scan);
    if (this.s.isPaused(id)) this.s.forced.add(id);
    this.s.wakeup.wake();
    return 'polling';
  }

  /**
   * A GitHub webhook concerns these automations: each event-driven one that is not paused polls
   * now instead of at its next interval (schedules and chains are not moved). Returns those polled.
   */
  pollNow(ids: readonly string[]): string[] {
    const polled: string[] = [];
    for (const feed of this.s.feeds) {
      const id = feed.automation.id;
      if (!ids.includes(id) || !feed.eventDriven || this.s.isPaused(id)) continue;
      feed.nextPollAt = 0;
      polled.push(id);
    }
    if (polled.length > 0) this.s.wakeup.wake();
    return polled;
  }

  /** Cancels one running run: its agent's process group is stopped; its saved session is kept. */
  cancel(runId: string): void {
    const entry = [...this.s.running.values()].find((r) => r.info.runId === runId);
    if (!entry) throw new ControlError('run_not_active', `run ${runId} is not running in this daemon`);
    entry.cancel.abort(RUN_CANCELLED);
  }

  /** A cancelled run's reason says who cancelled it and what was kept. */
  async noteCancelled(run: RunRecord): Promise<{ run: RunRecord; by?: 'operator' | 'unmatched' }> {
    if (run.status !== 'cancelled') return { run };
    const session = await this.s.options.store.getSession(run.taskKey);
    const unmatched = this.reconciler.stopReason(run.taskKey);
    if (unmatched !== undefined) {
      const kept = [session ? 'its session' : '', run.worktreeKept ? 'its worktree' : '']
        .filter((k) => k !== '')
        .join(' and ');
      const noted = await this.s.options.store.updateRun(run.id, {
        reason: `${unmatched}: the agent was stopped (on_unmatch = "stop")${kept ? `; ${kept} ${kept.includes(' and ') ? 'are' : 'is'} kept` : ''}`,
      });
      return { run: noted, by: 'unmatched' };
    }
    // The item is held until a person retries it (src/coordination/cancel-hold-feature.ts).
    const noted = await this.s.options.store.updateRun(run.id, {
      reason: `cancelled by an operator; ${session ? 'its session is kept and is not resumed' : 'the item does not run again'} until the run is retried`,
    });
    return { run: noted, by: 'operator' };
  }

  /**
   * Runs a finished run's task again: a saved session is resumed; otherwise a schedule fires the
   * same occurrence again and an event trigger forgets the item and polls now.
   */
  async retry(runId: string): Promise<RetryResult> {
    const run = await this.s.options.store.getRun(runId);
    if (!run) throw new ControlError('run_not_found', `no run ${runId}`);
    if (!isTerminal(run.status)) throw new ControlError('run_active', `run ${runId} has not finished`);
    const automation = this.s.automation(run.automationId);
    // A person asking again lifts what holds the item (an escalation, a cancel).
    for (const feature of this.s.features) await feature.retried?.(run);
    const session = await this.s.options.store.getSession(run.taskKey);
    // The run again keeps the inputs of the one retried (issue 32).
    const inputs = run.inputs ? { inputs: run.inputs } : {};
    if (session) {
      this.later(runId, this.s.offer(automation, session.task, { resume: session, ...inputs }), run.taskKey);
      this.dispatch();
      return 'resumed';
    }
    const feed = this.s.feeds.find((f) => f.automation.id === automation.id);
    if (feed?.fire && run.scheduledFor) {
      this.later(runId, this.s.offer(automation, feed.fire(new Date(run.scheduledFor)), inputs), run.taskKey);
      this.dispatch();
      return 'fired';
    }
    if (feed?.forgetKey) {
      feed.forgetKey(run.taskKey);
      this.trigger(automation.id, run.inputs ?? undefined);
      return 'polling';
    }
    throw new ControlError(
      'not_retryable',
      `run ${runId} has no saved session and its trigger cannot fire it again`,
    );
  }

  /** A retry whose task is in flight is not dropped as a duplicate: it is asked again when that task ends. */
  private later(runId: string, offered: OfferResult, taskKey: string): void {
    if (offered === 'duplicate' || offered === 'busy') this.s.retryWhenFree.set(taskKey, runId);
  }

  /** A task's slot is free: a retry asked while it was in flight starts now. */
  freed(taskKey: string): void {
    const runId = this.s.retryWhenFree.get(taskKey);
    if (runId === undefined) return;
    this.s.retryWhenFree.delete(taskKey);
    this.retry(runId).catch((error: unknown) => {
      this.s.options.log.warn(
        { run: runId, error: errorMessage(error) },
        'A retry asked during a run could not start',
      );
    });
  }
}
