/**
 * The periodic repair sweep (issue 12, item 6; seed 003): every `reconcile_interval_minutes`
 * (default 60, 0 disables) `run --watch` and `serve` repair what outages left behind, when GitHub
 * writes are configured. Each repair is one `SweepTask` in `SWEEP_TASKS`; a task that throws is
 * logged and the others still run.
 *
 * - `requeue-failed-writes`: writes that ended `failed` in the queue (the outage outlasted the 8
 *   attempts) and are younger than a week are made pending again; their markers keep them from
 *   being posted twice.
 * - `finished-run-labels`: a status label put on by a run that has finished, with no removal
 *   queued (a process killed between the two), is queued for removal.
 *
 * - `stale-leases` (with leases): a run of the last day that started its agent and finished, but
 *   whose lease release never reached the queue (a process killed between the two), has its lease
 *   comment edited to the run's outcome (an edit only: nothing is posted where no lease is found);
 *   runs of automations that take no lease are left alone.
 */
import type { Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { isTerminal } from '../core/types.js';
import type { Logger } from '../log.js';
import type { Store, WriteInit } from '../store/types.js';
import { type Leases, leaseMarker, releaseStaleLeases } from './lease.js';

export interface SweepContext {
  store: Store;
  settings: Settings;
  clock: Clock;
  log: Logger;
  /** Queues writes (through the write queue, sent in the background). */
  queue(writes: readonly WriteInit[]): Promise<void>;
  signal?: AbortSignal;
  /** This runner's leases, when an automation sets `lease_ttl`. */
  leases?: Leases;
}

export interface SweepTask {
  readonly name: string;
  /** Repairs what it can; returns how many things it repaired (for the log). */
  run(context: SweepContext): Promise<number>;
}

/** Failed writes older than this are left alone (their item is likely gone or changed for good). */
export const REQUEUE_MAX_AGE_MS = 7 * 86_400_000;

export const requeueFailedWrites: SweepTask = {
  name: 'requeue-failed-writes',
  async run({ store, clock, queue }) {
    const since = clock.now() - REQUEUE_MAX_AGE_MS;
    const failed = (await store.listWrites({ status: 'failed' })).filter(
      (w) => Date.parse(w.createdAt) >= since,
    );
    // Enqueueing a marker again makes its row pending with fresh attempts (same id, same order).
    await queue(
      failed.map((w) => ({
        marker: w.marker,
        repo: w.repo,
        number: w.number,
        write: w.write,
        runId: w.runId,
      })),
    );
    return failed.length;
  },
};

export const finishedRunLabels: SweepTask = {
  name: 'finished-run-labels',
  async run({ store, queue }) {
    const writes = await store.listWrites();
    const markers = new Set(writes.map((w) => w.marker));
    const repairs: WriteInit[] = [];
    for (const w of writes) {
      const match = /^status run=(\S+) step=add$/.exec(w.marker);
      if (!match || w.status !== 'sent' || w.write.kind !== 'add-labels') continue;
      const runId = match[1]!;
      const remove = `status run=${runId} step=remove`;
      if (markers.has(remove)) continue;
      const run = await store.getRun(runId);
      if (run && !isTerminal(run.status)) continue;
      for (const label of w.write.labels) {
        repairs.push({
          marker: remove,
          repo: w.repo,
          number: w.number,
          runId,
          write: { kind: 'remove-label', label: label.name },
        });
      }
    }
    await queue(repairs);
    return repairs.length;
  },
};

/** Finished runs this old or younger are checked for a lease left standing. */
export const STALE_LEASE_WINDOW_MS = 86_400_000;

export const staleLeases: SweepTask = {
  name: 'stale-leases',
  async run({ store, clock, leases }) {
    if (!leases) return 0;
    const since = clock.now() - STALE_LEASE_WINDOW_MS;
    const released = new Set((await store.listWrites()).map((w) => w.marker));
    const stale = (await store.listRuns({ limit: 500 })).filter(
      (run) =>
        isTerminal(run.status) &&
        run.startedAt !== null &&
        run.finishedAt !== null &&
        Date.parse(run.finishedAt) >= since &&
        !released.has(leaseMarker(run.id)),
    );
    let queued = 0;
    for (const run of stale) queued += await releaseStaleLeases(leases, [run], run.status);
    return queued;
  },
};

/** The repairs every sweep runs, in order. */
export const SWEEP_TASKS: SweepTask[] = [requeueFailedWrites, finishedRunLabels, staleLeases];

/** Runs the sweep when it is due (engine clock); the first one runs at the first call. */
export class Sweeper {
  #nextAt = 0;

  constructor(private readonly tasks: readonly SweepTask[] = SWEEP_TASKS) {}

  /** When the next sweep is due (epoch ms), or undefined when the sweep is off. */
  nextAt(settings: Settings): number | undefined {
    return settings.execution.reconcile_interval_minutes > 0 ? this.#nextAt : undefined;
  }

  async maybeRun(context: SweepContext): Promise<void> {
    const minutes = context.settings.execution.reconcile_interval_minutes;
    const now = context.clock.now();
    if (minutes <= 0 || now < this.#nextAt) return;
    this.#nextAt = now + minutes * 60_000;
    await runSweep(context, this.tasks);
  }
}

export async function runSweep(
  context: SweepContext,
  tasks: readonly SweepTask[] = SWEEP_TASKS,
): Promise<void> {
  for (const task of tasks) {
    if (context.signal?.aborted) return;
    try {
      const repaired = await task.run(context);
      if (repaired > 0) context.log.info({ sweep: task.name, repaired }, 'Repair sweep queued repairs');
    } catch (error) {
      context.log.warn({ sweep: task.name, error: errorMessage(error) }, 'A repair sweep task failed');
    }
  }
}
