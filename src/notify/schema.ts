/**
 * `[notifications.<name>]`: where curupira tells people about what needs them. Each table is one
 * target (a signed JSON webhook or a Slack incoming webhook); the URL and the signing secret are
 * read from environment variables at start, never written in the file.
 */
import { z } from 'zod';
import { Identifier } from '../triggers/common-schema.js';

/** Every event a target can ask for (docs/notifications.md describes what each one sends). */
export const NOTIFICATION_EVENTS = [
  'failed',
  'blocked',
  'escalated',
  'needs_human',
  'pr_merged',
  'budget_reached',
  'automation_paused',
] as const;
export type NotificationEventName = (typeof NOTIFICATION_EVENTS)[number];

const EnvName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name (letters, digits, `_`)');

export const NotificationTable = z
  .strictObject({
    kind: z
      .enum(['webhook', 'slack'])
      .describe(
        '`webhook`: a JSON POST signed with HMAC-SHA256 (`X-Curupira-Signature-256`); `slack`: a Slack incoming webhook (message blocks).',
      ),
    url_env: EnvName.describe(
      'Environment variable holding the URL to POST to (a Slack incoming-webhook URL is itself a secret); curupira refuses to start when it is unset.',
    ),
    secret_env: EnvName.optional().describe(
      'Webhooks: environment variable holding the HMAC-SHA256 signing secret (required for `kind = "webhook"`; not used by Slack).',
    ),
    events: z
      .array(z.enum(NOTIFICATION_EVENTS))
      .min(1, 'name at least one event')
      .describe(`Events sent to this target: ${NOTIFICATION_EVENTS.join(', ')}.`),
    automations: z
      .array(Identifier)
      .optional()
      .describe(
        'Only events of these automations (default: every automation; events of none, such as a global budget, always pass).',
      ),
  })
  .superRefine((table, ctx) => {
    if (table.kind === 'webhook' && table.secret_env === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['secret_env'],
        message: 'is required for kind = "webhook" (the variable holding the signing secret)',
      });
  })
  .describe('A notification target (curupira extension).');
export type NotificationTable = z.output<typeof NotificationTable>;

export const NotificationsTable = z
  .record(Identifier, NotificationTable)
  .describe('Notification targets, by name (curupira extension; docs/notifications.md).');
