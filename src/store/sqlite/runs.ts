/**
 * The run ledger of the SQLite store: opening, updating, listing and counting runs, their figures
 * and cost, pruning. Run ids come from `run-id.ts`, seeded from the newest id stored.
 */
import { StateError } from '../../core/errors.js';
import { type RunRecord, UNFINISHED_STATUSES, type Usage } from '../../core/types.js';
import { type FiguresDialect, figuresFromRows, mediansSql, talliesSql } from '../figures-sql.js';
import { checkStatus, PATCH_COLUMNS, PATCH_KEYS, type PatchKey, type RunRow, runFromRow } from '../rows.js';
import { createRunIdGenerator, type RunIdGenerator } from '../run-id.js';
import { attentionSql } from '../sql.js';
import type { RunFigureFilter, RunFigures, RunFilter, RunInit, RunPatch, WriteOptions } from '../types.js';
import { bool, type SqliteConnection } from './connection.js';

/** Runs that need a human (see `attentionSql`). */
export const ATTENTION_SQL = attentionSql('worktree_kept = 1');

/** Figures' SQL in SQLite: times are ISO 8601 text, read by `julianday`. */
const SQLITE_FIGURES: FiguresDialect = {
  msBetween: (from, to) => `round((julianday(${to}) - julianday(${from})) * 86400000.0)`,
  jsonNumber: (column, key) => `json_extract(${column}, '$.${key}')`,
  real: (expression) => expression,
  param: () => '?',
};

/** The WHERE clause and parameters of a run filter. */
function runWhere(filter: RunFilter): { clause: string; params: (string | number)[] } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (filter.automationId !== undefined) {
    where.push('automation_id = ?');
    params.push(filter.automationId);
  }
  if (filter.status && filter.status.length > 0) {
    where.push(`status IN (${filter.status.map(() => '?').join(', ')})`);
    params.push(...filter.status);
  }
  if (filter.worktreeKept !== undefined) {
    where.push('worktree_kept = ?');
    params.push(filter.worktreeKept ? 1 : 0);
  }
  if (filter.beforeId !== undefined) {
    where.push('id < ?');
    params.push(filter.beforeId);
  }
  if (filter.retryPending === true) where.push('retry_at IS NOT NULL');
  if (filter.attention !== undefined) where.push(filter.attention ? ATTENTION_SQL : `NOT (${ATTENTION_SQL})`);
  if (filter.taskKey !== undefined) {
    where.push('task_key = ?');
    params.push(filter.taskKey);
  }
  if (filter.profile !== undefined) {
    where.push('profile = ?');
    params.push(filter.profile);
  }
  if (filter.repo !== undefined) {
    where.push('repo = ?');
    params.push(filter.repo);
  }
  if (filter.text !== undefined && filter.text !== '') {
    where.push("item_title LIKE ? ESCAPE '\\'");
    params.push(`%${filter.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  }
  if (filter.createdSince !== undefined) {
    where.push('created_at >= ?');
    params.push(filter.createdSince);
  }
  if (filter.createdBefore !== undefined) {
    where.push('created_at < ?');
    params.push(filter.createdBefore);
  }
  return { clause: where.length > 0 ? `WHERE ${where.join(' AND ')}` : '', params };
}

const DEFAULT_LIST_LIMIT = 50;
function usageJson(usage: Usage | null | undefined): string | null {
  return usage ? JSON.stringify(usage) : null;
}

/** What SQLite stores for one patch value. */
function patchValue(key: PatchKey, patch: RunPatch): string | number | null {
  switch (key) {
    case 'status':
      return checkStatus(patch.status!);
    case 'resumed':
    case 'worktreeKept':
      return bool(patch[key]);
    case 'usage':
      return usageJson(patch.usage);
    case 'agentOutcome':
      return patch.agentOutcome ? JSON.stringify(patch.agentOutcome) : null;
    case 'result':
      return patch.result ? JSON.stringify(patch.result) : null;
    case 'inputs':
      return patch.inputs ? JSON.stringify(patch.inputs) : null;
    case 'screeningFindings':
      return patch.screeningFindings ? JSON.stringify(patch.screeningFindings) : null;
    default:
      return patch[key] ?? null;
  }
}

function newestFirst(a: RunRecord, b: RunRecord): number {
  if (a.id === b.id) return 0;
  return a.id < b.id ? 1 : -1;
}

function rowLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isFinite(limit)) return -1;
  return Math.max(0, Math.floor(limit));
}

export class SqliteRuns {
  readonly #c: SqliteConnection;
  readonly #runIds: RunIdGenerator;

  constructor(connection: SqliteConnection) {
    this.#c = connection;
    const newest = this.#c.sql('SELECT max(id) FROM runs').pluck().get() as string | null;
    this.#runIds = createRunIdGenerator(connection.now, newest ?? undefined);
  }

  createRun(init: RunInit, options?: WriteOptions): Promise<RunRecord> {
    return this.#c.write(() => {
      const row = this.#c
        .sql(
          `INSERT INTO runs (id, automation_id, task_key, repo, task_type, item_id, item_key, item_title,
           item_url, status, reason, created_at, profile, provider, prompt, scheduled_for,
           upstream_run_id, resumed, session_id, screening_findings, screening_reason, screened_digest,
           attempt, host)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         RETURNING *`,
        )
        .get(
          this.#runIds.next(),
          init.automationId,
          init.taskKey,
          init.repo,
          init.taskType,
          init.itemId,
          init.itemKey,
          init.itemTitle,
          init.itemUrl,
          checkStatus(init.status),
          init.reason ?? null,
          this.#c.iso(),
          init.profile ?? null,
          init.provider ?? null,
          init.prompt ?? null,
          init.scheduledFor ?? null,
          init.upstreamRunId ?? null,
          bool(init.resumed),
          init.sessionId ?? null,
          init.screeningFindings ? JSON.stringify(init.screeningFindings) : null,
          init.screeningReason ?? null,
          init.screenedDigest ?? null,
          init.attempt ?? 1,
          init.host ?? null,
        ) as RunRow;
      return runFromRow(row);
    }, options);
  }

  updateRun(id: string, patch: RunPatch, options?: WriteOptions): Promise<RunRecord> {
    return this.#c.write(() => {
      const keys = PATCH_KEYS.filter((key) => patch[key] !== undefined);
      const row =
        keys.length === 0
          ? (this.#c.sql('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined)
          : (this.#c
              .sql(
                `UPDATE runs SET ${keys.map((key) => `${PATCH_COLUMNS[key]} = ?`).join(', ')} WHERE id = ? RETURNING *`,
              )
              .get(...keys.map((key) => patchValue(key, patch)), id) as RunRow | undefined);
      if (!row) throw new StateError(`run ${id} does not exist in state database ${this.#c.path}`);
      return runFromRow(row);
    }, options);
  }

  getRun(id: string): Promise<RunRecord | undefined> {
    return this.#c.read(() => {
      const row = this.#c.sql('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
      return row ? runFromRow(row) : undefined;
    });
  }

  listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    return this.#c.read(() => {
      const { clause, params } = runWhere(filter);
      params.push(rowLimit(filter.limit), Math.max(0, Math.floor(filter.offset ?? 0)));
      const rows = this.#c
        .sql(`SELECT * FROM runs ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`)
        .all(...params) as RunRow[];
      return rows.map(runFromRow);
    });
  }

  countRuns(filter: RunFilter = {}): Promise<number> {
    return this.#c.read(() => {
      const { clause, params } = runWhere(filter);
      return this.#c
        .sql(`SELECT count(*) FROM runs ${clause}`)
        .pluck()
        .get(...params) as number;
    });
  }

  newestRunsOfTasks(taskKeys: readonly string[]): Promise<RunRecord[]> {
    return this.#c.read(() => {
      const keys = [...new Set(taskKeys)];
      const out: RunRecord[] = [];
      // In chunks under SQLite's parameter limit; each key is one step down the (task_key, id) index.
      for (let i = 0; i < keys.length; i += 500) {
        const chunk = keys.slice(i, i + 500);
        const rows = this.#c.db
          .prepare(
            `SELECT * FROM runs WHERE id IN (SELECT max(id) FROM runs WHERE task_key IN (${chunk.map(() => '?').join(', ')}) GROUP BY task_key)`,
          )
          .all(...chunk) as RunRow[];
        out.push(...rows.map(runFromRow));
      }
      return out;
    });
  }

  runFigures(filter: RunFigureFilter): Promise<RunFigures> {
    return this.#c.read(() => {
      const tallies = talliesSql(filter, SQLITE_FIGURES);
      const medians = mediansSql(filter, SQLITE_FIGURES);
      return figuresFromRows(
        this.#c.sql(tallies.sql).all(...tallies.params),
        this.#c.sql(medians.sql).all(...medians.params),
      );
    });
  }

  pruneRuns(automationId: string, keep: number): Promise<RunRecord[]> {
    if (!Number.isInteger(keep) || keep < 0) {
      return Promise.reject(new RangeError(`pruneRuns: keep must be a non-negative integer, got ${keep}`));
    }
    return this.#c.write(() => {
      const unfinished = UNFINISHED_STATUSES.map(() => '?').join(', ');
      const rows = this.#c
        .sql(
          `DELETE FROM runs WHERE id IN (
           SELECT id FROM runs WHERE automation_id = ? AND status NOT IN (${unfinished})
           ORDER BY id DESC LIMIT -1 OFFSET ?)
         RETURNING *`,
        )
        .all(automationId, ...UNFINISHED_STATUSES, keep) as RunRow[];
      return rows.map(runFromRow).sort(newestFirst);
    });
  }

  countFinishedRuns(automationId: string): Promise<number> {
    return this.#c.read(() => {
      const unfinished = UNFINISHED_STATUSES.map(() => '?').join(', ');
      return this.#c
        .sql(`SELECT COUNT(*) FROM runs WHERE automation_id = ? AND status NOT IN (${unfinished})`)
        .pluck()
        .get(automationId, ...UNFINISHED_STATUSES) as number;
    });
  }

  listUnfinishedRuns(filter: { host?: string } = {}): Promise<RunRecord[]> {
    return this.#c.read(() => {
      const unfinished = UNFINISHED_STATUSES.map(() => '?').join(', ');
      const byHost = filter.host === undefined ? '' : ' AND host = ?';
      const rows = this.#c
        .sql(`SELECT * FROM runs WHERE status IN (${unfinished})${byHost} ORDER BY id`)
        .all(...UNFINISHED_STATUSES, ...(filter.host === undefined ? [] : [filter.host])) as RunRow[];
      return rows.map(runFromRow);
    });
  }

  findBlockedRun(taskKey: string, digest: string): Promise<RunRecord | undefined> {
    return this.#c.read(() => {
      const row = this.#c
        .sql(
          `SELECT * FROM runs WHERE task_key = ? AND screened_digest = ? AND status = 'blocked'
         ORDER BY id DESC LIMIT 1`,
        )
        .get(taskKey, digest) as RunRow | undefined;
      return row ? runFromRow(row) : undefined;
    });
  }

  sumCost(filter: { since: string; automationId?: string }): Promise<number> {
    return this.#c.read(() => {
      const byAutomation = filter.automationId === undefined ? '' : ' AND automation_id = ?';
      const params = filter.automationId === undefined ? [filter.since] : [filter.since, filter.automationId];
      const sum = this.#c
        .sql(`SELECT total(cost_usd) FROM runs WHERE cost_usd IS NOT NULL AND started_at >= ?${byAutomation}`)
        .pluck()
        .get(...params) as number;
      return sum;
    });
  }
}
