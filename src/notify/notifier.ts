/**
 * The notifier: `notify(event)` queues one row per interested target in the store (migration 8)
 * before anything is sent, and a delivery loop POSTs the due rows, retrying failures with backoff.
 *
 * - Restart-safe: a row is durable before its first attempt; a new process sends what an old one
 *   left pending (attempts are counted before each request, so a crash mid-request still counts).
 * - Exactly once per event per target: the row's key is `<event id>@<target>`, so notifying the
 *   same occurrence again (after a restart, from two places) queues nothing. A receiver that wants
 *   exactly-once across a crash between its 2xx and our bookkeeping dedups on `X-Curupira-Delivery`.
 * - No secret in a body: payloads are built from a few run fields (never the prompt, the env or a
 *   token) and redacted (src/security/redact.ts) before they are queued.
 * - Signed: webhook bodies carry `X-Curupira-Signature-256: sha256=<HMAC-SHA256 of the body>`.
 */
import { type Clock, systemClock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { type Logger, silentLogger } from '../log.js';
import { redact } from '../security/redact.js';
import type { NotificationRecord, Store } from '../store/types.js';
import { type NotificationEvent, slackPayload, webhookPayload } from './events.js';
import { type NotificationTarget, wants } from './targets.js';

/** Waits after failed attempts 1, 2, …: 5 s doubling, capped at 5 minutes (the last one repeats). */
export const NOTIFY_BACKOFF_MS: readonly number[] = [5000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000];
/** Attempts before a notification is marked failed: about 50 minutes of retries. */
export const DEFAULT_NOTIFY_ATTEMPTS = 15;
const REQUEST_TIMEOUT_MS = 10_000;

export interface NotifierOptions {
  store: Store;
  targets: readonly NotificationTarget[];
  clock?: Clock;
  log?: Logger;
  backoffMs?: readonly number[];
  maxAttempts?: number;
  /** Per request (default 10 s). */
  timeoutMs?: number;
}

/** An HTTP answer that is not worth retrying: the receiver refused the request itself. */
function permanent(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export class Notifier {
  readonly #store: Store;
  readonly #targets: ReadonlyMap<string, NotificationTarget>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #backoff: readonly number[];
  readonly #maxAttempts: number;
  readonly #timeoutMs: number;
  #draining: Promise<void> | undefined;
  #wake = new AbortController();

  constructor(options: NotifierOptions) {
    this.#store = options.store;
    this.#targets = new Map(options.targets.map((t) => [t.name, t]));
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log ?? silentLogger();
    this.#backoff = options.backoffMs ?? NOTIFY_BACKOFF_MS;
    this.#maxAttempts = options.maxAttempts ?? DEFAULT_NOTIFY_ATTEMPTS;
    this.#timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  #now(): string {
    return new Date(this.#clock.now()).toISOString();
  }

  /**
   * Queues the event for every target that wants it (durably, before returning) and wakes the
   * delivery loop. Returns the rows queued (or already queued for this event id).
   */
  async notify(event: NotificationEvent): Promise<NotificationRecord[]> {
    const now = this.#now();
    const rows: NotificationRecord[] = [];
    for (const target of this.#targets.values()) {
      if (!wants(target, event.event, event.automation)) continue;
      const body = target.kind === 'slack' ? slackPayload(event, now) : webhookPayload(event, now);
      rows.push(
        await this.#store.enqueueNotification({
          key: `${event.id}@${target.name}`,
          target: target.name,
          eventId: event.id,
          event: event.event,
          payload: JSON.stringify(body),
        }),
      );
    }
    if (rows.length > 0) this.#wake.abort();
    return rows;
  }

  /** Sends every due notification once (one drain at a time; a second call joins the first). */
  drain(): Promise<void> {
    this.#draining ??= this.#drainOnce().finally(() => {
      this.#draining = undefined;
    });
    return this.#draining;
  }

  async #drainOnce(): Promise<void> {
    // A fleet's hosts share the notifications: one drain at a time across them.
    const exclusive = this.#store.exclusive?.bind(this.#store);
    if (exclusive) await exclusive('notifications', () => this.#drainRounds());
    else await this.#drainRounds();
  }

  async #drainRounds(): Promise<void> {
    for (;;) {
      const due = await this.#store.listDueNotifications(this.#now(), 50);
      if (due.length === 0) return;
      for (const row of due) await this.#deliver(row);
    }
  }

  async #deliver(row: NotificationRecord): Promise<void> {
    const target = this.#targets.get(row.target);
    if (!target) {
      await this.#store.updateNotification(row.id, {
        status: 'failed',
        lastError: `notification target '${row.target}' is no longer configured`,
      });
      return;
    }
    const attempts = row.attempts + 1;
    await this.#store.updateNotification(row.id, { attempts });
    let problem: { message: string; final: boolean } | undefined;
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: await this.#headers(target, row),
        body: row.payload,
        redirect: 'error',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      await response.body?.cancel().catch(() => undefined);
      if (!response.ok) problem = { message: `HTTP ${response.status}`, final: permanent(response.status) };
    } catch (error) {
      problem = { message: errorMessage(error), final: false };
    }
    const fields = { target: target.name, event: row.event, id: row.eventId, attempts };
    if (!problem) {
      await this.#store.updateNotification(row.id, { status: 'sent', sentAt: this.#now(), lastError: null });
      this.#log.debug(fields, 'Notification sent');
      return;
    }
    const lastError = redact(problem.message);
    if (problem.final || attempts >= this.#maxAttempts) {
      await this.#store.updateNotification(row.id, { status: 'failed', lastError });
      this.#log.warn({ ...fields, error: lastError }, 'Notification could not be delivered; giving up');
      return;
    }
    const wait = this.#backoff[Math.min(attempts - 1, this.#backoff.length - 1)] ?? 0;
    const nextAttemptAt = new Date(this.#clock.now() + wait).toISOString();
    await this.#store.updateNotification(row.id, { nextAttemptAt, lastError });
    this.#log.info({ ...fields, error: lastError, retryInMs: wait }, 'Notification failed; retrying later');
  }

  async #headers(target: NotificationTarget, row: NotificationRecord): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'curupira-notifications',
    };
    if (target.kind !== 'webhook') return headers;
    headers['x-curupira-event'] = row.event;
    headers['x-curupira-delivery'] = row.eventId;
    headers['x-curupira-timestamp'] = String(Math.floor(this.#clock.now() / 1000));
    if (target.secret) {
      // Loaded on the first signed delivery: an idle daemon without notifications never needs it.
      const { sign } = await import('@octokit/webhooks-methods');
      headers['x-curupira-signature-256'] = await sign(target.secret, row.payload);
    }
    return headers;
  }

  /** When the earliest pending notification is due (epoch ms), if any. */
  async #nextDue(): Promise<number | undefined> {
    const [first] = await this.#store.listDueNotifications('9999-12-31T23:59:59.999Z', 1);
    return first ? Date.parse(first.nextAttemptAt) : undefined;
  }

  /**
   * The delivery loop, until `signal` aborts: sends what is due, then sleeps until the next row is
   * due or `notify` queues one. A store or network failure is logged and tried again later.
   */
  async run(signal: AbortSignal, idleMs = 60_000): Promise<void> {
    while (!signal.aborted) {
      let next: number | undefined;
      try {
        await this.drain();
        next = await this.#nextDue();
      } catch (error) {
        this.#log.warn({ error: errorMessage(error) }, 'Could not send notifications');
      }
      const wake = this.#wake;
      const wait = next === undefined ? idleMs : Math.min(idleMs, Math.max(0, next - this.#clock.now()));
      if (!wake.signal.aborted) {
        await this.#clock.sleep(wait, AbortSignal.any([signal, wake.signal])).catch(() => undefined);
      }
      if (wake.signal.aborted) this.#wake = new AbortController();
    }
  }
}
