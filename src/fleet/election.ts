/**
 * One poller at a time: the holder of a PostgreSQL session advisory lock, on a connection of its
 * own. The lock goes with the connection: a poller killed or cut off frees it as soon as the
 * server sees the connection close (at once for a dead process on a live machine; for a machine
 * that vanished, after the server's TCP keepalive settings: docs/deployment.md). A standby asks
 * again every heartbeat interval, so failover takes at most one interval after that.
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
  log: Logger;
}

/** The lock's key: one per schema, so two fleets on one database do not share a poller. */
export function pollerLockName(schema: string): string {
  return `curupira:${schema}:poller`;
}

export class PollerLock {
  private client: pg.Client | undefined;
  private lostController = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: PollerLockOptions) {}

  /** Aborted when a held lock is lost (its connection broke). */
  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  /** Waits until this process holds the lock (true), or `signal` aborts first (false). */
  async acquire(signal: AbortSignal): Promise<boolean> {
    const { log } = this.options;
    let waiting = false;
    while (!signal.aborted) {
      try {
        if (await this.tryOnce()) return true;
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
        application_name: 'curupira-poller-lock',
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
    this.lostController = new AbortController();
    this.timer = setInterval(() => {
      this.client?.query('SELECT 1').catch(() => void this.onBroken());
    }, this.options.intervalSeconds * 1000);
    this.timer.unref();
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
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  /** Gives the lock up (closing its connection frees it). */
  async release(): Promise<void> {
    await this.drop();
  }
}
