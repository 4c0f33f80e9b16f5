/**
 * One poller at a time: the holder of a PostgreSQL session advisory lock, on a connection of its
 * own. The lock goes with the connection: a poller killed frees it as soon as the server sees the
 * connection close (at once for a dead process on a live machine). A poller that stops answering
 * while its connection stays up (a frozen process or machine, a host whose other connections are
 * cut) would hold it for as long as the server's TCP keepalives allow; a standby does not wait for
 * that: once the holder's own heartbeat is `heartbeat_timeout` old, it ends the holder's lock
 * session (`pg_terminate_backend`) and takes the lock. A standby asks every heartbeat interval.
 *
 * The lock is also the poller's fencing token: its session's backend pid goes with every dispatch
 * the poller records (src/fleet/fleet-db.ts), and the database refuses one from a session that no
 * longer holds the lock, so a poller frozen and then thawed cannot place work its successor owns.
 */
import pg from 'pg';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../log.js';
import { sleep } from './sleep.js';

export interface PollerLockOptions {
  connectionString: string;
  schema: string;
  /** Seconds between tries (standby) and between checks that the held lock's connection lives. */
  intervalSeconds: number;
  /** A holder whose host has not beaten for this long (seconds) is ended by a standby. */
  heartbeatTimeoutSeconds: number;
  /** This process's heartbeat instance (fleet_hosts.instance): its lock session is named after it. */
  instance: string;
  log: Logger;
}

/** What a dispatch must prove: the backend that holds the poller lock is this poller's. */
export interface PollerFence {
  pid: number;
  lockName: string;
}

/** The lock key of `pg_try_advisory_lock(hashtext(name))` as pg_locks shows it (two oids). */
export const LOCK_HELD_BY = (pid: string, name: string): string =>
  `EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = ${pid} AND l.locktype = 'advisory' AND l.granted
     AND l.objsubid = 1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtext(${name})::bigint)`;

const LOCK_APPLICATION = 'curupira-poller ';

/** The lock's key: one per schema, so two fleets on one database do not share a poller. */
export function pollerLockName(schema: string): string {
  return `curupira:${schema}:poller`;
}

export class PollerLock {
  private client: pg.Client | undefined;
  private lostController = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private heldBy: number | undefined;
  /** The silent holder this standby was not allowed to end. */
  private refusedFor: number | undefined;

  constructor(private readonly options: PollerLockOptions) {}

  /** Aborted when a held lock is lost (its connection broke). */
  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  /** While the lock is held: the proof a dispatch carries (undefined otherwise). */
  fence(): PollerFence | undefined {
    if (this.heldBy === undefined) return undefined;
    return { pid: this.heldBy, lockName: pollerLockName(this.options.schema) };
  }

  /** Waits until this process holds the lock (true), or `signal` aborts first (false). */
  async acquire(signal: AbortSignal): Promise<boolean> {
    const { log } = this.options;
    let waiting = false;
    while (!signal.aborted) {
      try {
        if (await this.tryOnce()) return true;
        if ((await this.endSilentHolder(signal)) && (await this.tryOnce())) return true;
        if (!waiting) log.info({}, 'Another process is the poller; standing by to take over');
        waiting = true;
      } catch (error) {
        log.warn({ error: errorMessage(error) }, 'Could not ask for the poller lock; trying again');
        await this.drop();
      }
      await sleep(this.options.intervalSeconds * 1000, signal);
    }
    return false;
  }

  private async tryOnce(): Promise<boolean> {
    if (!this.client) {
      const client = new pg.Client({
        connectionString: this.options.connectionString,
        connectionTimeoutMillis: 5000,
        query_timeout: 10_000,
        keepAlive: true,
        options: `-c search_path=${this.options.schema}`,
        application_name: `${LOCK_APPLICATION}${this.options.instance}`,
      });
      client.on('error', () => {
        void this.onBroken();
      });
      await client.connect();
      this.client = client;
    }
    const result = await this.client.query<{ held: boolean }>(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS held',
      [pollerLockName(this.options.schema)],
    );
    if (result.rows[0]?.held !== true) return false;
    const backend = await this.client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    this.heldBy = backend.rows[0]!.pid;
    this.lostController = new AbortController();
    this.timer = setInterval(() => {
      this.client?.query('SELECT 1').catch(() => void this.onBroken());
    }, this.options.intervalSeconds * 1000);
    this.timer.unref();
    return true;
  }

  /**
   * Ends the lock session of a holder whose own host row (named by the session) has not beaten for
   * `heartbeat_timeout`: true when it ended one. A holder with no such row (never beat yet, or not
   * a fleet process) is left alone.
   */
  private async endSilentHolder(signal: AbortSignal): Promise<boolean> {
    const result = await this.client!.query<{ pid: number; name: string; silent_for: number }>(
      `SELECT l.pid, h.name, EXTRACT(EPOCH FROM (now() - h.heartbeat_at))::float8 AS silent_for
         FROM pg_locks l
         JOIN pg_stat_activity a ON a.pid = l.pid
         JOIN fleet_hosts h ON a.application_name = $2 || h.instance
        WHERE ${LOCK_HELD_BY('l.pid', '$1')}
          AND h.heartbeat_at < now() - make_interval(secs => $3)`,
      [pollerLockName(this.options.schema), LOCK_APPLICATION, this.options.heartbeatTimeoutSeconds],
    );
    const silent = result.rows[0];
    if (!silent || silent.pid === this.refusedFor) return false;
    this.options.log.warn(
      { host: silent.name, silentFor: Math.round(silent.silent_for) },
      'The poller has not beaten for heartbeat_timeout: ending its lock session to take over',
    );
    try {
      await this.client!.query('SELECT pg_terminate_backend($1)', [silent.pid]);
    } catch (error) {
      this.options.log.warn(
        { host: silent.name, error: errorMessage(error) },
        "Could not end the silent poller's lock session (the database role may not allow it): waiting for its connection to close",
      );
      // Said once: the standby keeps asking for the lock, which the server frees when TCP gives up.
      this.refusedFor = silent.pid;
      return false;
    }
    // The lock is free once the ended backend has gone.
    for (let i = 0; i < 20; i++) {
      const gone = await this.client!.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [silent.pid]);
      if (gone.rowCount === 0) break;
      await sleep(50, signal);
    }
    return true;
  }

  private async onBroken(): Promise<void> {
    const held = this.timer !== undefined;
    await this.drop();
    if (held) {
      this.options.log.error({}, 'Lost the connection that holds the poller lock: no longer the poller');
      this.lostController.abort();
    }
  }

  private async drop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.heldBy = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  /** Gives the lock up (closing its connection frees it). */
  async release(): Promise<void> {
    await this.drop();
  }
}
