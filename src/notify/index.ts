/**
 * Notifications (issue 15): `[notifications.<name>]` targets, a durable queue in the store, signed
 * webhook and Slack deliveries. The engine owns one `Notifier` and exposes `engine.notify(event)`;
 * docs/notifications.md lists the events and the payload schema.
 */
import type { Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { Notifier, type NotifierOptions } from './notifier.js';
import { resolveTargets } from './targets.js';

export type { NotificationEvent, WebhookPayload } from './events.js';
export { runNotification, slackPayload, webhookPayload } from './events.js';
export { Notifier } from './notifier.js';
export { NOTIFICATION_EVENTS, type NotificationEventName } from './schema.js';
export { type NotificationTarget, resolveTargets } from './targets.js';

/**
 * The notifier of a settings file, or undefined when it has no `[notifications]`. Throws a
 * `ConfigError` when a target's URL or secret variable is unset (before anything starts).
 */
export function createNotifier(
  settings: Settings,
  env: NodeJS.ProcessEnv,
  deps: { store: Store; clock: Clock; log: Logger } & Partial<NotifierOptions>,
): Notifier | undefined {
  const targets = resolveTargets(settings, env);
  if (targets.length === 0) return undefined;
  return new Notifier({ ...deps, targets });
}
