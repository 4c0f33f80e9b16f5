/**
 * What a notification says: the event other parts of curupira hand to `notify`, and the two bodies
 * built from it (signed JSON for webhooks, Slack blocks). Both are redacted before they are queued.
 * docs/notifications.md documents the schema; keep it in step.
 */
import { formatResult } from '../core/result-line.js';
import { isFailure, type RunRecord } from '../core/types.js';
import { redactDeep } from '../security/redact.js';
import { runItemName } from '../triggers/registry.js';
import type { NotificationEventName } from './schema.js';

/** The run a notification is about, as sent (a subset of the run record: never its prompt). */
export interface NotifiedRun {
  id: string;
  status: string;
  reason: string | null;
  /** The result the agent reported (`#31 ready-for-agent`); null when none. */
  outcome: string | null;
  repo: string;
  item_id: string;
  item_title: string;
  item_url: string;
  started_at: string | null;
  finished_at: string | null;
}

/** One occurrence of an event, as its emitter hands it to `notify`. */
export interface NotificationEvent {
  event: NotificationEventName;
  /**
   * Stable id of this occurrence: it is delivered once per target, however often it is notified
   * (`run:<run id>:failed`, `pause:<automation>:<ISO time>`…). Also sent as `X-Curupira-Delivery`.
   */
  id: string;
  /** The automation it concerns; absent for events of none (a global budget). */
  automation?: string;
  /** One line a person reads first ("fix: run failed on acme/api#12 ..."). */
  summary: string;
  run?: RunRecord;
  /** Small extra facts for this event (`{ spent_usd: 12.5 }`); strings are redacted. */
  details?: Record<string, string | number | boolean | null>;
  /** ISO 8601; default now. */
  occurredAt?: string;
}

/** The JSON body of a `kind = "webhook"` notification (schema version 1). */
export interface WebhookPayload {
  version: 1;
  id: string;
  event: NotificationEventName;
  occurred_at: string;
  automation: string | null;
  summary: string;
  run: NotifiedRun | null;
  details: Record<string, string | number | boolean | null>;
}

function notifiedRun(run: RunRecord): NotifiedRun {
  return {
    id: run.id,
    status: run.status,
    reason: run.reason,
    outcome: run.result ? formatResult(run.result) : null,
    repo: run.repo,
    item_id: run.itemId,
    item_title: run.itemTitle,
    item_url: run.itemUrl,
    started_at: run.startedAt,
    finished_at: run.finishedAt,
  };
}

export function webhookPayload(event: NotificationEvent, now: string): WebhookPayload {
  return redactDeep({
    version: 1,
    id: event.id,
    event: event.event,
    occurred_at: event.occurredAt ?? now,
    automation: event.automation ?? null,
    summary: event.summary,
    run: event.run ? notifiedRun(event.run) : null,
    details: event.details ?? {},
  });
}

/** Slack's mrkdwn controls (`&`, `<`, `>`) escaped, so untrusted titles cannot make links or mentions. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const TITLE_LIMIT = 150;
const TEXT_LIMIT = 2900;

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** A Slack incoming-webhook body: a fallback `text` and `blocks` (a section and a context line). */
export function slackPayload(event: NotificationEvent, now: string): Record<string, unknown> {
  const payload = webhookPayload(event, now);
  const lines = [`*${slackEscape(clip(payload.summary, TITLE_LIMIT))}*`];
  const run = payload.run;
  if (run) {
    const title = slackEscape(clip(run.item_title, TITLE_LIMIT));
    const link = /^https?:\/\/[^\s|<>]+$/.test(run.item_url) ? `<${run.item_url}|${title}>` : title;
    lines.push(`${slackEscape(run.repo)}#${slackEscape(run.item_id)}: ${link}`);
    if (run.outcome) lines.push(`outcome: ${slackEscape(clip(run.outcome, 500))}`);
    if (run.reason) lines.push(`>${slackEscape(clip(run.reason, 500)).replace(/\n/g, '\n>')}`);
  }
  for (const [key, value] of Object.entries(payload.details))
    lines.push(`${slackEscape(key)}: ${slackEscape(String(value))}`);
  const context = [
    `curupira · ${payload.event}`,
    payload.automation ? `automation ${payload.automation}` : '',
  ]
    .filter((part) => part !== '')
    .join(' · ');
  return {
    text: clip(payload.summary, TEXT_LIMIT),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(lines.join('\n'), TEXT_LIMIT) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: slackEscape(context) }] },
    ],
  };
}

/** The event a finished run is (failed, timed out, stalled → failed; blocked; escalated), if any. */
export function runNotification(automation: string, run: RunRecord): NotificationEvent | undefined {
  const status = run.status;
  // Every failed status (FAILED_STATUSES: failed, timed out, stalled) is sent as `failed`.
  const event: NotificationEventName | undefined = isFailure(status)
    ? 'failed'
    : status === 'blocked' || status === 'escalated'
      ? status
      : undefined;
  if (!event) return undefined;
  const what = status.replace('_', ' ');
  return {
    event,
    id: `run:${run.id}:${event}`,
    automation,
    summary: `${automation}: run ${what} on ${runItemName(run)}`,
    run,
    ...(run.finishedAt ? { occurredAt: run.finishedAt } : {}),
  };
}
