/** The `notifications` and `webhook_deliveries` tables (migration 8), for `SqliteQueues` (queues.ts). */
import type Database from 'better-sqlite3';
import { StateError } from '../../core/errors.js';
import { NOTIFICATION_COLUMNS, type NotificationRow, notificationFromRow } from '../queue-rows.js';
import type {
  NotificationInit,
  NotificationPatch,
  NotificationRecord,
  NotificationStatus,
} from '../types.js';

type Sql = (source: string) => Database.Statement;

export function enqueueNotification(sql: Sql, init: NotificationInit, now: string): NotificationRecord {
  sql(
    `INSERT INTO notifications (key, target, event_id, event, payload_json, status, attempts, next_attempt_at, created_at)
     VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?) ON CONFLICT (key) DO NOTHING`,
  ).run(init.key, init.target, init.eventId, init.event, init.payload, init.notBefore ?? now, now);
  return notificationFromRow(
    sql('SELECT * FROM notifications WHERE key = ?').get(init.key) as NotificationRow,
  );
}

export function listDueNotifications(sql: Sql, dueBy: string, limit: number): NotificationRecord[] {
  const rows = sql(
    `SELECT * FROM notifications WHERE status = 'pending' AND next_attempt_at <= ?
     ORDER BY next_attempt_at, id LIMIT ?`,
  ).all(dueBy, limit) as NotificationRow[];
  return rows.map(notificationFromRow);
}

export function listNotifications(sql: Sql, filter: { status?: NotificationStatus }): NotificationRecord[] {
  const rows = (
    filter.status === undefined
      ? sql('SELECT * FROM notifications ORDER BY id').all()
      : sql('SELECT * FROM notifications WHERE status = ? ORDER BY id').all(filter.status)
  ) as NotificationRow[];
  return rows.map(notificationFromRow);
}

export function updateNotification(
  sql: Sql,
  id: number,
  patch: NotificationPatch,
  path: string,
): NotificationRecord {
  const keys = (Object.keys(patch) as (keyof NotificationPatch)[]).filter((k) => patch[k] !== undefined);
  const sets = keys.map((k) => `${NOTIFICATION_COLUMNS[k]} = ?`);
  const values = keys.map((k) => patch[k] as string | number | null);
  const row = (
    sets.length === 0
      ? sql('SELECT * FROM notifications WHERE id = ?').get(id)
      : sql(`UPDATE notifications SET ${sets.join(', ')} WHERE id = ? RETURNING *`).get(...values, id)
  ) as NotificationRow | undefined;
  if (!row) throw new StateError(`notification ${id} does not exist in state database ${path}`);
  return notificationFromRow(row);
}

export function recordWebhookDelivery(
  sql: Sql,
  delivery: { id: string; event: string; pruneBefore: string; receipt?: string },
  now: string,
): boolean {
  sql('DELETE FROM webhook_deliveries WHERE received_at < ?').run(delivery.pruneBefore);
  const result = sql(
    `INSERT INTO webhook_deliveries (delivery_id, event, received_at, receipt) VALUES (?, ?, ?, ?)
     ON CONFLICT (delivery_id) DO NOTHING`,
  ).run(delivery.id, delivery.event, now, delivery.receipt ?? null);
  if (result.changes === 1) return true;
  // Recorded by this very call's earlier try (its answer lost): not a redelivery.
  if (delivery.receipt === undefined) return false;
  const row = sql('SELECT receipt FROM webhook_deliveries WHERE delivery_id = ?').get(delivery.id) as
    | { receipt: string | null }
    | undefined;
  return row?.receipt === delivery.receipt;
}
