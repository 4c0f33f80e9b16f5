/**
 * The `pull_requests` table (migration 9): each run's delivery and its pull request,
 * for `SqliteQueues` (queues.ts).
 */
import type Database from 'better-sqlite3';
import { StateError } from '../../core/errors.js';
import {
  type MarkRow,
  markFromRow,
  PULL_REQUEST_COLUMNS,
  type PullRequestRow,
  pullRequestFromRow,
} from '../queue-rows.js';
import type {
  PullRequestFilter,
  PullRequestInit,
  PullRequestMark,
  PullRequestPatch,
  PullRequestRecord,
} from '../types.js';

type Sql = (source: string) => Database.Statement;

export function beginPullRequest(sql: Sql, init: PullRequestInit, now: string): PullRequestRecord {
  sql(
    `INSERT INTO pull_requests (run_id, automation_id, task_key, repo, delivery, head_branch, state, since, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pushing', ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`,
  ).run(
    init.runId,
    init.automationId,
    init.taskKey,
    init.repo,
    init.delivery,
    init.headBranch,
    now,
    now,
    now,
  );
  return pullRequestFromRow(
    sql('SELECT * FROM pull_requests WHERE run_id = ?').get(init.runId) as PullRequestRow,
  );
}

export function updatePullRequest(
  sql: Sql,
  runId: string,
  patch: PullRequestPatch,
  now: string,
  path: string,
): PullRequestRecord {
  const current = sql('SELECT * FROM pull_requests WHERE run_id = ?').get(runId) as
    | PullRequestRow
    | undefined;
  if (!current) throw new StateError(`run ${runId} has no delivery in state database ${path}`);
  const keys = (Object.keys(patch) as (keyof PullRequestPatch)[]).filter((k) => patch[k] !== undefined);
  const sets = keys.map((k) => `${PULL_REQUEST_COLUMNS[k]} = ?`);
  const values = keys.map((k) => {
    const value = patch[k];
    return typeof value === 'boolean' ? (value ? 1 : 0) : (value as string | number | null);
  });
  sets.push('updated_at = ?');
  values.push(now);
  if (patch.state !== undefined && patch.state !== current.state) {
    sets.push('since = ?');
    values.push(now);
  }
  if (patch.gate !== undefined && patch.gate !== current.gate) {
    sets.push('gate_since = ?');
    values.push(now);
  }
  const row = sql(`UPDATE pull_requests SET ${sets.join(', ')} WHERE run_id = ? RETURNING *`).get(
    ...values,
    runId,
  ) as PullRequestRow;
  return pullRequestFromRow(row);
}

export function getPullRequest(sql: Sql, runId: string): PullRequestRecord | undefined {
  const row = sql('SELECT * FROM pull_requests WHERE run_id = ?').get(runId) as PullRequestRow | undefined;
  return row ? pullRequestFromRow(row) : undefined;
}

export function listPullRequests(sql: Sql, filter: PullRequestFilter): PullRequestRecord[] {
  const states = filter.states ?? [];
  const where: string[] = [];
  const params: string[] = [...states];
  if (states.length > 0) where.push(`state IN (${states.map(() => '?').join(', ')})`);
  if (filter.taskKey !== undefined) {
    where.push('task_key = ?');
    params.push(filter.taskKey);
  }
  const select = (terms: string[], values: string[]) => {
    const clause = terms.length > 0 ? `WHERE ${terms.join(' AND ')}` : '';
    return (
      sql(`SELECT * FROM pull_requests ${clause} ORDER BY created_at, run_id`).all(
        ...values,
      ) as PullRequestRow[]
    ).map(pullRequestFromRow);
  };
  if (filter.runIds === undefined) return select(where, params);
  // In chunks under SQLite's parameter limit; each run is one step down the primary key.
  const ids = [...new Set(filter.runIds)];
  const out: PullRequestRecord[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    out.push(...select([...where, `run_id IN (${chunk.map(() => '?').join(', ')})`], [...params, ...chunk]));
  }
  return out.sort((a, b) =>
    a.createdAt === b.createdAt ? (a.runId < b.runId ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
  );
}

export function getPullRequestMark(sql: Sql, runId: string, key: string): PullRequestMark | undefined {
  const row = sql('SELECT * FROM pull_request_marks WHERE run_id = ? AND key = ?').get(runId, key) as
    | MarkRow
    | undefined;
  return row ? markFromRow(row) : undefined;
}

export function setPullRequestMark(
  sql: Sql,
  runId: string,
  key: string,
  value: string,
  now: string,
): PullRequestMark {
  const row = sql(
    `INSERT INTO pull_request_marks (run_id, key, value, at) VALUES (?, ?, ?, ?)
     ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value, at = excluded.at RETURNING *`,
  ).get(runId, key, value, now) as MarkRow;
  return markFromRow(row);
}

export function deletePullRequestMark(sql: Sql, runId: string, key: string): boolean {
  return sql('DELETE FROM pull_request_marks WHERE run_id = ? AND key = ?').run(runId, key).changes > 0;
}

export function listPullRequestMarks(sql: Sql, runId: string): PullRequestMark[] {
  return (sql('SELECT * FROM pull_request_marks WHERE run_id = ? ORDER BY key').all(runId) as MarkRow[]).map(
    markFromRow,
  );
}
