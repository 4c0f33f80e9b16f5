/**
 * `POST /webhooks/github`: GitHub tells curupira something changed, and the automations it concerns
 * poll at once instead of at their next interval (polling stays the safety net: a lost delivery
 * only delays a run to the next poll). Mounted before the board's token check, because GitHub
 * authenticates with its signature instead:
 *
 * - only when `[settings] github_webhook_secret_env` names the secret (otherwise 404);
 * - `X-Hub-Signature-256` checked with @octokit/webhooks-methods over the raw body → 401 and nothing
 *   else happens on a bad or missing one;
 * - de-duplicated by `X-GitHub-Delivery` in the store (a redelivery, even after a restart, is
 *   answered 200 and ignored); ids older than a week are pruned;
 * - 202 at once: the polls run in the engine's watch loop, not in the request.
 *
 * Search results can lag a webhook by a few seconds, so each concerned automation polls once more
 * a little later (coalesced: one follow-up per automation at a time).
 */
import { verify } from '@octokit/webhooks-methods';
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { envValue } from '../config/env.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { ConfigError, type ConfigIssue } from '../core/errors.js';
import { registerSecret } from '../security/redact.js';
import type { WebhookPayload } from '../triggers/types.js';
import type { ServerContext } from './server-context.js';

export const WEBHOOK_PATH = '/webhooks/github';
/** GitHub caps payloads at 25 MB; the events curupira reads are far smaller. */
export const WEBHOOK_BODY_LIMIT = 5 * 1024 * 1024;
/** How long a delivery id is remembered (GitHub redelivers within days, by hand). */
const DEDUP_MS = 7 * 24 * 3600_000;
/** The second poll after a delivery, for a search index that has not caught up yet. */
export const FOLLOW_UP_MS = 10_000;

/** The automations a delivery concerns: their trigger reads this event, and says the delivery is theirs. */
export function concernedAutomations(
  automations: readonly ResolvedAutomation[],
  event: string,
  payload: WebhookPayload,
): string[] {
  return automations
    .filter((a) => {
      const hook = a.trigger.webhooks;
      return hook?.events.includes(event) === true && hook.concerns(a, event, payload);
    })
    .map((a) => a.id);
}

function answer(c: Context, status: 200 | 202 | 400 | 401 | 404, body: Record<string, unknown>): Response {
  return c.json(body, status);
}

/** The JSON a delivery carries (`application/json`, or the form GitHub sends as `payload=`). */
function parsePayload(body: string, contentType: string | undefined): WebhookPayload | undefined {
  try {
    const text = contentType?.startsWith('application/x-www-form-urlencoded')
      ? (new URLSearchParams(body).get('payload') ?? '')
      : body;
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as WebhookPayload) : undefined;
  } catch {
    return undefined;
  }
}

async function signatureValid(secret: string, body: string, signature: string | undefined) {
  if (!signature) return false;
  return verify(secret, body, signature).catch(() => false);
}

/** Polls now, and once more after FOLLOW_UP_MS (one follow-up per automation at a time). */
function poller(ctx: ServerContext): (ids: readonly string[]) => string[] {
  const followUps = new Set<string>();
  return (ids) => {
    const polled = ctx.engine.pollNow(ids);
    const later = polled.filter((id) => !followUps.has(id));
    if (later.length === 0) return polled;
    for (const id of later) followUps.add(id);
    setTimeout(() => {
      for (const id of later) followUps.delete(id);
      ctx.engine.pollNow(later);
    }, FOLLOW_UP_MS).unref();
    return polled;
  };
}

export function webhookRoutes(app: Hono, ctx: ServerContext): void {
  const pollNow = poller(ctx);
  const limit = bodyLimit({
    maxSize: WEBHOOK_BODY_LIMIT,
    onError: (c) => c.json({ error: { code: 'too_large', message: 'payload too large' } }, 413),
  });
  app.post(WEBHOOK_PATH, limit, async (c) => {
    const secret = ctx.webhookSecret;
    if (secret === undefined)
      return answer(c, 404, {
        error: { code: 'not_found', message: 'webhooks are off: set [settings] github_webhook_secret_env' },
      });
    const body = await c.req.text();
    if (!(await signatureValid(secret, body, c.req.header('x-hub-signature-256'))))
      return answer(c, 401, {
        error: { code: 'bad_signature', message: 'X-Hub-Signature-256 does not match' },
      });
    const event = c.req.header('x-github-event');
    const delivery = c.req.header('x-github-delivery');
    const payload = parsePayload(body, c.req.header('content-type'));
    if (!event || !delivery || !payload)
      return answer(c, 400, {
        error: {
          code: 'bad_request',
          message: 'X-GitHub-Event, X-GitHub-Delivery and a JSON body are needed',
        },
      });
    const pruneBefore = new Date(Date.now() - DEDUP_MS).toISOString();
    if (!(await ctx.store.recordWebhookDelivery({ id: delivery, event, pruneBefore })))
      return answer(c, 200, { duplicate: true, polled: [] });
    const ids = concernedAutomations(ctx.engine.currentSettings().automations, event, payload);
    return answer(c, 202, { polled: pollNow(ids) });
  });
}

/**
 * The webhook secret `github_webhook_secret_env` names (registered as a secret), or undefined when
 * the key is not set. Throws a located `ConfigError` when the variable is unset.
 */
export function webhookSecret(settings: Settings, env: NodeJS.ProcessEnv): string | undefined {
  const variable = settings.execution.github_webhook_secret_env;
  if (variable === undefined) return undefined;
  const issues: ConfigIssue[] = [];
  const secret = envValue(
    settings,
    env,
    ['settings', 'github_webhook_secret_env'],
    variable,
    'the GitHub webhook secret is read from it',
    issues,
  );
  if (secret === undefined) throw new ConfigError(issues);
  registerSecret(secret);
  return secret;
}
