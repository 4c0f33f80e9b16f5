/**
 * The poller's side of the fleet: the engine's `TaskRunner`. A task the scheduler starts (within
 * the fleet-wide `max_active_tasks`) becomes a dispatch row placed on one host (free capacity,
 * preferring a host that has the repository's checkout; a saved session goes back to the host it
 * lives on) and a pg-boss job on that host's queue; the runner then watches the row until the
 * host finishes it. The liveness sweep takes back what lost hosts hold: queued jobs at once,
 * running ones after `resume_grace`, restarted elsewhere from the last pushed checkpoint.
 */
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../core/errors.js';
import type { RunRecord } from '../core/types.js';
import type { DispatchedTask, TaskRunner } from '../engine/engine.js';
import type { PreviousAttempt } from '../engine/executor.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { unreachable } from './durable-store.js';
import type { PollerFence } from './election.js';
import { type FleetDb, type FleetTiming, retryDelayMs } from './fleet-db.js';
import { type JobNeeds, lacks, NO_LIVE_WORKER, unplaceable } from './placement.js';
import type { FleetQueue } from './queue.js';
import { sleep } from './sleep.js';
import type { DispatchRecord, FleetHost } from './types.js';

export interface FleetRunnerOptions {
  db: FleetDb;
  queue: FleetQueue;
  store: Store;
  log: Logger;
  timing: FleetTiming;
  /** How often the runner looks at the rows it waits on (ms, default 250). */
  watchIntervalMs?: number;
  /** The poller lock's proof, checked by the database on every dispatch (src/fleet/election.ts). */
  fence?: () => PollerFence | undefined;
  /** The database refused a dispatch: this process no longer holds the poller lock. */
  onFenced?: () => void;
}

/** Hosts that refused one task, with the instance that did (a restarted host is asked again). */
type Refusals = Map<string, { instance: string | undefined; reason: string }>;

interface Watch {
  resolve(record: DispatchRecord | undefined): void;
  runSeen: string | null;
  onUpdate(run: RunRecord): void;
}

/** Seconds a running dispatch of a silent host waits before it is taken back. */
export function takeBackAfter(timing: FleetTiming): number {
  // Never less than two heartbeats and the agents' kill grace beyond the timeout: a cut-off
  // worker starts stopping its agents at the timeout (its own clock), an agent that ignores
  // SIGTERM is killed a grace later, so the restart elsewhere cannot overlap them.
  return (
    timing.heartbeatTimeout +
    Math.max(timing.resumeGrace, 2 * timing.heartbeatInterval + fleetKillGraceMs(timing) / 1000)
  );
}

/** SIGTERM to SIGKILL for a fleet host's agents (at most 10 s, half the heartbeat timeout). */
export function fleetKillGraceMs(timing: Pick<FleetTiming, 'heartbeatTimeout'>): number {
  return Math.min(10_000, timing.heartbeatTimeout * 500);
}

export class FleetRunner implements TaskRunner {
  private readonly watches = new Map<string, Watch>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private sweeping = false;
  private prunedAt = Number.NEGATIVE_INFINITY;
  /** Done dispatches whose after-run work the engine has not finished, by task key. */
  private readonly unsettled = new Map<string, string>();
  /** Placements one at a time, so two tasks never both take a host's last free slot. */
  private placing: Promise<unknown> = Promise.resolve();
  /** Slots held for saved sessions waiting for their own full host, by host. */
  private readonly reserved = new Map<string, number>();

  constructor(private readonly options: FleetRunnerOptions) {}

  /** Starts the watch and the liveness sweep; `stop` ends both. */
  start(stop: AbortSignal): void {
    const interval = this.options.watchIntervalMs ?? 250;
    // Tasks a previous poller left waiting are offered again here: each says so again if it must.
    void this.options.db.clearWaiting().catch(() => {});
    let sinceSweep = Number.POSITIVE_INFINITY;
    this.timer = setInterval(() => {
      void this.poll();
      sinceSweep += interval;
      if (sinceSweep >= this.options.timing.heartbeatInterval * 1000) {
        sinceSweep = 0;
        void this.sweep();
      }
    }, interval);
    stop.addEventListener(
      'abort',
      () => {
        this.stopped = true;
        clearInterval(this.timer);
        for (const watch of this.watches.values()) watch.resolve(undefined);
        this.watches.clear();
      },
      { once: true },
    );
  }

  async adopt(): Promise<DispatchedTask[]> {
    const jobs: DispatchedTask[] = [];
    for (const { dispatch, payload } of await this.options.db.unsettledPayloads()) {
      try {
        jobs.push(JSON.parse(payload) as DispatchedTask);
      } catch {
        this.options.log.warn({ dispatch: dispatch.id }, 'A dispatch holds an unreadable task; leaving it');
      }
    }
    if (jobs.length > 0)
      this.options.log.info(
        { count: jobs.length },
        'Taking over the dispatches a previous poller handed out',
      );
    return jobs;
  }

  /** The lock's proof for a poller's write; 'lost' when this process no longer holds the lock. */
  private fence(): PollerFence | undefined | 'lost' {
    if (!this.options.fence) return undefined;
    return this.options.fence() ?? 'lost';
  }

  async dispatched(): Promise<DispatchedTask[]> {
    const jobs: DispatchedTask[] = [];
    for (const payload of await this.options.db.ranPayloads()) {
      try {
        jobs.push(JSON.parse(payload) as DispatchedTask);
      } catch {
        // An unreadable row only costs a rerun of its item.
      }
    }
    return jobs;
  }

  async settled(taskKey: string): Promise<void> {
    const id = this.unsettled.get(taskKey);
    if (id === undefined) return;
    this.unsettled.delete(taskKey);
    // Left unsettled, the next poller does the after-run work again: at least once, never lost.
    // A poller that lost its lock (frozen, then thawed) leaves it to its successor, which adopted it.
    const fence = this.fence();
    if (fence === 'lost') return;
    await this.options.db.settle(id, fence).catch((error: unknown) => {
      this.options.log.warn({ task: taskKey, error: errorMessage(error) }, 'Could not settle a dispatch');
    });
  }

  /**
   * Hands the task out and waits for its end. A statement the database leaves unanswered (a cut, a
   * pool too busy to lend a connection) does not drop the task (this poller would not offer it
   * again): it is handed out again from the top once the database answers, which finds the
   * dispatch already recorded, if it was, and waits on that one.
   */
  async run(
    job: DispatchedTask,
    signals: { cancel: AbortSignal; stop: AbortSignal },
    onUpdate: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined> {
    for (let failures = 0; ; failures += 1) {
      try {
        return await this.runOnce(job, signals, onUpdate);
      } catch (error) {
        if (!unreachable(error)) throw error;
        if (signals.stop.aborted) return undefined; // the next poller adopts what was recorded
        if (failures === 0)
          this.options.log.warn(
            { task: job.task.key, error: errorMessage(error) },
            'The database did not answer while handing out a task; trying again',
          );
        await sleep(retryDelayMs(failures), signals.stop);
        if (signals.stop.aborted) return undefined;
      }
    }
  }

  private async runOnce(
    job: DispatchedTask,
    signals: { cancel: AbortSignal; stop: AbortSignal },
    onUpdate: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined> {
    const { db, store, log } = this.options;
    let current = job;
    let dispatch = await db.unsettledFor(job.task.key);
    let previous: DispatchRecord | undefined;
    const refusals: Refusals = new Map();
    for (;;) {
      if (signals.stop.aborted) return undefined;
      if (!dispatch) {
        const placing = this.placeWhenRoom(current, refusals, signals.stop, async (placed) => {
          const fence = this.fence();
          if (fence === 'lost') return { job: placed.job, record: 'fenced' as const };
          const record = await db.insertDispatch(
            {
              id: randomUUID(),
              taskKey: placed.job.task.key,
              automationId: placed.job.automationId,
              repo: placed.job.task.identity.repo,
              host: placed.host,
              payload: JSON.stringify(placed.job),
              previousId: previous?.id ?? null,
            },
            fence,
          );
          return { job: placed.job, record };
        });
        const placed = await placing;
        if (!placed) return undefined;
        if (placed.record === 'fenced') {
          log.error(
            { task: placed.job.task.key },
            'The database refused a dispatch: this process no longer holds the poller lock; placing nothing more',
          );
          this.options.onFenced?.();
          return undefined;
        }
        current = placed.job;
        dispatch = placed.record ?? (await db.unsettledFor(current.task.key));
        if (!dispatch) continue;
      }
      if (dispatch.state === 'queued') {
        if (!(await this.send(dispatch, signals.stop))) return undefined;
        await db.wake(dispatch.host).catch(() => {});
      }
      const onCancel = (): void => {
        if (dispatch) void db.requestCancel(dispatch.id).catch(() => {});
      };
      signals.cancel.addEventListener('abort', onCancel, { once: true });
      if (signals.cancel.aborted) onCancel();
      const final = await this.watch(dispatch, onUpdate);
      signals.cancel.removeEventListener('abort', onCancel);
      if (!final) return undefined; // this poller stops; the next one adopts the dispatch
      if (final.state === 'done') {
        // Settled once the engine did its after-run work (`settled`); a run that is not there to
        // work on (never started) is settled now.
        const run = final.runId ? await store.getRun(final.runId) : undefined;
        if (run) this.unsettled.set(final.taskKey, final.id);
        else {
          // Left unsettled when the database does not answer: the next poller settles it.
          const fence = this.fence();
          if (fence !== 'lost')
            await db.settle(final.id, fence).catch((error: unknown) => {
              log.warn({ task: final.taskKey, error: errorMessage(error) }, 'Could not settle a dispatch');
            });
        }
        return run;
      }
      if (final.refused) {
        // Its host cannot run it: placed at once on one that can (or it waits, saying why).
        const instance = (await db.hosts().catch(() => [])).find((h) => h.name === final.host)?.instance;
        refusals.set(final.host, { instance, reason: final.detail ?? 'refused' });
        log.warn(
          { task: final.taskKey, host: final.host, detail: final.detail },
          'A worker refused a task it cannot run: placing it on another host',
        );
        previous = final;
        dispatch = undefined;
        continue;
      }
      // Taken back from a lost host: placed again, on another host.
      log.info(
        { task: final.taskKey, host: final.host, detail: final.detail },
        'Dispatching a task again: its host was lost',
      );
      previous = final;
      current = await this.restartOf(current, final);
      dispatch = undefined;
    }
  }

  /**
   * Sends a queued dispatch's job, again and again while the queue fails (the row is recorded: a
   * job never sent would leave the task waiting for ever). False: this poller stops first (the
   * next one adopts the dispatch and sends it).
   */
  private async send(dispatch: DispatchRecord, stop: AbortSignal): Promise<boolean> {
    for (let failures = 0; !stop.aborted; failures += 1) {
      try {
        await this.options.queue.send(dispatch.host, dispatch.id);
        return true;
      } catch (error) {
        if (failures === 0)
          this.options.log.warn(
            { task: dispatch.taskKey, host: dispatch.host, error: errorMessage(error) },
            'Could not send a job to its host; trying again',
          );
        await sleep(Math.min(5000, 250 * 2 ** failures), stop);
      }
    }
    return false;
  }

  /** The job as it restarts elsewhere: a fresh session, told what the lost attempt left. */
  private async restartOf(job: DispatchedTask, lost: DispatchRecord): Promise<DispatchedTask> {
    if (lost.startedAt === null || lost.runId === null) return job; // never started: sent again as it was
    const run = await this.options.store.getRun(lost.runId);
    const previousAttempt: PreviousAttempt = {
      runId: lost.runId,
      host: lost.host,
      summary: attemptSummary(run, lost),
    };
    const { resume: _resume, ...rest } = job;
    return { ...rest, resume: false, previousAttempt };
  }

  /**
   * Waits for a host with room and returns it (undefined when `stop` aborts). Each look, and the
   * dispatch row that takes the slot, is one step of `placing`, so two tasks never both take a
   * host's last slot; a task that has to wait does so outside it and does not hold up the others.
   * A saved session waiting for its own full host reserves the next slot there.
   */
  private async placeWhenRoom<T>(
    job: DispatchedTask,
    refusals: Refusals,
    stop: AbortSignal,
    take: (placed: { host: string; job: DispatchedTask }) => Promise<T>,
  ): Promise<T | undefined> {
    let current = job;
    let waitedLogged = false;
    let reserved: string | undefined;
    /** Why no live worker can run it, as `fleet_waiting` shows it now. */
    let shown: string | undefined;
    const show = async (reason: string | undefined): Promise<void> => {
      if (reason === shown) return;
      const { db, log } = this.options;
      const task = current.task;
      try {
        if (reason === undefined) await db.clearWaiting(task.key);
        else {
          // No worker up yet is the fleet starting; live workers that cannot run it need an operator.
          if (reason === NO_LIVE_WORKER) log.info({ task: task.key }, 'No live worker yet: the task waits');
          else log.warn({ task: task.key, reason }, 'No live worker can run a task: it waits');
          await db.setWaiting({
            taskKey: task.key,
            automationId: current.automationId,
            repo: task.identity.repo,
            reason,
          });
        }
        shown = reason;
      } catch (error) {
        log.warn({ task: task.key, error: errorMessage(error) }, 'Could not record why a task waits');
      }
    };
    const unreserve = (): void => {
      if (reserved === undefined) return;
      const left = (this.reserved.get(reserved) ?? 1) - 1;
      if (left > 0) this.reserved.set(reserved, left);
      else this.reserved.delete(reserved);
      reserved = undefined;
    };
    try {
      while (!stop.aborted) {
        // The look and, when it found room, the caller's dispatch row are one step: the slot is
        // taken before the next look.
        const step = this.placing.then(async () => {
          const outcome = await this.placeOnce(current, reserved, refusals);
          if (outcome.host === undefined) return { outcome };
          return { outcome, taken: await take({ host: outcome.host, job: outcome.job }) };
        });
        this.placing = step.catch(() => undefined);
        const { outcome, taken } = await step;
        current = outcome.job;
        await show(outcome.cannot);
        if (outcome.host !== undefined) return taken;
        if (outcome.home !== reserved) {
          unreserve();
          if (outcome.home !== undefined) {
            reserved = outcome.home;
            this.reserved.set(reserved, (this.reserved.get(reserved) ?? 0) + 1);
          }
        }
        if (!waitedLogged && outcome.cannot === undefined) {
          waitedLogged = true;
          this.options.log.info({ task: current.task.key }, 'No worker has room: waiting');
        }
        await sleep(500, stop);
      }
      return undefined;
    } finally {
      unreserve();
      if (shown !== undefined) await show(undefined);
    }
  }

  /**
   * One look for a host with room. A saved session goes back to its own host while that host
   * lives (`home` says which, when it is full); other tasks leave the slots reserved by sessions
   * waiting for their host. `reservedBy` is the host this task itself reserved.
   */
  private async placeOnce(
    job: DispatchedTask,
    reservedBy: string | undefined,
    refusals: Refusals,
  ): Promise<{ host?: string; home?: string; cannot?: string; job: DispatchedTask }> {
    let current = job;
    const live = await this.liveWorkers();
    const needs: JobNeeds = { automationId: current.automationId, repo: current.task.identity.repo };
    const refusedNow = new Map(
      live.flatMap((h) => {
        const refusal = refusals.get(h.name);
        return refusal && refusal.instance === h.instance ? [[h.name, refusal.reason] as const] : [];
      }),
    );
    // Only hosts that can run it: they advertise its automation and repository, and did not refuse it.
    const hosts = live.filter((h) => !refusedNow.has(h.name) && lacks(h.capabilities, needs) === undefined);
    const cannot = hosts.length === 0 ? unplaceable(live, needs, refusedNow) : undefined;
    if (cannot !== undefined) return { cannot, job: current };
    const loads = new Map(hosts.map((h) => [h.name, h.load]));
    if (current.resume) {
      const home = await this.sessionHost(current);
      const host = home === undefined ? undefined : hosts.find((h) => h.name === home);
      if (home !== undefined && !host && live.some((h) => h.name === home)) {
        // Its host lives but cannot run it any more: start afresh on one that can.
        this.options.log.info(
          { task: current.task.key, host: home },
          'A saved session lives on a host that cannot run it any more: starting afresh elsewhere',
        );
        current = { ...current, resume: false };
      } else if (home !== undefined && host) {
        const others = (this.reserved.get(host.name) ?? 0) - (reservedBy === host.name ? 1 : 0);
        if ((loads.get(host.name) ?? 0) + others < host.capacity) return { host: host.name, job: current };
        return { home: host.name, job: current };
      } else if (home !== undefined) {
        // Its host is gone: the session cannot be continued anywhere else.
        this.options.log.info(
          { task: current.task.key, host: home },
          'A saved session lives on a lost host: starting afresh elsewhere',
        );
        await this.options.store.deleteSession(current.task.key);
        current = { ...current, resume: false };
      }
    }
    if (!current.resume) {
      const repo = current.task.identity.repo;
      const free = hosts
        .map((host) => ({
          host,
          free: host.capacity - (loads.get(host.name) ?? 0) - (this.reserved.get(host.name) ?? 0),
        }))
        .filter((entry) => entry.free > 0)
        .sort(
          (a, b) =>
            Number(b.host.checkouts.includes(repo)) - Number(a.host.checkouts.includes(repo)) ||
            b.free - a.free ||
            a.host.name.localeCompare(b.host.name),
        );
      if (free[0]) return { host: free[0].host.name, job: current };
    }
    return { job: current };
  }

  private async sessionHost(job: DispatchedTask): Promise<string | undefined> {
    const session = await this.options.store.getSession(job.task.key);
    if (!session) return undefined;
    const run = await this.options.store.getRun(session.runId);
    return run?.host ?? undefined;
  }

  /** Hosts that take work now, with their load (one statement: placements are serialised, so it is exact). */
  private async liveWorkers(): Promise<FleetHost[]> {
    return (await this.options.db.hosts()).filter(
      (host) =>
        host.role !== 'poller' && host.capacity > 0 && (host.health === 'healthy' || host.health === 'late'),
    );
  }

  private watch(
    dispatch: DispatchRecord,
    onUpdate: (run: RunRecord) => void,
  ): Promise<DispatchRecord | undefined> {
    return new Promise((resolve) => {
      // A run that reaches its watch after the runner stopped (a placement in flight when the lock
      // was lost) would wait for ever: the next poller adopts the dispatch instead.
      if (this.stopped) return resolve(undefined);
      this.watches.set(dispatch.id, { resolve, runSeen: null, onUpdate });
    });
  }

  /** One statement for every watched dispatch; a changed run id is read and shown. */
  private async poll(): Promise<void> {
    if (this.watches.size === 0) return;
    let states: Map<string, DispatchRecord>;
    try {
      states = await this.options.db.states([...this.watches.keys()]);
    } catch (error) {
      this.options.log.warn({ error: errorMessage(error) }, 'Could not read the dispatches');
      return;
    }
    for (const [id, watch] of this.watches) {
      const record = states.get(id);
      if (!record) continue;
      if (record.runId && record.runId !== watch.runSeen && record.state === 'running') {
        watch.runSeen = record.runId;
        const run = await this.options.store.getRun(record.runId).catch(() => undefined);
        if (run) watch.onUpdate(run);
      }
      if (record.state === 'done' || record.state === 'taken_back') {
        this.watches.delete(id);
        watch.resolve(record);
      }
    }
  }

  /**
   * Takes back what silent hosts hold: a queued dispatch once its host is gone (or stopped), a
   * running one `takeBackAfter` seconds after its last heartbeat (or `resume_grace` after a clean
   * stop). A run taken back is closed as cancelled, and its session (on the lost host) forgotten.
   */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const { db, store, log, timing } = this.options;
      const limit = takeBackAfter(timing);
      for (const { dispatch, silentFor, stoppedFor } of await db.silentHostDispatches()) {
        const gone = silentFor === null || stoppedFor !== null || silentFor > timing.heartbeatTimeout;
        if (!gone) continue;
        const due =
          dispatch.state === 'queued' ||
          silentFor === null ||
          (stoppedFor !== null ? stoppedFor > timing.resumeGrace : silentFor > limit);
        if (!due) continue;
        const why =
          stoppedFor !== null
            ? `host ${dispatch.host} stopped and did not come back within resume_grace`
            : `host ${dispatch.host} stopped answering (no heartbeat for ${Math.round(silentFor ?? 0)} s)`;
        const fence = this.fence();
        if (fence === 'lost') return;
        const taken = await db.takeBack(dispatch.id, why, fence);
        if (!taken) continue;
        log.warn(
          { task: taken.taskKey, host: taken.host, state: dispatch.state },
          `Taking back a dispatch: ${why}`,
        );
        if (taken.runId) {
          const run = await store.getRun(taken.runId);
          if (run && (run.status === 'queued' || run.status === 'preparing' || run.status === 'running')) {
            await store.updateRun(run.id, {
              status: 'cancelled',
              reason: `taken back: ${why}; restarted on another host from its last pushed checkpoint`,
              finishedAt: new Date().toISOString(),
              agentPid: null,
            });
          }
          const session = await store.getSession(taken.taskKey);
          if (session && session.runId === taken.runId) await store.deleteSession(taken.taskKey);
        }
      }
      await this.prune();
    } catch (error) {
      this.options.log.warn({ error: errorMessage(error) }, 'The liveness sweep failed; trying again');
    } finally {
      this.sweeping = false;
    }
  }

  /** Once an hour (the first sweep included): old settled dispatches go (FleetDb.pruneDispatches). */
  private async prune(): Promise<void> {
    const now = Date.now();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    const pruned = await this.options.db.pruneDispatches(DISPATCH_KEEP_DAYS);
    if (pruned > 0) this.options.log.info({ pruned }, 'Pruned old settled dispatches');
  }
}

/** Settled dispatches are kept this many days (a task's latest started run stays longer). */
export const DISPATCH_KEEP_DAYS = 14;
const PRUNE_EVERY_MS = 3_600_000;

/** What a restart is told about the lost attempt, in curupira's words. */
export function attemptSummary(run: RunRecord | undefined, lost: DispatchRecord): string {
  const lines = [
    `Host: ${lost.host}; started ${lost.startedAt ?? 'never'}; taken back ${lost.finishedAt ?? 'now'}.`,
  ];
  if (lost.detail) lines.push(`Why: ${lost.detail}.`);
  if (run) {
    lines.push(`Run ${run.id}: ${run.status}${run.reason ? ` (${run.reason})` : ''}.`);
    if (run.branch) lines.push(`Branch: ${run.branch}.`);
    lines.push(`Commits recorded on no remote at its last update: ${run.commits}.`);
  }
  return lines.join('\n');
}
