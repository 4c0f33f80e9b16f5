/**
 * Wake-ups instead of a busy fetch loop: the poller `NOTIFY`s a host when it sends it a job, and the
 * host, `LISTEN`ing on a connection of its own, fetches at once. An idle worker then asks its queue
 * only every `heartbeat_interval` (the fallback for a notification missed while its listening
 * connection was down), so an idle fleet sends a few statements a second, not one per 250 ms per host.
 */
import pg from 'pg';

/** One channel per database; the payload names the schema and the host (`<schema>/<host>`). */
export const JOBS_CHANNEL = 'curupira_jobs';

export function wakePayload(schema: string, host: string): string {
  return `${schema}/${host}`;
}

export class JobWakeups {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly payload: string,
    private readonly onWake: () => void,
  ) {}

  /** Listens, (re)connecting when needed; a failure is left for the next call (the fallback fetch covers it). */
  ensure(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      application_name: 'curupira-wakeups',
    });
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    client.on('notification', (message) => {
      if (message.channel === JOBS_CHANNEL && message.payload === this.payload) this.onWake();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
      if (this.closed) {
        await client.end().catch(() => {});
        return;
      }
      this.client = client;
      // What was sent while nobody listened is fetched now.
      this.onWake();
    } catch {
      await client.end().catch(() => {});
    }
  }

  private drop(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    void client.end().catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
