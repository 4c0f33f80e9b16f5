/** The `writes` table (migration 5): rows of the GitHub write queue, for `SqliteQueues` (queues.ts). */
import type Database from 'better-sqlite3';
import { StateError } from '../../core/errors.js';
import { WRITE_COLUMNS, type WriteRow, writeFromRow } from '../queue-rows.js';
import type { WriteInit, WritePatch, WriteRecord, WriteStatus } from '../types.js';

type Sql = (source: string) => Database.Statement;

export function enqueueWrite(sql: Sql, init: WriteInit, now: string): WriteRecord {
  const row = sql(
    `INSERT INTO writes (marker, repo, item_number, write_json, run_id, status, attempts, next_attempt_at, created_at)
     VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)
     ON CONFLICT (marker) DO UPDATE SET write_json = excluded.write_json, status = 'pending', attempts = 0,
       next_attempt_at = excluded.next_attempt_at, last_error = NULL, sent_at = NULL
     RETURNING *`,
  ).get(
    init.marker,
    init.repo,
    init.number,
    JSON.stringify(init.write),
    init.runId ?? null,
    init.notBefore ?? now,
    now,
  ) as WriteRow;
  return writeFromRow(row);
}

export function listDueWrites(sql: Sql, dueBy: string, limit: number): WriteRecord[] {
  const rows = sql(
    // One item's writes go out in the order they were queued: none while an earlier one is pending.
    `SELECT * FROM writes w WHERE status = 'pending' AND next_attempt_at <= ?
       AND NOT EXISTS (SELECT 1 FROM writes e WHERE e.status = 'pending' AND e.repo = w.repo
                       AND e.item_number = w.item_number AND e.id < w.id)
     ORDER BY next_attempt_at, id LIMIT ?`,
  ).all(dueBy, limit) as WriteRow[];
  return rows.map(writeFromRow);
}

export function listWrites(
  sql: Sql,
  filter: { status?: WriteStatus; runId?: string; marker?: string },
): WriteRecord[] {
  const where: string[] = [];
  const params: string[] = [];
  if (filter.status !== undefined) {
    where.push('status = ?');
    params.push(filter.status);
  }
  if (filter.runId !== undefined) {
    where.push('run_id = ?');
    params.push(filter.runId);
  }
  if (filter.marker !== undefined) {
    where.push('marker = ?');
    params.push(filter.marker);
  }
  const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  return (sql(`SELECT * FROM writes ${clause} ORDER BY id`).all(...params) as WriteRow[]).map(writeFromRow);
}

export function updateWrite(sql: Sql, id: number, patch: WritePatch, path: string): WriteRecord {
  const keys = (Object.keys(patch) as (keyof WritePatch)[]).filter((k) => patch[k] !== undefined);
  const sets = keys.map((k) => `${WRITE_COLUMNS[k]} = ?`);
  const values = keys.map((k) => patch[k] as string | number | null);
  const row = (
    sets.length === 0
      ? sql('SELECT * FROM writes WHERE id = ?').get(id)
      : sql(`UPDATE writes SET ${sets.join(', ')} WHERE id = ? RETURNING *`).get(...values, id)
  ) as WriteRow | undefined;
  if (!row) throw new StateError(`write ${id} does not exist in state database ${path}`);
  return writeFromRow(row);
}
