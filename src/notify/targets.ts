/**
 * The notification targets of a settings file, resolved against the environment at start: the URL
 * and the signing secret come from the variables the file names, and both are registered as
 * secrets (a Slack incoming-webhook URL is itself a credential), so no log line shows them.
 */
import { envValue, locatedIssue } from '../config/env.js';
import type { Settings } from '../config/types.js';
import { ConfigError, type ConfigIssue } from '../core/errors.js';
import { registerSecret } from '../security/redact.js';
import type { NotificationEventName, NotificationTable } from './schema.js';

export interface NotificationTarget {
  name: string;
  kind: NotificationTable['kind'];
  url: string;
  /** The HMAC-SHA256 key of a webhook. */
  secret?: string;
  events: ReadonlySet<NotificationEventName>;
  /** Only these automations' events (undefined: all). */
  automations?: ReadonlySet<string>;
}

/** Whether a target wants an event of this automation (events of no automation always pass the filter). */
export function wants(
  target: NotificationTarget,
  event: NotificationEventName,
  automation?: string,
): boolean {
  if (!target.events.has(event)) return false;
  return !target.automations || automation === undefined || target.automations.has(automation);
}

/**
 * Every `[notifications.<name>]` with its URL and secret read from `env`. Throws a `ConfigError`
 * naming each table whose variable is unset or empty (the file's line and column included).
 */
export function resolveTargets(settings: Settings, env: NodeJS.ProcessEnv): NotificationTarget[] {
  const issues: ConfigIssue[] = [];
  const targets: NotificationTarget[] = [];
  const read = (name: string, key: 'url_env' | 'secret_env', variable: string): string | undefined =>
    envValue(
      settings,
      env,
      ['notifications', name, key],
      variable,
      `notification '${name}' reads its ${key === 'url_env' ? 'URL' : 'signing secret'} from it`,
      issues,
    );
  for (const [name, table] of Object.entries(settings.notifications ?? {})) {
    const url = read(name, 'url_env', table.url_env);
    if (url !== undefined && !/^https?:\/\/\S+$/.test(url))
      issues.push(
        locatedIssue(
          settings,
          ['notifications', name, 'url_env'],
          `${table.url_env} must hold an http(s) URL`,
        ),
      );
    const secret =
      table.kind === 'webhook' && table.secret_env ? read(name, 'secret_env', table.secret_env) : undefined;
    registerSecret(url);
    registerSecret(secret);
    if (url === undefined) continue;
    targets.push({
      name,
      kind: table.kind,
      url,
      ...(secret === undefined ? {} : { secret }),
      events: new Set(table.events),
      ...(table.automations ? { automations: new Set(table.automations) } : {}),
    });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return targets;
}
