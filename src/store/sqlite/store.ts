/**
 * `Store` over one open better-sqlite3 connection. Every write is a single statement or one
 * transaction, so a process killed at any instant leaves either the old or the new state.
 */
import type Database from 'better-sqlite3';
import { StateError } from '../../core/errors.js';
import { type RunRecord, UNFINISHED_STATUSES, type Usage } from '../../core/types.js';
import { type FiguresDialect, figuresFromRows, mediansSql, talliesSql } from '../figures-sql.js';
import {
  FINDING_INSERT_COLUMNS,
  FINDING_SEEN_AGAIN,
  type FindingRow,
  findingFromRow,
} from '../findings-rows.js';
import {
  type AllowanceRow,
  allowanceFromRow,
  type CronRow,
  checkStatus,
  cronFromRow,
  type ItemFailuresRow,
  itemFailuresFromRow,
  PATCH_COLUMNS,
  PATCH_KEYS,
  type PatchKey,
  type RunRow,
  runFromRow,
  type SessionRow,
  sessionFromRow,
  sessionValues,
} from '../rows.js';
import { createRunIdGenerator, type RunIdGenerator } from '../run-id.js';
import { attentionSql } from '../sql.js';
import type {
  Allowance,
  BudgetPark,
  CronState,
  FindingInit,
  FindingOutcome,
  FindingRecord,
  ItemFailures,
  ItemMemoryEntry,
  NotificationInit,
  NotificationPatch,
  NotificationRecord,
  NotificationStatus,
  PullRequestFilter,
  PullRequestInit,
  PullRequestMark,
  PullRequestPatch,
  PullRequestRecord,
  RunFigureFilter,
  RunFigures,
  RunFilter,
  RunInit,
  RunPatch,
  SessionRecord,
  Store,
  WriteInit,
  WriteOptions,
  WritePatch,
  WriteRecord,
  WriteStatus,
} from '../types.js';
import { toStateError } from './errors.js';
import * as notifications from './notifications.js';
import * as pullRequests from './pull-requests.js';
import * as writes from './writes.js';

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

interface ItemRow {
  item_key: string;
  run_id: string | null;
  skipped: number;
}

function bool(value: boolean | undefined): number {
  return value ? 1 : 0;
}

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

export interface SqliteStoreOptions {
  readonly: boolean;
  now: () => number;
}

/** The SQLite store, plus `listItemKeys` (what `once` and `ignore_backlog` remembered). */
export class SqliteStore implements Store {
  readonly path: string;
  readonly backend = 'sqlite' as const;
  readonly readonly: boolean;
  readonly #db: Database.Database;
  readonly #now: () => number;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #runIds: RunIdGenerator;

  constructor(db: Database.Database, path: string, options: SqliteStoreOptions) {
    this.#db = db;
    this.path = path;
    this.readonly = options.readonly;
    this.#now = options.now;
    const newest = this.#sql('SELECT max(id) FROM runs').pluck().get() as string | null;
    this.#runIds = createRunIdGenerator(options.now, newest ?? undefined);
  }

  #sql(source: string): Database.Statement {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.#db.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }

  /** Runs `action` against the open database, reporting any failure as a `StateError`. */
  #use<T>(action: () => T, write: boolean): T {
    if (!this.#db.open) throw new StateError(`state database ${this.path} is closed`);
    if (write && this.readonly) throw new StateError(`state database ${this.path} was opened read-only`);
    try {
      return action();
    } catch (error) {
      throw toStateError(error, this.path);
    }
  }

  #read<T>(action: () => T): Promise<T> {
    return Promise.resolve().then(() => this.#use(action, false));
  }

  #write<T>(action: () => T, options?: WriteOptions): Promise<T> {
    if (options?.durable !== false) return Promise.resolve().then(() => this.#use(action, true));
    // One commit without waiting for fsync (see `WriteOptions`); the connection stays FULL.
    return Promise.resolve().then(() =>
      this.#use(() => {
        this.#db.pragma('synchronous = NORMAL');
        try {
          return action();
        } finally {
          this.#db.pragma('synchronous = FULL');
        }
      }, true),
    );
  }

  saveSession(session: SessionRecord, options?: WriteOptions): Promise<void> {
    return this.#write(() => {
      this.#sql(
        `INSERT INTO sessions (task_key, automation_id, run_id, provider, profile, session_id, prompt,
           prompt_template_hash, task_json, worktree_path, branch, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (task_key) DO UPDATE SET
           automation_id = excluded.automation_id, run_id = excluded.run_id,
           provider = excluded.provider, profile = excluded.profile, session_id = excluded.session_id,
           prompt = excluded.prompt, prompt_template_hash = excluded.prompt_template_hash,
           task_json = excluded.task_json, worktree_path = excluded.worktree_path,
           branch = excluded.branch, created_at = excluded.created_at, updated_at = excluded.updated_at,
           resume_failures = CASE WHEN sessions.session_id = excluded.session_id
             THEN sessions.resume_failures ELSE 0 END`,
      ).run(...sessionValues(session));
    }, options);
  }

  getSession(taskKey: string): Promise<SessionRecord | undefined> {
    return this.#read(() => {
      const row = this.#sql('SELECT * FROM sessions WHERE task_key = ?').get(taskKey) as
        | SessionRow
        | undefined;
      return row ? sessionFromRow(row) : undefined;
    });
  }

  listSessions(): Promise<SessionRecord[]> {
    return this.#read(() => {
      const rows = this.#sql('SELECT * FROM sessions ORDER BY created_at, task_key').all() as SessionRow[];
      return rows.map(sessionFromRow);
    });
  }

  deleteSession(taskKey: string, options?: WriteOptions): Promise<void> {
    return this.#write(() => {
      this.#sql('DELETE FROM sessions WHERE task_key = ?').run(taskKey);
    }, options);
  }

  recordResumeFailure(taskKey: string): Promise<number> {
    return this.#write(() => {
      const count = this.#sql(
        'UPDATE sessions SET resume_failures = resume_failures + 1 WHERE task_key = ? RETURNING resume_failures',
      )
        .pluck()
        .get(taskKey) as number | undefined;
      return count ?? 0;
    });
  }

  recordItemFailure(failure: Parameters<Store['recordItemFailure']>[0]): Promise<ItemFailures> {
    return this.#write(() => {
      const now = this.#iso();
      // New text starts the count again (and lifts an escalation of the old text).
      const row = this.#sql(
        `INSERT INTO item_failures (task_key, automation_id, item_key, failures, text_digest, last_run_id,
           escalated_at, notice_run_id, updated_at)
         VALUES (?, ?, ?, 1, ?, ?, NULL, NULL, ?)
         ON CONFLICT (task_key) DO UPDATE SET
           failures = CASE WHEN item_failures.text_digest = excluded.text_digest
             THEN item_failures.failures + 1 ELSE 1 END,
           escalated_at = CASE WHEN item_failures.text_digest = excluded.text_digest
             THEN item_failures.escalated_at END,
           notice_run_id = CASE WHEN item_failures.text_digest = excluded.text_digest
             THEN item_failures.notice_run_id END,
           text_digest = excluded.text_digest, last_run_id = excluded.last_run_id,
           item_key = excluded.item_key, updated_at = excluded.updated_at
         RETURNING *`,
      ).get(
        failure.taskKey,
        failure.automationId,
        failure.itemKey,
        failure.textDigest,
        failure.runId,
        now,
      ) as ItemFailuresRow;
      if (failure.limit > 0 && row.failures >= failure.limit && row.escalated_at === null) {
        const escalated = this.#sql(
          'UPDATE item_failures SET escalated_at = ? WHERE task_key = ? RETURNING *',
        ).get(now, failure.taskKey) as ItemFailuresRow;
        return itemFailuresFromRow(escalated);
      }
      return itemFailuresFromRow(row);
    });
  }

  getItemFailures(taskKey: string): Promise<ItemFailures | undefined> {
    return this.#read(() => {
      const row = this.#sql('SELECT * FROM item_failures WHERE task_key = ?').get(taskKey) as
        | ItemFailuresRow
        | undefined;
      return row ? itemFailuresFromRow(row) : undefined;
    });
  }

  listEscalations(): Promise<ItemFailures[]> {
    return this.#read(() => {
      const rows = this.#sql(
        'SELECT * FROM item_failures WHERE escalated_at IS NOT NULL ORDER BY escalated_at, task_key',
      ).all() as ItemFailuresRow[];
      return rows.map(itemFailuresFromRow);
    });
  }

  setEscalationNotice(taskKey: string, runId: string): Promise<void> {
    return this.#write(() => {
      this.#sql('UPDATE item_failures SET notice_run_id = ? WHERE task_key = ?').run(runId, taskKey);
    });
  }

  raiseItemFailures(floor: Parameters<Store['raiseItemFailures']>[0]): Promise<ItemFailures> {
    return this.#write(() => {
      // Never lowers a count, never escalates: another host's count only raises the floor.
      const row = this.#sql(
        `INSERT INTO item_failures (task_key, automation_id, item_key, failures, text_digest, last_run_id,
           escalated_at, notice_run_id, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)
         ON CONFLICT (task_key) DO UPDATE SET
           failures = CASE WHEN item_failures.text_digest = excluded.text_digest
             THEN max(item_failures.failures, excluded.failures) ELSE excluded.failures END,
           escalated_at = CASE WHEN item_failures.text_digest = excluded.text_digest
             THEN item_failures.escalated_at END,
           notice_run_id = CASE WHEN item_failures.text_digest = excluded.text_digest
             THEN item_failures.notice_run_id END,
           text_digest = excluded.text_digest, updated_at = excluded.updated_at
         RETURNING *`,
      ).get(
        floor.taskKey,
        floor.automationId,
        floor.itemKey,
        floor.failures,
        floor.textDigest,
        floor.runId,
        this.#iso(),
      ) as ItemFailuresRow;
      return itemFailuresFromRow(row);
    });
  }

  clearItemFailures(taskKey: string): Promise<boolean> {
    return this.#write(
      () => this.#sql('DELETE FROM item_failures WHERE task_key = ?').run(taskKey).changes > 0,
    );
  }

  createRun(init: RunInit, options?: WriteOptions): Promise<RunRecord> {
    return this.#write(() => {
      const row = this.#sql(
        `INSERT INTO runs (id, automation_id, task_key, repo, task_type, item_id, item_key, item_title,
           item_url, status, reason, created_at, profile, provider, prompt, scheduled_for,
           upstream_run_id, resumed, session_id, screening_findings, screening_reason, screened_digest,
           attempt, host)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         RETURNING *`,
      ).get(
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
        this.#iso(),
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
    return this.#write(() => {
      const keys = PATCH_KEYS.filter((key) => patch[key] !== undefined);
      const row =
        keys.length === 0
          ? (this.#sql('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined)
          : (this.#sql(
              `UPDATE runs SET ${keys.map((key) => `${PATCH_COLUMNS[key]} = ?`).join(', ')} WHERE id = ? RETURNING *`,
            ).get(...keys.map((key) => patchValue(key, patch)), id) as RunRow | undefined);
      if (!row) throw new StateError(`run ${id} does not exist in state database ${this.path}`);
      return runFromRow(row);
    }, options);
  }

  getRun(id: string): Promise<RunRecord | undefined> {
    return this.#read(() => {
      const row = this.#sql('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
      return row ? runFromRow(row) : undefined;
    });
  }

  listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    return this.#read(() => {
      const { clause, params } = runWhere(filter);
      params.push(rowLimit(filter.limit), Math.max(0, Math.floor(filter.offset ?? 0)));
      const rows = this.#sql(`SELECT * FROM runs ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`).all(
        ...params,
      ) as RunRow[];
      return rows.map(runFromRow);
    });
  }

  newestRunsOfTasks(taskKeys: readonly string[]): Promise<RunRecord[]> {
    return this.#read(() => {
      const keys = [...new Set(taskKeys)];
      const out: RunRecord[] = [];
      // In chunks under SQLite's parameter limit; each key is one step down the (task_key, id) index.
      for (let i = 0; i < keys.length; i += 500) {
        const chunk = keys.slice(i, i + 500);
        const rows = this.#db
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
    return this.#read(() => {
      const tallies = talliesSql(filter, SQLITE_FIGURES);
      const medians = mediansSql(filter, SQLITE_FIGURES);
      return figuresFromRows(
        this.#sql(tallies.sql).all(...tallies.params),
        this.#sql(medians.sql).all(...medians.params),
      );
    });
  }

  countRuns(filter: RunFilter = {}): Promise<number> {
    return this.#read(() => {
      const { clause, params } = runWhere(filter);
      return this.#sql(`SELECT count(*) FROM runs ${clause}`)
        .pluck()
        .get(...params) as number;
    });
  }

  pruneRuns(automationId: string, keep: number): Promise<RunRecord[]> {
    if (!Number.isInteger(keep) || keep < 0) {
      return Promise.reject(new RangeError(`pruneRuns: keep must be a non-negative integer, got ${keep}`));
    }
    return this.#write(() => {
      const unfinished = UNFINISHED_STATUSES.map(() => '?').join(', ');
      const rows = this.#sql(
        `DELETE FROM runs WHERE id IN (
           SELECT id FROM runs WHERE automation_id = ? AND status NOT IN (${unfinished})
           ORDER BY id DESC LIMIT -1 OFFSET ?)
         RETURNING *`,
      ).all(automationId, ...UNFINISHED_STATUSES, keep) as RunRow[];
      return rows.map(runFromRow).sort(newestFirst);
    });
  }

  countFinishedRuns(automationId: string): Promise<number> {
    return this.#read(() => {
      const unfinished = UNFINISHED_STATUSES.map(() => '?').join(', ');
      return this.#sql(`SELECT COUNT(*) FROM runs WHERE automation_id = ? AND status NOT IN (${unfinished})`)
        .pluck()
        .get(automationId, ...UNFINISHED_STATUSES) as number;
    });
  }

  sumCost(filter: { since: string; automationId?: string }): Promise<number> {
    return this.#read(() => {
      const byAutomation = filter.automationId === undefined ? '' : ' AND automation_id = ?';
      const params = filter.automationId === undefined ? [filter.since] : [filter.since, filter.automationId];
      const sum = this.#sql(
        `SELECT total(cost_usd) FROM runs WHERE cost_usd IS NOT NULL AND started_at >= ?${byAutomation}`,
      )
        .pluck()
        .get(...params) as number;
      return sum;
    });
  }

  setBudgetPark(park: BudgetPark): Promise<void> {
    return this.#write(() => {
      this.#sql(
        `INSERT INTO budget_parks (scope, until, reason, parked_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (scope) DO UPDATE SET until = excluded.until, reason = excluded.reason,
           parked_at = excluded.parked_at`,
      ).run(park.scope, park.until, park.reason, this.#iso());
    });
  }

  listBudgetParks(at: string): Promise<BudgetPark[]> {
    return this.#read(() => {
      const rows = this.#sql(
        'SELECT scope, until, reason FROM budget_parks WHERE until > ? ORDER BY scope',
      ).all(at) as BudgetPark[];
      return rows.map((row) => ({ scope: row.scope, until: row.until, reason: row.reason }));
    });
  }

  listUnfinishedRuns(filter: { host?: string } = {}): Promise<RunRecord[]> {
    return this.#read(() => {
      const unfinished = UNFINISHED_STATUSES.map(() => '?').join(', ');
      const byHost = filter.host === undefined ? '' : ' AND host = ?';
      const rows = this.#sql(`SELECT * FROM runs WHERE status IN (${unfinished})${byHost} ORDER BY id`).all(
        ...UNFINISHED_STATUSES,
        ...(filter.host === undefined ? [] : [filter.host]),
      ) as RunRow[];
      return rows.map(runFromRow);
    });
  }

  getCronState(automationId: string): Promise<CronState | undefined> {
    return this.#read(() => {
      const row = this.#sql('SELECT * FROM cron_state WHERE automation_id = ?').get(automationId) as
        | CronRow
        | undefined;
      return row ? cronFromRow(row) : undefined;
    });
  }

  putCronState(state: CronState): Promise<void> {
    return this.#write(() => {
      this.#sql(
        `INSERT INTO cron_state (automation_id, created_at, last_scheduled_for, pending_scheduled_for,
           last_execution_at, config_hash)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (automation_id) DO UPDATE SET
           created_at = excluded.created_at, last_scheduled_for = excluded.last_scheduled_for,
           pending_scheduled_for = excluded.pending_scheduled_for,
           last_execution_at = excluded.last_execution_at, config_hash = excluded.config_hash`,
      ).run(
        state.automationId,
        state.createdAt,
        state.lastScheduledFor,
        state.pendingScheduledFor,
        state.lastExecutionAt,
        state.configHash,
      );
    });
  }

  hasItemKey(automationId: string, itemKey: string): Promise<boolean> {
    return this.#read(
      () =>
        this.#sql('SELECT 1 FROM item_memory WHERE automation_id = ? AND item_key = ?').get(
          automationId,
          itemKey,
        ) !== undefined,
    );
  }

  recordItemKeys(automationId: string, entries: readonly ItemMemoryEntry[]): Promise<void> {
    return this.#write(() => {
      const insert = this.#sql(
        `INSERT INTO item_memory (automation_id, item_key, run_id, skipped, recorded_at)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (automation_id, item_key) DO NOTHING`,
      );
      const recordedAt = this.#iso();
      this.#db
        .transaction(() => {
          for (const entry of entries) {
            insert.run(automationId, entry.itemKey, entry.runId, bool(entry.skipped), recordedAt);
          }
        })
        .immediate();
    });
  }

  /** Everything remembered for an automation, by item key. The first record of a key wins. */
  listItemKeys(automationId: string): Promise<ItemMemoryEntry[]> {
    return this.#read(() => {
      const rows = this.#sql(
        'SELECT item_key, run_id, skipped FROM item_memory WHERE automation_id = ? ORDER BY item_key',
      ).all(automationId) as ItemRow[];
      return rows.map((row) => ({ itemKey: row.item_key, runId: row.run_id, skipped: row.skipped === 1 }));
    });
  }

  clearItemKeys(automationId: string): Promise<void> {
    return this.#write(() => {
      this.#sql('DELETE FROM item_memory WHERE automation_id = ?').run(automationId);
    });
  }

  setPaused(automationId: string, paused: boolean): Promise<void> {
    return this.#write(() => {
      this.#sql(
        `INSERT INTO automation_controls (automation_id, paused, changed_at) VALUES (?, ?, ?)
         ON CONFLICT (automation_id) DO UPDATE SET paused = excluded.paused, changed_at = excluded.changed_at`,
      ).run(automationId, bool(paused), this.#iso());
    });
  }

  listPaused(): Promise<string[]> {
    return this.#read(
      () =>
        this.#sql('SELECT automation_id FROM automation_controls WHERE paused = 1 ORDER BY automation_id')
          .pluck()
          .all() as string[],
    );
  }

  findBlockedRun(taskKey: string, digest: string): Promise<RunRecord | undefined> {
    return this.#read(() => {
      const row = this.#sql(
        `SELECT * FROM runs WHERE task_key = ? AND screened_digest = ? AND status = 'blocked'
         ORDER BY id DESC LIMIT 1`,
      ).get(taskKey, digest) as RunRow | undefined;
      return row ? runFromRow(row) : undefined;
    });
  }

  addAllowance(runId: string, allowedBy: string): Promise<Allowance> {
    return this.#write(() => {
      const run = this.#sql('SELECT * FROM runs WHERE id = ?').get(runId) as RunRow | undefined;
      if (!run) throw new StateError(`run ${runId} does not exist in state database ${this.path}`);
      if (run.status !== 'blocked' || run.screened_digest === null)
        throw new StateError(`run ${runId} was not blocked by screening (its status is ${run.status})`);
      const row = this.#sql(
        `INSERT INTO allowances (run_id, task_key, text_digest, allowed_by, allowed_at)
         VALUES (?, ?, ?, ?, ?) RETURNING *`,
      ).get(runId, run.task_key, run.screened_digest, allowedBy, this.#iso()) as AllowanceRow;
      return allowanceFromRow(row);
    });
  }

  takeAllowance(taskKey: string, digest: string): Promise<Allowance | undefined> {
    return this.#write(() => {
      const row = this.#sql(
        `UPDATE allowances SET used_at = ? WHERE id = (
           SELECT id FROM allowances WHERE task_key = ? AND text_digest = ? AND used_at IS NULL
           ORDER BY id LIMIT 1)
         RETURNING *`,
      ).get(this.#iso(), taskKey, digest) as AllowanceRow | undefined;
      return row ? allowanceFromRow(row) : undefined;
    });
  }

  listAllowances(filter: { runId?: string; pending?: boolean }): Promise<Allowance[]> {
    return this.#read(() => {
      const where: string[] = [];
      const params: string[] = [];
      if (filter.runId !== undefined) {
        where.push('run_id = ?');
        params.push(filter.runId);
      }
      if (filter.pending) where.push('used_at IS NULL');
      const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
      const rows = this.#sql(`SELECT * FROM allowances ${clause} ORDER BY id`).all(
        ...params,
      ) as AllowanceRow[];
      return rows.map(allowanceFromRow);
    });
  }

  enqueueWrite(init: WriteInit): Promise<WriteRecord> {
    return this.#write(() => writes.enqueueWrite((s) => this.#sql(s), init, this.#iso()));
  }

  listDueWrites(dueBy: string, limit = 100): Promise<WriteRecord[]> {
    return this.#read(() => writes.listDueWrites((s) => this.#sql(s), dueBy, limit));
  }

  listWrites(filter: { status?: WriteStatus; runId?: string; marker?: string } = {}): Promise<WriteRecord[]> {
    return this.#read(() => writes.listWrites((s) => this.#sql(s), filter));
  }

  updateWrite(id: number, patch: WritePatch): Promise<WriteRecord> {
    return this.#write(() => writes.updateWrite((s) => this.#sql(s), id, patch, this.path));
  }

  recordFinding(init: FindingInit): Promise<{ finding: FindingRecord; outcome: FindingOutcome }> {
    return this.#write(() => {
      const now = this.#iso();
      const prior = this.#sql('SELECT status FROM findings WHERE watch = ? AND fingerprint = ?')
        .pluck()
        .get(init.watch, init.fingerprint) as string | undefined;
      const row = this.#sql(
        `INSERT INTO findings (${FINDING_INSERT_COLUMNS})
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, ?)
         ON CONFLICT (watch, fingerprint) DO UPDATE SET ${FINDING_SEEN_AGAIN}
         RETURNING *`,
      ).get(
        init.watch,
        init.repo,
        init.fingerprint,
        init.file,
        init.lineStart,
        init.lineEnd,
        init.severity,
        init.category,
        init.title,
        init.detail,
        init.commit,
        init.commit,
        init.runId,
        init.runId,
        now,
        now,
      ) as FindingRow;
      const outcome: FindingOutcome =
        prior === undefined ? 'new' : prior === 'resolved' ? 'reopened' : 'seen-again';
      return { finding: findingFromRow(row), outcome };
    });
  }

  resolveFinding(
    id: number,
    resolved: { commit: string; runId: string; resolution: string },
  ): Promise<FindingRecord | undefined> {
    return this.#write(() => {
      const row = this.#sql(
        `UPDATE findings SET status = 'resolved', resolved_at = ?, resolved_commit = ?, resolved_run_id = ?,
           resolution = ? WHERE id = ? AND status = 'open' RETURNING *`,
      ).get(this.#iso(), resolved.commit, resolved.runId, resolved.resolution, id) as FindingRow | undefined;
      return row ? findingFromRow(row) : undefined;
    });
  }

  listFindings(
    filter: { watch?: string; status?: FindingRecord['status']; limit?: number } = {},
  ): Promise<FindingRecord[]> {
    return this.#read(() => {
      const rows = this.#sql(
        `SELECT * FROM findings WHERE (? IS NULL OR watch = ?) AND (? IS NULL OR status = ?) ORDER BY id LIMIT ?`,
      ).all(
        filter.watch ?? null,
        filter.watch ?? null,
        filter.status ?? null,
        filter.status ?? null,
        filter.limit ?? -1,
      ) as FindingRow[];
      return rows.map(findingFromRow);
    });
  }

  enqueueNotification(init: NotificationInit): Promise<NotificationRecord> {
    return this.#write(() => notifications.enqueueNotification((s) => this.#sql(s), init, this.#iso()));
  }

  listDueNotifications(dueBy: string, limit = 100): Promise<NotificationRecord[]> {
    return this.#read(() => notifications.listDueNotifications((s) => this.#sql(s), dueBy, limit));
  }

  listNotifications(filter: { status?: NotificationStatus } = {}): Promise<NotificationRecord[]> {
    return this.#read(() => notifications.listNotifications((s) => this.#sql(s), filter));
  }

  updateNotification(id: number, patch: NotificationPatch): Promise<NotificationRecord> {
    return this.#write(() => notifications.updateNotification((s) => this.#sql(s), id, patch, this.path));
  }

  recordWebhookDelivery(delivery: { id: string; event: string; pruneBefore: string }): Promise<boolean> {
    return this.#write(() => notifications.recordWebhookDelivery((s) => this.#sql(s), delivery, this.#iso()));
  }

  beginPullRequest(init: PullRequestInit): Promise<PullRequestRecord> {
    return this.#write(() => pullRequests.beginPullRequest((s) => this.#sql(s), init, this.#iso()));
  }

  updatePullRequest(runId: string, patch: PullRequestPatch): Promise<PullRequestRecord> {
    return this.#write(() =>
      pullRequests.updatePullRequest((s) => this.#sql(s), runId, patch, this.#iso(), this.path),
    );
  }

  getPullRequest(runId: string): Promise<PullRequestRecord | undefined> {
    return this.#read(() => pullRequests.getPullRequest((s) => this.#sql(s), runId));
  }

  listPullRequests(filter: PullRequestFilter = {}): Promise<PullRequestRecord[]> {
    return this.#read(() => pullRequests.listPullRequests((s) => this.#sql(s), filter));
  }

  getPullRequestMark(runId: string, key: string): Promise<PullRequestMark | undefined> {
    return this.#read(() => pullRequests.getPullRequestMark((s) => this.#sql(s), runId, key));
  }

  setPullRequestMark(runId: string, key: string, value: string): Promise<PullRequestMark> {
    return this.#write(() =>
      pullRequests.setPullRequestMark((s) => this.#sql(s), runId, key, value, this.#iso()),
    );
  }

  deletePullRequestMark(runId: string, key: string): Promise<boolean> {
    return this.#write(() => pullRequests.deletePullRequestMark((s) => this.#sql(s), runId, key));
  }

  listPullRequestMarks(runId: string): Promise<PullRequestMark[]> {
    return this.#read(() => pullRequests.listPullRequestMarks((s) => this.#sql(s), runId));
  }

  getMeta(key: string): Promise<string | undefined> {
    return this.#read(
      () => this.#sql('SELECT value FROM meta WHERE key = ?').pluck().get(key) as string | undefined,
    );
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.#write(() => {
      this.#sql(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ).run(key, value);
    });
  }

  async close(): Promise<void> {
    if (!this.#db.open) return;
    this.#statements.clear();
    try {
      this.#db.close();
    } catch (error) {
      throw toStateError(error, this.path);
    }
  }
}
