/**
 * The fleet roles (issue 17): `curupira serve --role all|poller|worker` and `curupira worker`.
 * Every role heartbeats. A worker (and `all`) runs the jobs of its own queue. A poller (and `all`)
 * stands by until it holds the poller lock, then runs the watch engine behind the board, with a
 * `FleetRunner` handing tasks to workers; losing the lock ends that engine and it stands by again.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Settings } from '../config/types.js';
import { errorMessage, UsageError } from '../core/errors.js';
import { stateDir } from '../engine/paths.js';
import { Engine } from '../features.js';
import { COUNT_QUERIES_ENV, startQueryCount } from '../fleet/count-queries.js';
import { durableStore } from '../fleet/durable-store.js';
import { PollerLock } from '../fleet/election.js';
import { FleetDb, type FleetTiming, fleetPool } from '../fleet/fleet-db.js';
import { FleetQueue } from '../fleet/queue.js';
import { FleetRunner, fleetKillGraceMs } from '../fleet/runner.js';
import { sleep } from '../fleet/sleep.js';
import type { FleetRole } from '../fleet/types.js';
import { JobWakeups, wakePayload } from '../fleet/wakeups.js';
import { FleetWorker } from '../fleet/worker.js';
import type { Logger } from '../log.js';
import { type Lifeline, startLifeline } from '../process/lifeline.js';
import { openStore, stateLocation } from '../store/index.js';
import { connectionStringWithPassword } from '../store/postgres/open.js';
import { parseStateUrl } from '../store/postgres/url.js';
import type { Store } from '../store/types.js';
import { packageVersion } from '../version.js';
import type { OpenFleet } from './fleet-status.js';
import type { CliIo } from './io.js';
import { engineControls, settingsReloader } from './run.js';
import { serveEngine } from './serve-engine.js';

export const ROLES: readonly FleetRole[] = ['all', 'poller', 'worker'];

export function parseRole(value: string): FleetRole {
  if ((ROLES as readonly string[]).includes(value)) return value as FleetRole;
  throw new UsageError(`--role must be all, poller or worker, got '${value}'`);
}

/** Names this process in the fleet over the settings file's `host` (several processes, one file). */
export const FLEET_HOST_ENV = 'CURUPIRA_FLEET_HOST';

const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/**
 * This process's host name: `CURUPIRA_FLEET_HOST`, else `[settings.fleet] host`, else the
 * machine's name made safe.
 */
export function fleetHostName(settings: Settings, env: NodeJS.ProcessEnv = {}): string {
  const named = env[FLEET_HOST_ENV]?.trim();
  if (named) {
    if (!HOST_NAME.test(named))
      throw new UsageError(
        `${FLEET_HOST_ENV} must be 1-63 letters, digits, \`.\`, \`_\` or \`-\`, got '${named}'`,
      );
    return named;
  }
  const configured = settings.execution.fleet.host;
  if (configured) return configured;
  const machine = hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '');
  return (machine || 'host').slice(0, 63);
}

export function fleetTiming(settings: Settings): FleetTiming {
  const fleet = settings.execution.fleet;
  return {
    heartbeatInterval: fleet.heartbeat_interval,
    heartbeatTimeout: fleet.heartbeat_timeout,
    resumeGrace: fleet.resume_grace,
  };
}

/** The store a worker's engine writes through: every run it opens records this host. */
export function hostStore(store: Store, host: string): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'createRun') {
        const createRun: Store['createRun'] = (init, options) => target.createRun({ ...init, host }, options);
        return createRun;
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `curupira status` on a host with no daemon: the fleet read from the shared state (a small pool). */
export const openFleetView: OpenFleet = async (settings) => {
  const url = settings.execution.state_db_url;
  if (!url) return undefined;
  const parsed = parseStateUrl(url);
  const { connectionString } = connectionStringWithPassword(parsed.connectionString);
  const pool = fleetPool(connectionString, parsed.schema, 2);
  return { view: new FleetDb(pool, fleetTiming(settings)), close: () => pool.end() };
};

export interface FleetRoleOptions {
  role: FleetRole;
  settings: Settings;
  /** The settings file, re-read by the poller's watch engine when it changes. */
  file: string;
  io: CliIo;
  log: Logger;
  /** The board's listener (pollers only; a standby binds nothing). */
  listen?: { host: string; port: number; banner: boolean };
}

/** Runs one fleet role until a signal stops it; returns whether a signal interrupted it. */
export async function runFleetRole(options: FleetRoleOptions): Promise<{ interrupted: boolean }> {
  const { role, settings, io, log, file } = options;
  const url = settings.execution.state_db_url;
  if (!url)
    throw new UsageError(
      `--role ${role} needs state_db_url in [settings]: a fleet shares its state in PostgreSQL (docs/deployment.md)`,
    );
  const parsed = parseStateUrl(url);
  const { schema, redacted } = parsed;
  // With the password from PGPASSWORD or the password file, as the store's own pool has it (never printed).
  const { connectionString } = connectionStringWithPassword(parsed.connectionString);
  const timing = fleetTiming(settings);
  const host = fleetHostName(settings, io.env);
  const { signals, engineBase, stop, drain } = engineControls(settings, io, log, file);
  process.on('SIGINT', signals.handle);
  process.on('SIGTERM', signals.handle);
  // Off unless the environment asks (bench/fleet.mjs): statements per connection, to a file.
  const counting = startQueryCount(io.env[COUNT_QUERIES_ENV]);
  const store = await openStore(stateLocation(settings.execution));
  const pool = fleetPool(connectionString, schema);
  const db = new FleetDb(pool, timing, schema);
  const queue = new FleetQueue({ connectionString, schema, supervise: role !== 'worker', log });
  counting?.also('fleetDbQueries', () => db.queries);
  counting?.also('queueCalls', () => queue.calls);
  let lock: PollerLock | undefined;
  let closeWakeups: JobWakeups | undefined;
  let lifeline: Lifeline | undefined;
  let polling = false;
  // Ends the worker when this process ends on an error: nothing may keep beating on a closed pool.
  const ending = new AbortController();
  let working: Promise<void> | undefined;
  let failure: unknown;
  // A cut of the database costs a statement a few tries, not the run (durable-store.ts).
  const retryMs = timing.heartbeatTimeout * 1000;
  try {
    await queue.start();
    const works = role !== 'poller';
    const capacity = works
      ? (settings.execution.fleet.host_max_active_tasks ?? settings.execution.max_active_tasks)
      : 0;
    // An agent of this host must not outlive it: killed, it could not stop them, and the poller
    // restarts their tasks elsewhere (half the heartbeat timeout from SIGTERM to SIGKILL, at most 10 s).
    if (works) lifeline = startLifeline(fleetKillGraceMs(timing));
    // What this host's runs write survives a cut: their results wait on its disk for the database.
    const workerStore = durableStore(hostStore(store, host), {
      retryMs,
      dir: join(stateDir(settings), 'fleet-results'),
      log,
      host,
    });
    const workerEngine = new Engine({
      ...engineBase(workerStore),
      mode: 'watch',
      host,
      // A cut-off host's agents are stopped within this, well before the poller takes their work back.
      killGraceMs: fleetKillGraceMs(timing),
    });
    // Jobs sent to this host wake it at once (the poller's NOTIFY); idle, it asks its queue rarely.
    const wakeups = works
      ? new JobWakeups(connectionString, wakePayload(schema, host), () => worker.wake())
      : undefined;
    closeWakeups = wakeups;
    const worker: FleetWorker = new FleetWorker({
      ...(wakeups ? { wakeups } : {}),
      host,
      role,
      capacity,
      version: packageVersion(),
      db,
      queue,
      engine: workerEngine,
      store: workerStore,
      settings: () => settings,
      log,
      timing,
      polling: () => polling,
      ...(lifeline ? { lifeline } : {}),
    });
    // The host name first: a second process claiming a live one's name is refused here, before it
    // could close that one's runs or stop its agents as a previous process's.
    if (!(await worker.claim(stop.signal))) return { interrupted: signals.interrupted() };
    log.info({ host, role, state: redacted }, `Fleet ${role} ${host} started`);
    const workerStop = AbortSignal.any([stop.signal, ending.signal]);
    working = worker.run(workerStop, drain.signal).catch((error: unknown) => {
      // Its own loop gave up (it never should): the process ends, non-zero, for its service manager.
      failure ??= error;
      ending.abort();
    });
    const pollerStore = durableStore(store, { retryMs, log });

    if (role !== 'worker') {
      lock = new PollerLock({
        connectionString,
        schema,
        intervalSeconds: timing.heartbeatInterval,
        heartbeatTimeoutSeconds: timing.heartbeatTimeout,
        instance: worker.instance,
        log,
      });
      const held = lock;
      const ended = AbortSignal.any([stop.signal, drain.signal, ending.signal]);
      for (let failures = 0; !ended.aborted; ) {
        if (!(await lock.acquire(ended))) break;
        polling = true;
        log.info({ host }, 'This process is the poller now');
        void worker.beatNow();
        const pollStop = new AbortController();
        const onLost = (): void => pollStop.abort();
        const lost = lock.lost;
        lost.addEventListener('abort', onLost, { once: true });
        ended.addEventListener('abort', onLost, { once: true });
        const runner = new FleetRunner({
          db,
          queue,
          store: pollerStore,
          log,
          timing,
          fence: () => held.fence(),
          onFenced: onLost,
        });
        runner.start(pollStop.signal);
        const engine = {
          ...engineBase(pollerStore),
          mode: 'watch' as const,
          runner,
          host,
          stopSignal: pollStop.signal,
          reload: settingsReloader(options.file),
        };
        let failed = false;
        try {
          if (options.listen) await serveEngine(io, { engine, fleet: db, ...options.listen });
          else await new Engine(engine).run();
          failures = 0;
        } catch (error) {
          // The database went away under the engine (its start reads the state): not a reason to
          // stop polling for good. The lock is given up; this process stands by and tries again.
          failed = true;
          log.error(
            { error: errorMessage(error) },
            'The poller stopped on an error; standing by to poll again',
          );
        } finally {
          // Every election adds these: removed, or a long life of re-elections piles them up.
          lost.removeEventListener('abort', onLost);
          ended.removeEventListener('abort', onLost);
        }
        pollStop.abort();
        polling = false;
        void worker.beatNow();
        await lock.release();
        if (failed) {
          failures += 1;
          await sleep(Math.min(10_000, 500 * 2 ** failures), ended);
        }
      }
    }
    await working;
    if (failure !== undefined) throw failure;
  } finally {
    // The worker stops (its agents, its heartbeat) before the pools it uses close.
    ending.abort();
    await working;
    process.off('SIGINT', signals.handle);
    process.off('SIGTERM', signals.handle);
    lifeline?.close();
    await lock?.release();
    await closeWakeups?.close();
    await queue.stop();
    await pool.end().catch(() => {});
    await store.close();
    counting?.stop();
  }
  return { interrupted: signals.interrupted() };
}
