/**
 * The engine's side of leases (src/coordination/lease.ts): a look at the item before screening
 * (someone else's lease skips it without posting anything), the claim the executor makes before
 * the agent starts, and the releases a crash left undone. Built only when an automation sets
 * `lease_ttl` (or `[settings] lease_ttl` is set).
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { Claim } from '../core/feature.js';
import { runInit } from '../core/task-fields.js';
import type { RunRecord, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { type LeaseCheck, type LeaseDeps, Leases, releaseOutcome, releaseStaleLeases } from './lease.js';

export interface LeaseHooksOptions {
  settings(): Settings;
  /** A client built with `maxAttempts: 1` (see lease.ts). */
  client: GitHubClient;
  clock: Clock;
  log: Logger;
  store: Store;
  trust: LeaseDeps['trust'];
  queueEdit: LeaseDeps['queueEdit'];
}

/** What the look before a run decided. */
export type LeaseGate = { kind: 'go' } | { kind: 'skip'; run: RunRecord } | { kind: 'hold' };

export class LeaseHooks {
  readonly leases: Leases;
  /** Tasks not run because of a lease (or an unreachable GitHub): a watch polls them again. */
  readonly retry = new Set<string>();
  /** The lease comment that last skipped each task: the same lease is not recorded again. */
  private readonly lastSkip = new Map<string, number>();
  /** Leases held by running tasks (task key → release), until their run releases them. */
  private readonly held = new Map<string, (outcome: string) => Promise<void>>();

  constructor(private readonly options: LeaseHooksOptions) {
    const { client, clock, log, settings, trust, queueEdit } = options;
    this.leases = new Leases({ client, clock, log, settings, trust, queueEdit });
  }

  /**
   * Before screening: an item someone else holds is skipped, recorded once per lease as
   * `skipped: leased by <runner>` (a later poll that finds the same lease records nothing).
   */
  async gate(automation: ResolvedAutomation, task: Task): Promise<LeaseGate> {
    const check = await this.leases.check(automation, task);
    if (check.kind === 'free') {
      this.lastSkip.delete(task.key);
      return { kind: 'go' };
    }
    return this.refused(automation, task, check);
  }

  private async refused(
    automation: ResolvedAutomation,
    task: Task,
    check: Exclude<LeaseCheck, { kind: 'free' }>,
  ): Promise<LeaseGate> {
    const { store, log, clock } = this.options;
    const fields = { automation: automation.id, repo: task.identity.repo, id: task.identity.id };
    if (check.kind === 'unreachable') {
      this.retry.add(task.key);
      log.warn(
        { ...fields, error: check.reason },
        'GitHub unreachable while claiming: the run is not started; the next poll tries again',
      );
      return { kind: 'hold' };
    }
    if (check.kind === 'leased') this.retry.add(task.key);
    if (this.lastSkip.get(task.key) === check.by.commentId) return { kind: 'hold' };
    this.lastSkip.set(task.key, check.by.commentId);
    const created = await store.createRun({ ...runInit(automation, task, 'skipped'), reason: check.reason });
    const run = await store.updateRun(created.id, { finishedAt: new Date(clock.now()).toISOString() });
    log.info({ ...fields, run: run.id, reason: check.reason }, 'Skipped task: the item is leased elsewhere');
    return { kind: 'skip', run };
  }

  /** The executor's claim (before the agent starts; see executor.ts `Claim`). */
  async claim(automation: ResolvedAutomation, task: Task, run: RunRecord): Promise<Claim> {
    const { log } = this.options;
    const fields = { automation: automation.id, repo: task.identity.repo, id: task.identity.id, run: run.id };
    const result = await this.leases.claim(automation, task, run);
    if (result === undefined) return { kind: 'none' };
    if (result.kind === 'claimed') {
      const { lease } = result;
      log.info(
        { ...fields, comment: lease.commentId, until: lease.expires },
        result.takenBack ? 'Took back its own lease' : 'Claimed the item',
      );
      this.held.set(task.key, (outcome) => lease.release(outcome));
      return {
        kind: 'held',
        release: async (finished) => {
          this.held.delete(task.key);
          await lease.release(releaseOutcome(finished));
        },
      };
    }
    this.retry.add(task.key);
    if (result.kind === 'unreachable') {
      log.warn(
        { ...fields, error: result.reason },
        'GitHub unreachable while claiming: the run is not started; the next poll tries again',
      );
      return {
        kind: 'refused',
        reason: `not claimed: GitHub unreachable (${result.reason}); tried again at the next poll`,
      };
    }
    if (result.kind === 'done') this.retry.delete(task.key);
    this.lastSkip.set(task.key, result.by.commentId);
    return { kind: 'refused', reason: result.reason };
  }

  /**
   * A run that ended without releasing its lease (it threw before recording its end): stop the
   * renewals and release it as `failed`. Nothing happens for a task holding no lease.
   */
  async abandon(taskKey: string): Promise<void> {
    const release = this.held.get(taskKey);
    this.held.delete(taskKey);
    await release?.('failed').catch((error: unknown) => {
      this.options.log.warn({ error: errorMessage(error) }, 'Could not queue the release of a lease');
    });
  }

  /** Interrupted runs nobody resumes: their leases are released through the queue. */
  async releaseInterrupted(runs: readonly RunRecord[]): Promise<void> {
    const leased = runs.filter((run) => {
      const automation = this.options.settings().automations.find((a) => a.id === run.automationId);
      return automation && this.leases.config(automation) !== undefined;
    });
    if (leased.length === 0) return;
    try {
      await releaseStaleLeases(this.leases, leased);
    } catch (error) {
      this.options.log.warn({ error: errorMessage(error) }, 'Could not queue the release of stale leases');
    }
  }
}
