/**
 * The job transport: pg-boss 10, one queue per host (`run-<host>`), in the schema `<schema>_boss`.
 * A job carries only its dispatch id: the dispatch row (fleet-db.ts) holds the task and is the
 * truth about who runs what; the job is how a worker hears of it without polling our tables.
 * Jobs are never retried by pg-boss: a lost host's work is taken back by the poller instead.
 */
import PgBoss from 'pg-boss';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../log.js';

export interface FleetQueueOptions {
  connectionString: string;
  schema: string;
  /** Run pg-boss's maintenance (expiry, archiving) in this process: the pollers do. */
  supervise: boolean;
  log: Logger;
}

/** The host's queue name: `run-` and the host name, other characters than letters, digits and `-` as `_<hex>`. */
export function hostQueue(host: string): string {
  return `run-${host.replace(/[^A-Za-z0-9-]/g, (c) => `_${c.charCodeAt(0).toString(16).padStart(2, '0')}`)}`;
}

interface JobData {
  dispatchId: string;
}

export class FleetQueue {
  private readonly boss: PgBoss;
  private readonly created = new Set<string>();
  /** Statements pg-boss was asked to run (sends, fetches, completions), for the benchmark. */
  calls = 0;

  constructor(options: FleetQueueOptions) {
    this.boss = new PgBoss({
      connectionString: options.connectionString,
      schema: `${options.schema}_boss`,
      max: 3,
      supervise: options.supervise,
      schedule: false,
      migrate: true,
      application_name: 'curupira-queue',
    });
    this.boss.on('error', (error: unknown) => {
      options.log.warn({ error: errorMessage(error) }, 'Job queue error');
    });
  }

  async start(): Promise<void> {
    await this.boss.start();
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: false, wait: true, close: true }).catch(() => {});
  }

  private async ensure(host: string): Promise<string> {
    const name = hostQueue(host);
    if (this.created.has(name)) return name;
    for (let attempt = 1; ; attempt += 1) {
      this.calls += 1;
      try {
        if (!(await this.boss.getQueue(name)))
          await this.boss.createQueue(name, { name, retryLimit: 0, expireInSeconds: 23 * 3600 });
        break;
      } catch (error) {
        // Two processes creating it at once (the poller's first send, the worker's first fetch):
        // one wins, and the other may even be chosen as a deadlock's victim. Asked again, it is there.
        if (await this.boss.getQueue(name).catch(() => null)) break;
        if (attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 100));
      }
    }
    this.created.add(name);
    return name;
  }

  /** Sends the job of a dispatch to its host; sending it again is a no-op (the dispatch id is the job id). */
  async send(host: string, dispatchId: string): Promise<void> {
    const name = await this.ensure(host);
    this.calls += 1;
    await this.boss.send(name, { dispatchId } satisfies JobData, { id: dispatchId, retryLimit: 0 });
  }

  /** Up to `count` jobs of this host's queue, now active. */
  async fetch(host: string, count: number): Promise<{ jobId: string; dispatchId: string }[]> {
    const name = await this.ensure(host);
    this.calls += 1;
    const jobs = (await this.boss.fetch<JobData>(name, { batchSize: count })) ?? [];
    return jobs.map((job) => ({ jobId: job.id, dispatchId: job.data.dispatchId }));
  }

  async complete(host: string, jobId: string): Promise<void> {
    this.calls += 1;
    await this.boss.complete(hostQueue(host), jobId).catch(() => {});
  }
}
