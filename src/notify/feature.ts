/**
 * Notifications as a feature (`[notifications]`): every finished run that is news (failed,
 * blocked, escalated, merged…) and every automatic or manual pause is queued durably for each
 * target that wants it; the delivery loop runs while the engine does, and what the last runs
 * queued gets one bounded try when it returns.
 */
import type { Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { Feature, RunOutcome } from '../core/feature.js';
import type { RunRecord } from '../core/types.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { createNotifier, type NotificationEvent, type Notifier, runNotification } from './index.js';

/** How long the engine waits, when it returns, for the last notifications to go out. */
const NOTIFY_FLUSH_MS = 5000;

export interface NotifyFeatureOptions {
  settings: Settings;
  env: NodeJS.ProcessEnv;
  store: Store;
  clock: Clock;
  log: Logger;
  /** Default: built from `[notifications]`, the URLs read from `env`. */
  notifier?: Notifier;
}

export class NotifyFeature implements Feature {
  readonly name = 'notifications';
  private readonly notifier: Notifier | undefined;
  /** Notifications being queued (`notify` returns before the store has them). */
  private readonly queueing = new Set<Promise<void>>();
  private readonly loopStop = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(private readonly options: NotifyFeatureOptions) {
    const { settings, env, store, clock, log } = options;
    this.notifier = options.notifier ?? createNotifier(settings, env, { store, clock, log });
  }

  /**
   * Queues a notification for every target that wants it (durably; sent by the delivery loop,
   * retried, once per target per `event.id`). Never throws: a failure is logged.
   */
  notify(event: NotificationEvent): void {
    if (!this.notifier) return;
    const queued = this.notifier
      .notify(event)
      .then(() => undefined)
      .catch((error: unknown) => {
        this.options.log.warn(
          { event: event.event, id: event.id, error: errorMessage(error) },
          'Could not queue a notification',
        );
      })
      .finally(() => this.queueing.delete(queued));
    this.queueing.add(queued);
  }

  async started(): Promise<void> {
    this.loop = this.notifier?.run(this.loopStop.signal);
  }

  /** Every finished try notifies (a retry may never come: a one-shot run leaves it to the next). */
  async afterRun({ automation, run }: RunOutcome): Promise<void> {
    this.ranRun(automation.id, run);
  }

  ranRun(automationId: string, run: RunRecord): void {
    const event = runNotification(automationId, run);
    if (event) this.notify(event);
  }

  paused(automationId: string, reason: string | undefined): void {
    const at = new Date(this.options.clock.now()).toISOString();
    this.notify({
      event: 'automation_paused',
      id: `pause:${automationId}:${at}`,
      automation: automationId,
      summary: `${automationId}: automation paused (${reason ?? 'by an operator'})`,
      details: { reason: reason ?? 'paused by an operator' },
      occurredAt: at,
    });
  }

  async stop(): Promise<void> {
    if (!this.notifier) return;
    await Promise.all(this.queueing);
    const limit = new AbortController();
    await Promise.race([
      this.notifier.drain().catch(() => undefined),
      this.options.clock.sleep(NOTIFY_FLUSH_MS, limit.signal).catch(() => undefined),
    ]);
    limit.abort();
    this.loopStop.abort();
    await this.loop;
  }
}
