/**
 * A fleet worker: heartbeats, takes the jobs of its own queue (never more than its capacity at
 * once) and runs each through the engine exactly as a single process would (screening, budgets,
 * leases, the agent), recording where it ran. A worker that cannot reach the database for
 * `heartbeat_timeout` stops taking work and stops its agents (their sessions and worktrees stay):
 * by then the poller may give the work to another host, and two live runs of one item must never
 * exist. Back in time (within `resume_grace`), it resumes its own interrupted dispatches.
 */

import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Settings } from '../config/types.js';
import { errorMessage, StateError } from '../core/errors.js';
import { RUN_CANCELLED } from '../core/outcome.js';
import { isTerminal, type RunRecord } from '../core/types.js';
import type { DispatchedTask, Kernel as Engine } from '../engine/engine.js';
import { automationRepo } from '../engine/task.js';
import type { Logger } from '../log.js';
import type { Lifeline } from '../process/lifeline.js';
import { processAlive } from '../process/process-group.js';
import type { Store } from '../store/types.js';
import { unreachable } from './durable-store.js';
import type { FleetDb, FleetTiming, HostBeat, HostRow } from './fleet-db.js';
import { capabilitiesOf, refusalOf } from './placement.js';
import type { FleetQueue } from './queue.js';
import { sleep } from './sleep.js';
import type { FleetRole } from './types.js';
import type { JobWakeups } from './wakeups.js';

export interface FleetWorkerOptions {
  host: string;
  role: FleetRole;
  capacity: number;
  version: string;
  db: FleetDb;
  queue: FleetQueue;
  engine: Pick<Engine, 'executeDispatched' | 'startWorker'>;
  /**
   * Reads the runs of this host's interrupted dispatches (the engine's store); `replay` writes the
   * run results this host kept on disk while the database was away (durable-store.ts).
   */
  store: Pick<Store, 'getRun'> & {
    replay?: () => Promise<number>;
    /** When a statement last went unanswered (durable-store.ts); undefined: never. */
    unansweredAt?: () => number | undefined;
  };
  settings: () => Settings;
  log: Logger;
  timing: FleetTiming;
  /** True while this process holds the poller lock (shown on its heartbeat). */
  polling?: () => boolean;
  /** How soon the queue is asked again after it gave jobs (ms, default 250). */
  fetchIntervalMs?: number;
  /**
   * With `wakeups`: how often an idle worker asks its queue anyway (ms, default `heartbeat_interval`),
   * for a notification missed while its listening connection was down.
   */
  idleFetchMs?: number;
  /** Notifications of jobs sent to this host (wakeups.ts); without it the queue is asked every `fetchIntervalMs`. */
  wakeups?: JobWakeups;
  /**
   * Stops this host's agents if this process dies without stopping them (SIGKILL, a crash): each
   * running agent's group is registered with it (src/process/lifeline.ts).
   */
  lifeline?: Lifeline;
}

interface Running {
  abort: AbortController;
  done: Promise<void>;
  /** Stopped because this host was cut off: the dispatch stays this host's, to resume. */
  fencedOut: boolean;
  /** The run it recorded (null until the engine created it). */
  runId: string | null;
  /** The task it runs (a run of it being created has no id here yet). */
  taskKey: string;
}

/** A transcript larger than this stays on its host only (16 MiB). */
export const MAX_SHARED_TRANSCRIPT_BYTES = 16 * 1024 * 1024;

export class FleetWorker {
  private readonly running = new Map<string, Running>();
  /** This process's heartbeat instance (fleet_hosts.instance), new at every start. */
  readonly instance = randomUUID();
  /** Counted from the start: a host whose first beat never lands is fenced after heartbeat_timeout. */
  private lastBeat = Date.now();
  private fenced = false;
  private woken = new AbortController();
  /** A heartbeat is on its way (one at a time: a silent network must not pile them up). */
  private beating = false;
  /** The work after a landed beat is under way (`afterBeat`). */
  private following = false;
  private stopping = false;
  /**
   * Something could not be written while the database was away (a run's end, a dispatch's
   * finish, a claim): once it answers, this host's unfinished runs and dispatches are gone through.
   */
  private needsRecovery = false;
  private recovering = false;
  /** Set while the host drains (`run`'s drain signal): it takes no new work, from jobs or the table. */
  private draining: AbortSignal | undefined;
  /** Dispatches being claimed now (by the fetch loop or a recovery): never claimed twice at once. */
  private readonly taking = new Set<string>();
  /** Jobs this worker ran to the end (for tests and the benchmark). */
  finished = 0;
  /** The host name is this process's (`claim`). */
  private claimed = false;

  constructor(private readonly options: FleetWorkerOptions) {}

  get load(): number {
    return this.running.size;
  }

  /** Repositories (`owner/name`) this host has a checkout of: the poller prefers it for them. */
  checkouts(): string[] {
    const repos = new Set<string>();
    for (const automation of this.options.settings().automations) {
      if (existsSync(automation.repository.checkoutPath)) repos.add(automationRepo(automation));
    }
    return [...repos].sort();
  }

  /** This host's heartbeat row: what it can run is advertised on every beat (a worker only). */
  private heartbeatRow(): HostBeat {
    const { host, role, capacity, version } = this.options;
    return {
      name: host,
      role,
      pid: process.pid,
      instance: this.instance,
      version,
      capacity,
      checkouts: this.checkouts(),
      polling: this.options.polling?.() ?? false,
      capabilities: capacity > 0 ? capabilitiesOf(this.options.settings()) : null,
      machine: hostname(),
    };
  }

  private async beat(): Promise<void> {
    const sent = Date.now();
    await this.options.db.beat(this.heartbeatRow());
    // When it was sent: the database's heartbeat_at is no older than that.
    this.lastBeat = sent;
  }

  /**
   * Takes the host name before anything else runs: a second process claiming the name of a live
   * one (its heartbeat keeps moving, another instance) is refused with a `state_locked` error, so
   * it never closes the first one's runs or stops its agents as "left running by a previous
   * process". A previous process that is dead is taken over: at once when it ran on this machine
   * (its pid is gone), else once its heartbeat is `heartbeat_timeout` old or seen not to move.
   */
  async claim(signal: AbortSignal = new AbortController().signal): Promise<boolean> {
    if (this.claimed) return true;
    const { db, host, timing } = this.options;
    const machine = hostname();
    let watched: HostRow | undefined;
    for (;;) {
      const row = await db.hostRow(host);
      const free =
        row === undefined ||
        row.instance === this.instance ||
        row.stopped ||
        row.silentFor > timing.heartbeatTimeout ||
        (row.machine === machine && !processAlive(row.pid));
      if (free) {
        const sent = Date.now();
        if (await db.claimHost(this.heartbeatRow(), row?.instance)) {
          this.lastBeat = sent;
          this.claimed = true;
          return true;
        }
        watched = undefined; // another process took it meanwhile: look again
        continue;
      }
      if (watched?.instance === row.instance && watched.heartbeatAt !== row.heartbeatAt)
        throw hostTakenError(host, row);
      if (watched?.instance !== row.instance) watched = row;
      // A live holder beats every heartbeat_interval: the next look tells.
      await sleep(Math.min(250, timing.heartbeatInterval * 250), signal);
      if (signal.aborted) return false;
    }
  }

  /**
   * Runs until `stop` aborts (agents are stopped, sessions kept, their dispatches wait for this
   * host) or `drain` does (no new jobs; running agents finish first).
   */
  async run(stop: AbortSignal, drain?: AbortSignal): Promise<void> {
    const { log, timing } = this.options;
    this.draining = drain;
    if (!(await this.claim(stop))) return;
    // The database may be away at the start too: asked again, with backoff, until it answers.
    for (let failures = 0; ; failures += 1) {
      if (stop.aborted || drain?.aborted) return;
      try {
        await this.beat();
        await this.options.store.replay?.();
        const interrupted = await this.options.engine.startWorker();
        if (interrupted.length > 0)
          log.info(
            { count: interrupted.length },
            'Closed runs a previous process of this host left unfinished',
          );
        await this.resumeOwn();
        break;
      } catch (error) {
        log.warn(
          { error: errorMessage(error) },
          'Could not start working: the database does not answer; trying again',
        );
        await sleep(Math.min(5000, 250 * 2 ** failures), stop);
      }
    }

    const heartbeat = setInterval(() => void this.heartbeat(), timing.heartbeatInterval * 1000);
    const fetchEvery = this.options.fetchIntervalMs ?? 250;
    const idleEvery = this.options.idleFetchMs ?? timing.heartbeatInterval * 1000;
    const ended = drain ? AbortSignal.any([stop, drain]) : stop;
    await this.options.wakeups?.ensure();
    try {
      while (!ended.aborted) {
        const fetched = this.fenced ? 0 : await this.fetch();
        // Jobs came: more may wait. None: sleep until woken (a job sent, a slot freed) or the fallback.
        const wait = fetched > 0 || !this.options.wakeups ? fetchEvery : idleEvery;
        await sleep(wait, AbortSignal.any([ended, this.woken.signal]));
        if (this.woken.signal.aborted) this.woken = new AbortController();
      }
      // Draining: the running agents finish (a stop meanwhile ends them).
      while (this.running.size > 0 && !stop.aborted) {
        await Promise.race([...[...this.running.values()].map((entry) => entry.done), untilAborted(stop)]);
      }
    } finally {
      this.stopping = true;
      for (const entry of this.running.values()) entry.abort.abort();
      await Promise.all([...this.running.values()].map((entry) => entry.done));
      clearInterval(heartbeat);
      await this.options.db.stopped(this.options.host, this.instance).catch(() => {});
    }
  }

  private async heartbeat(): Promise<void> {
    // The deadline is checked on every tick, whatever an earlier beat still waits for: over a
    // network that drops packets a statement fails only at its timeout, later than
    // heartbeat_timeout, and by then the poller may be giving this host's work to another.
    if (this.stopping) return;
    this.fenceWhenSilent();
    if (this.beating) return;
    this.beating = true;
    try {
      await this.beat();
      // The listening connection, if it broke, comes back with the database.
      void this.options.wakeups?.ensure();
      if (this.fenced) {
        this.fenced = false;
        this.needsRecovery = true;
        this.options.log.warn({}, 'The database answers again: taking work again');
      }
    } catch (error) {
      // A clean stop closes the pool under a beat in flight: nothing to say.
      if (this.stopping) return;
      const silent = (Date.now() - this.lastBeat) / 1000;
      this.options.log.warn(
        { error: errorMessage(error), silentFor: Math.round(silent) },
        'Heartbeat failed',
      );
      this.fenceWhenSilent();
      return;
    } finally {
      this.beating = false;
    }
    void this.afterBeat();
  }

  /**
   * The work a landed heartbeat allows: the recovery after a cut, queued dispatches no job brought,
   * operators' cancels. Outside the beat, one at a time: a recovery that takes seconds (stopping
   * agents a dead process left, resuming dispatches) must not hold up the next beats, or the host
   * would fence itself for the silence its own recovery made.
   */
  private async afterBeat(): Promise<void> {
    if (this.following || this.stopping) return;
    this.following = true;
    try {
      if (this.needsRecovery) await this.returnFromCut();
      // A poller runs no agents: no dispatch is placed on it, and it reads none at every beat.
      else if (this.options.capacity > 0) await this.takeQueued();
      // An operator's cancel (the board, `curupira cancel`), told apart from a stop of this host.
      for (const id of await this.options.db.cancelRequests(this.options.host))
        this.running.get(id)?.abort.abort(RUN_CANCELLED);
    } catch (error) {
      if (!this.stopping)
        this.options.log.warn({ error: errorMessage(error) }, 'Could not look for cancels and queued work');
    } finally {
      this.following = false;
    }
  }

  /** No heartbeat for heartbeat_timeout: stop this host's agents and take no work. */
  private fenceWhenSilent(): void {
    const silent = (Date.now() - this.lastBeat) / 1000;
    if (this.fenced || silent < this.options.timing.heartbeatTimeout) return;
    this.fenced = true;
    // A poller runs no agents: it has none to stop.
    if (this.options.capacity === 0)
      this.options.log.error({}, 'No heartbeat for heartbeat_timeout: the database does not answer');
    else
      this.options.log.error(
        { running: this.running.size },
        "No heartbeat for heartbeat_timeout: stopping this host's agents and taking no work until the database answers (their sessions are kept)",
      );
    for (const entry of this.running.values()) {
      entry.fencedOut = true;
      entry.abort.abort();
    }
  }

  /**
   * Back from a cut: once the runs it stopped have ended, their records (left unfinished: the
   * database did not answer) are closed as a restart would close them, and this host's dispatches
   * that were not taken back meanwhile resume.
   */
  private async returnFromCut(): Promise<void> {
    if (this.fenced || this.stopping) return;
    if (this.recovering) {
      // A run the cut stopped ended during the recovery under way, which may have passed over its
      // dispatch while it still ran: gone through again at the next heartbeat.
      this.needsRecovery = true;
      return;
    }
    // Runs being created now (no id yet) are told apart by their task (`inFlight`): waiting for
    // them instead could put the recovery off for as long as one of them takes to start.
    this.recovering = true;
    this.needsRecovery = false;
    try {
      // The results kept on disk first: a run whose agent exited is finished as its result says.
      await this.options.store.replay?.();
      await this.options.engine.startWorker((run) => this.inFlight(run));
      await this.resumeOwn();
    } catch (error) {
      this.needsRecovery = true;
      this.options.log.warn({ error: errorMessage(error) }, 'Could not resume this host’s dispatches');
    } finally {
      this.recovering = false;
    }
  }

  /**
   * A run this process runs now, as recovery looks at it: an entry's run, or one an entry that has
   * no run id yet is creating (same task). Entries may start while a recovery is under way (the
   * fetch loop goes on): a snapshot taken at its start would call their runs left over and stop them.
   */
  private inFlight(run: RunRecord): boolean {
    for (const entry of this.running.values()) {
      if (entry.runId === run.id) return true;
      if (entry.runId === null && entry.taskKey === run.taskKey) return true;
    }
    return false;
  }

  /**
   * This host's queued dispatches, taken from the table at every landed beat whatever the job queue
   * brought: a job can be lost where this host never sees it fail (a fetch that took effect and
   * whose answer the cut lost, leaving the job active for nobody; a send the poller's broken
   * connection left unanswered, then sent again under the same job id, which the queue keeps
   * once). A dispatch its job also brings is claimed once: the claim is atomic, and a job whose
   * dispatch moved on is dropped.
   */
  private async takeQueued(): Promise<void> {
    try {
      for (const { dispatch } of await this.options.db.own(this.options.host)) {
        if (dispatch.state !== 'queued' || this.stopping || this.fenced || this.draining?.aborted) continue;
        // No room now: looked at again at the next heartbeat.
        if (this.running.size >= this.options.capacity) break;
        await this.take(dispatch.id);
      }
    } catch (error) {
      this.options.log.warn({ error: errorMessage(error) }, 'Could not look for queued dispatches');
    }
  }

  /** Dispatches of this host that a previous process (or this one, before a cut) left: run again. */
  private async resumeOwn(): Promise<void> {
    for (const { dispatch, payload } of await this.options.db.own(this.options.host)) {
      if (this.running.has(dispatch.id) || this.taking.has(dispatch.id)) continue;
      if (dispatch.state === 'queued') {
        await this.take(dispatch.id);
        continue;
      }
      // Its run ended before the stop (the agent exited; the restart finished it as its outcome
      // said): that is its result. A run stopped by the stop or cut resumes.
      const last = dispatch.runId ? await this.options.store.getRun(dispatch.runId) : undefined;
      if (last && isTerminal(last.status) && last.status !== 'cancelled') {
        await this.copyTranscript(last);
        if (await this.options.db.finish(dispatch.id, this.options.host, last.id)) this.finished += 1;
        continue;
      }
      const job = parseJob(payload);
      if (!job || (await this.refused(dispatch.id, job))) continue;
      this.options.log.info(
        { task: dispatch.taskKey, dispatch: dispatch.id },
        'Resuming a dispatch this host was running',
      );
      this.start(dispatch.id, { ...job, resume: true });
    }
  }

  /** A statement of this host's store went unanswered at or after `since` (epoch ms). */
  private unansweredSince(since: number): boolean {
    const at = this.options.store.unansweredAt?.();
    return at !== undefined && at >= since;
  }

  /** Writes a heartbeat now (the process became, or stopped being, the poller: the fleet page says so at once). */
  async beatNow(): Promise<void> {
    await this.heartbeat();
  }

  /**
   * Copies a finished run's transcript into the shared database (the file stays here too): the
   * board of whichever host polls, and `runs show` anywhere, can read it. One too large for the
   * database is left on this host only, and the run page says where.
   */
  private async copyTranscript(run: RunRecord): Promise<void> {
    if (!run.transcriptPath) return;
    try {
      const size = statSync(run.transcriptPath).size;
      if (size > MAX_SHARED_TRANSCRIPT_BYTES) {
        this.options.log.info(
          { run: run.id, bytes: size },
          'A transcript is too large to share through the database; it stays on this host',
        );
        return;
      }
      await this.options.db.saveTranscript(
        run.id,
        this.options.host,
        readFileSync(run.transcriptPath, 'utf8'),
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return; // the agent never started: no transcript
      this.options.log.warn({ run: run.id, error: errorMessage(error) }, 'Could not share a transcript');
    }
  }

  /** Wakes the fetch loop (a notification, a slot freed). */
  wake(): void {
    this.woken.abort();
  }

  /** Takes up to the free slots' worth of jobs; returns how many the queue gave. */
  private async fetch(): Promise<number> {
    const room = this.options.capacity - this.running.size;
    if (room <= 0 || this.stopping) return 0;
    let jobs: { jobId: string; dispatchId: string }[];
    try {
      jobs = await this.options.queue.fetch(this.options.host, room);
    } catch (error) {
      // Jobs it may have handed out anyway are taken from the table at the next beat (`takeQueued`).
      this.options.log.warn({ error: errorMessage(error) }, 'Could not fetch jobs');
      return 0;
    }
    for (const job of jobs) {
      await this.take(job.dispatchId);
      await this.options.queue.complete(this.options.host, job.jobId);
    }
    return jobs.length;
  }

  /** Claims a queued dispatch of this host and starts it; a job whose dispatch moved on is dropped. */
  private async take(dispatchId: string): Promise<void> {
    if (this.running.has(dispatchId) || this.taking.has(dispatchId)) return;
    this.taking.add(dispatchId);
    try {
      const claimed = await this.options.db.claim(dispatchId, this.options.host).catch((error: unknown) => {
        this.options.log.warn({ error: errorMessage(error), dispatch: dispatchId }, 'Could not claim a job');
        // Its row stays queued for this host: taken once the database answers.
        this.needsRecovery = true;
        return undefined;
      });
      if (!claimed) return;
      const job = parseJob(claimed.payload);
      if (!job) {
        await this.options.db.finish(dispatchId, this.options.host, null, 'unreadable task');
        return;
      }
      if (await this.refused(dispatchId, job)) return;
      if (this.fenced || this.stopping) {
        // The host fenced itself (or began to stop) while the claim was under way: started now, the
        // run would go on where the poller may already be giving this host's work to another. The
        // dispatch stays this host's and resumes once the database answers (or at the next start).
        this.needsRecovery = true;
        return;
      }
      this.start(dispatchId, job);
    } finally {
      this.taking.delete(dispatchId);
    }
  }

  /**
   * True when this host cannot run the job (its settings have no such automation, or it works on
   * another repository): the dispatch goes back to the poller, which places it elsewhere at once.
   */
  private async refused(dispatchId: string, job: DispatchedTask): Promise<boolean> {
    const refusal = refusalOf(this.options.settings().automations, {
      automationId: job.automationId,
      repo: job.task.identity.repo,
    });
    if (refusal === undefined) return false;
    this.options.log.warn(
      { task: job.task.key, automation: job.automationId, reason: refusal },
      'Refusing a job this host cannot run: its poller places it on another host',
    );
    await this.options.db.refuse(dispatchId, this.options.host, refusal).catch((error: unknown) => {
      this.options.log.warn({ error: errorMessage(error), dispatch: dispatchId }, 'Could not refuse a job');
    });
    return true;
  }

  private start(dispatchId: string, job: DispatchedTask): void {
    const { db, host, log, engine, lifeline } = this.options;
    const abort = new AbortController();
    const entry: Running = {
      abort,
      done: Promise.resolve(),
      fencedOut: false,
      runId: null,
      taskKey: job.task.key,
    };
    let recorded: string | null = null;
    let agent: number | null = null;
    const onUpdate = (run: RunRecord): void => {
      // The agent leads its own process group: it must not outlive this process (see `lifeline`).
      if (lifeline && run.agentPid !== agent) {
        if (agent !== null) lifeline.forget(agent);
        agent = run.agentPid;
        if (agent !== null) lifeline.watch(agent);
      }
      if (run.id === recorded) return;
      recorded = run.id;
      entry.runId = run.id;
      void db.setRun(dispatchId, host, run.id).catch(() => {});
    };
    const startedAt = Date.now();
    const done = (async () => {
      let run: RunRecord | undefined;
      let lostDatabase = false;
      try {
        run = await engine.executeDispatched(job, abort.signal, onUpdate);
      } catch (error) {
        lostDatabase = unreachable(error);
        log.error({ task: job.task.key, error: errorMessage(error) }, 'A dispatched task failed to run');
      }
      // Stopped by this host's own stop or cut: the dispatch stays this host's, to resume.
      // (Checked on the entry: the database may answer again before this run has ended.)
      if ((this.stopping || entry.fencedOut) && (!run || run.status === 'cancelled')) return;
      // The database went away under the run: its record (and what the agent did, kept on disk
      // when it exited) is gone through once it answers; the dispatch stays this host's till then.
      if (lostDatabase || (run && !isTerminal(run.status))) {
        this.needsRecovery = true;
        return;
      }
      // Cancelled by its engine, not by this host, while a statement went unanswered: its agent was
      // stopped because the start or session it announced could not be recorded. As after a cut, the
      // dispatch stays this host's and its session resumes once the database answers. Finished here,
      // it would read as a dispatch whose agent never started, which a new poller dispatches again.
      if (run?.status === 'cancelled' && !abort.signal.aborted && this.unansweredSince(startedAt)) {
        log.warn(
          { task: job.task.key, run: run.id },
          'A run was stopped because the database did not record it: resumed once the database answers',
        );
        this.needsRecovery = true;
        return;
      }
      // Before the dispatch is done, so the poller's board can show it as soon as the run ends.
      if (run) await this.copyTranscript(run);
      try {
        if (await db.finish(dispatchId, host, run?.id ?? null)) this.finished += 1;
        else
          log.warn(
            { task: job.task.key },
            'Finished a dispatch that was taken back meanwhile; its result stays in the run history',
          );
      } catch (error) {
        // Left running for this host: finished from its run once the database answers.
        this.needsRecovery = true;
        log.warn(
          { task: job.task.key, error: errorMessage(error) },
          'Could not record a finished dispatch yet: recorded once the database answers',
        );
      }
    })().finally(() => {
      if (agent !== null) lifeline?.forget(agent);
      this.running.delete(dispatchId);
      this.wake();
      // The last run a cut stopped ended after the database answered again.
      if (entry.fencedOut && !this.fenced) void this.returnFromCut();
    });
    entry.done = done;
    this.running.set(dispatchId, entry);
  }
}

function hostTakenError(host: string, row: HostRow): StateError {
  const where = row.machine ? ` on ${row.machine}` : '';
  return new StateError(
    `host name '${host}' is in use by a live curupira process (pid ${row.pid}${where}, heartbeat ${Math.round(row.silentFor)} s ago): name this process otherwise (CURUPIRA_FLEET_HOST=NAME in its environment, or \`host\` in [settings.fleet] when it has a settings file of its own), or stop the other one first`,
    { code: 'state_locked' },
  );
}

function parseJob(payload: string): DispatchedTask | undefined {
  try {
    return JSON.parse(payload) as DispatchedTask;
  } catch {
    return undefined;
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
