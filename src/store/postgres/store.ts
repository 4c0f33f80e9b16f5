/**
 * `Store` over a pool of PostgreSQL connections (`state_db_url`, issue 17). It gives back the same
 * records as `SqliteStore` and throws the same errors. Several processes on several hosts share
 * the database, so every read-modify-write is one statement (an upsert, an `UPDATE … RETURNING`)
 * or one transaction: two hosts counting a failure at once both count.
 *
 * `WriteOptions.durable` needs nothing here: a committed transaction is durable.
 * The queues and deliveries (writes, notifications, webhook deliveries, pull requests) are
 * `PgQueues` (queues.ts), over the same pool.
 */
import type pg from 'pg';
import { StateError } from '../../core/errors.js';
import { type RunRecord, UNFINISHED_STATUSES } from '../../core/types.js';
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
  WritePatch,
  WriteRecord,
  WriteStatus,
} from '../types.js';
import { type ConnectionInfo, useError } from './errors.js';
import { PgQueues } from './queues.js';

type Param = string | number | boolean | null | readonly (string | boolean | null)[];

/** Runs that need a human (see `attentionSql`). */
export const PG_ATTENTION_SQL = attentionSql('worktree_kept');

const DEFAULT_LIST_LIMIT = 50;
/** Tries of `createRun` when another process took the id meanwhile (never seen in practice). */
const RUN_ID_TRIES = 5;

/** Figures' SQL in PostgreSQL: times are ISO 8601 text, cast to timestamps; aggregates to doubles. */
const PG_FIGURES: FiguresDialect = {
  msBetween: (from, to) =>
    `round(EXTRACT(EPOCH FROM ((${to})::timestamptz - (${from})::timestamptz)) * 1000)::float8`,
  jsonNumber: (column, key) => `((${column})::json ->> '${key}')::float8`,
  real: (expression) => `(${expression})::float8`,
  param: (n) => `$${n}`,
};

/** Collects parameters: `add(value)` gives its placeholder (`$1`, `$2`…). */
function parameters(): { params: Param[]; add(value: Param): string } {
  const params: Param[] = [];
  return {
    params,
    add(value) {
      params.push(value);
      return `$${params.length}`;
    },
  };
}

/** The WHERE clause of a run filter, its parameters added to `p`. */
function runWhere(filter: RunFilter, p: ReturnType<typeof parameters>): string {
  const where: string[] = [];
  if (filter.automationId !== undefined) where.push(`automation_id = ${p.add(filter.automationId)}`);
  if (filter.status && filter.status.length > 0) where.push(`status = ANY(${p.add(filter.status)}::text[])`);
  if (filter.worktreeKept !== undefined) where.push(`worktree_kept = ${p.add(filter.worktreeKept)}`);
  if (filter.beforeId !== undefined) where.push(`id < ${p.add(filter.beforeId)}`);
  if (filter.retryPending === true) where.push('retry_at IS NOT NULL');
  if (filter.attention !== undefined) {
    where.push(filter.attention ? PG_ATTENTION_SQL : `NOT (${PG_ATTENTION_SQL})`);
  }
  if (filter.taskKey !== undefined) where.push(`task_key = ${p.add(filter.taskKey)}`);
  if (filter.profile !== undefined) where.push(`profile = ${p.add(filter.profile)}`);
  if (filter.repo !== undefined) where.push(`repo = ${p.add(filter.repo)}`);
  if (filter.text !== undefined && filter.text !== '')
    where.push(`item_title ILIKE ${p.add(`%${filter.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)}`);
  if (filter.createdSince !== undefined) where.push(`created_at >= ${p.add(filter.createdSince)}`);
  if (filter.createdBefore !== undefined) where.push(`created_at < ${p.add(filter.createdBefore)}`);
  return where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
}

function json(value: unknown): string | null {
  return value ? JSON.stringify(value) : null;
}

/** What the table stores for one patch value. */
function patchValue(key: PatchKey, patch: RunPatch): Param {
  switch (key) {
    case 'status':
      return checkStatus(patch.status!);
    case 'resumed':
    case 'worktreeKept':
      return patch[key] === true;
    case 'usage':
      return json(patch.usage);
    case 'agentOutcome':
      return json(patch.agentOutcome);
    case 'result':
      return json(patch.result);
    case 'inputs':
      return json(patch.inputs);
    case 'screeningFindings':
      return json(patch.screeningFindings);
    default:
      return patch[key] ?? null;
  }
}

function newestFirst(a: RunRecord, b: RunRecord): number {
  if (a.id === b.id) return 0;
  return a.id < b.id ? 1 : -1;
}

/** The LIMIT of a list: null for all. */
function rowLimit(limit: number | undefined): number | null {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isFinite(limit)) return null;
  return Math.max(0, Math.floor(limit));
}

function isRunIdTaken(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === 'runs_pkey';
}

export interface PostgresStoreOptions {
  readonly: boolean;
  now: () => number;
}

export class PostgresStore implements Store {
  readonly path: string;
  readonly backend = 'postgres' as const;
  readonly readonly: boolean;
  readonly #pool: pg.Pool;
  readonly #info: ConnectionInfo;
  readonly #now: () => number;
  #closed = false;
  #runIds: Promise<RunIdGenerator> | undefined;
  readonly #queues: PgQueues;

  constructor(pool: pg.Pool, info: ConnectionInfo, options: PostgresStoreOptions) {
    this.#pool = pool;
    this.#info = info;
    this.path = info.redacted;
    this.readonly = options.readonly;
    this.#now = options.now;
    this.#queues = new PgQueues(pool, { now: options.now, readonly: options.readonly, location: this.path });
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }

  #check(write: boolean): void {
    if (this.#closed) throw new StateError(`state database ${this.path} is closed`);
    if (write && this.readonly) throw new StateError(`state database ${this.path} was opened read-only`);
  }

  /** One statement; any failure becomes a `StateError`. */
  async #query<R extends pg.QueryResultRow>(
    write: boolean,
    text: string,
    params: readonly Param[] = [],
  ): Promise<pg.QueryResult<R>> {
    this.#check(write);
    try {
      return await this.#pool.query<R>(text, params as Param[]);
    } catch (error) {
      throw useError(error, this.#info);
    }
  }

  async #rows<R extends pg.QueryResultRow>(
    write: boolean,
    text: string,
    params?: readonly Param[],
  ): Promise<R[]> {
    return (await this.#query<R>(write, text, params)).rows;
  }

  async #row<R extends pg.QueryResultRow>(
    write: boolean,
    text: string,
    params?: readonly Param[],
  ): Promise<R | undefined> {
    return (await this.#query<R>(write, text, params)).rows[0];
  }

  /** The run id generator, seeded once from the largest id stored (see run-id.ts). */
  #ids(): Promise<RunIdGenerator> {
    if (!this.#runIds) {
      const made = this.#row<{ newest: string | null }>(false, 'SELECT max(id) AS newest FROM runs').then(
        (row) => createRunIdGenerator(this.#now, row?.newest ?? undefined),
      );
      // A failed seeding (the server was away) is tried again by the next run.
      made.catch(() => {
        if (this.#runIds === made) this.#runIds = undefined;
      });
      this.#runIds = made;
    }
    return this.#runIds;
  }

  /** The queue methods' implementation (queues.ts), over the same pool. */
  #queue(write: boolean): PgQueues {
    this.#check(write);
    return this.#queues;
  }

  async #delegate<T>(write: boolean, action: (q: PgQueues) => Promise<T>): Promise<T> {
    try {
      return await action(this.#queue(write));
    } catch (error) {
      throw useError(error, this.#info);
    }
  }

  async saveSession(session: SessionRecord): Promise<void> {
    await this.#query(
      true,
      `INSERT INTO sessions AS s (task_key, automation_id, run_id, provider, profile, session_id, prompt,
         prompt_template_hash, task_json, worktree_path, branch, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (task_key) DO UPDATE SET
         automation_id = excluded.automation_id, run_id = excluded.run_id,
         provider = excluded.provider, profile = excluded.profile, session_id = excluded.session_id,
         prompt = excluded.prompt, prompt_template_hash = excluded.prompt_template_hash,
         task_json = excluded.task_json, worktree_path = excluded.worktree_path,
         branch = excluded.branch, created_at = excluded.created_at, updated_at = excluded.updated_at,
         resume_failures = CASE WHEN s.session_id = excluded.session_id THEN s.resume_failures ELSE 0 END`,
      sessionValues(session),
    );
  }

  async getSession(taskKey: string): Promise<SessionRecord | undefined> {
    const row = await this.#row<SessionRow>(false, 'SELECT * FROM sessions WHERE task_key = $1', [taskKey]);
    return row ? sessionFromRow(row) : undefined;
  }

  async listSessions(): Promise<SessionRecord[]> {
    const rows = await this.#rows<SessionRow>(false, 'SELECT * FROM sessions ORDER BY created_at, task_key');
    return rows.map(sessionFromRow);
  }

  async deleteSession(taskKey: string): Promise<void> {
    await this.#query(true, 'DELETE FROM sessions WHERE task_key = $1', [taskKey]);
  }

  async recordResumeFailure(taskKey: string): Promise<number> {
    const row = await this.#row<{ resume_failures: number }>(
      true,
      'UPDATE sessions SET resume_failures = resume_failures + 1 WHERE task_key = $1 RETURNING resume_failures',
      [taskKey],
    );
    return row?.resume_failures ?? 0;
  }

  async recordItemFailure(failure: Parameters<Store['recordItemFailure']>[0]): Promise<ItemFailures> {
    // One upsert: two hosts counting at once both count. New text starts the count again (and
    // lifts an escalation of the old text); reaching the limit escalates, once.
    const row = await this.#row<ItemFailuresRow>(
      true,
      `INSERT INTO item_failures AS f (task_key, automation_id, item_key, failures, text_digest, last_run_id,
         escalated_at, notice_run_id, updated_at)
       VALUES ($1, $2, $3, 1, $4, $5, CASE WHEN $6::int > 0 AND 1 >= $6::int THEN $7::text END, NULL, $7::text)
       ON CONFLICT (task_key) DO UPDATE SET
         failures = CASE WHEN f.text_digest = excluded.text_digest THEN f.failures + 1 ELSE 1 END,
         escalated_at = coalesce(
           CASE WHEN f.text_digest = excluded.text_digest THEN f.escalated_at END,
           CASE WHEN $6::int > 0
             AND (CASE WHEN f.text_digest = excluded.text_digest THEN f.failures + 1 ELSE 1 END) >= $6::int
             THEN excluded.updated_at END),
         notice_run_id = CASE WHEN f.text_digest = excluded.text_digest THEN f.notice_run_id END,
         text_digest = excluded.text_digest, last_run_id = excluded.last_run_id,
         item_key = excluded.item_key, updated_at = excluded.updated_at
       RETURNING *`,
      [
        failure.taskKey,
        failure.automationId,
        failure.itemKey,
        failure.textDigest,
        failure.runId,
        failure.limit,
        this.#iso(),
      ],
    );
    return itemFailuresFromRow(row!);
  }

  async raiseItemFailures(floor: Parameters<Store['raiseItemFailures']>[0]): Promise<ItemFailures> {
    // Never lowers a count, never escalates: another host's count only raises the floor.
    const row = await this.#row<ItemFailuresRow>(
      true,
      `INSERT INTO item_failures AS f (task_key, automation_id, item_key, failures, text_digest, last_run_id,
         escalated_at, notice_run_id, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, $7)
       ON CONFLICT (task_key) DO UPDATE SET
         failures = CASE WHEN f.text_digest = excluded.text_digest
           THEN greatest(f.failures, excluded.failures) ELSE excluded.failures END,
         escalated_at = CASE WHEN f.text_digest = excluded.text_digest THEN f.escalated_at END,
         notice_run_id = CASE WHEN f.text_digest = excluded.text_digest THEN f.notice_run_id END,
         text_digest = excluded.text_digest, updated_at = excluded.updated_at
       RETURNING *`,
      [
        floor.taskKey,
        floor.automationId,
        floor.itemKey,
        floor.failures,
        floor.textDigest,
        floor.runId,
        this.#iso(),
      ],
    );
    return itemFailuresFromRow(row!);
  }

  async getItemFailures(taskKey: string): Promise<ItemFailures | undefined> {
    const row = await this.#row<ItemFailuresRow>(false, 'SELECT * FROM item_failures WHERE task_key = $1', [
      taskKey,
    ]);
    return row ? itemFailuresFromRow(row) : undefined;
  }

  async listEscalations(): Promise<ItemFailures[]> {
    const rows = await this.#rows<ItemFailuresRow>(
      false,
      'SELECT * FROM item_failures WHERE escalated_at IS NOT NULL ORDER BY escalated_at, task_key',
    );
    return rows.map(itemFailuresFromRow);
  }

  async setEscalationNotice(taskKey: string, runId: string): Promise<void> {
    await this.#query(true, 'UPDATE item_failures SET notice_run_id = $1 WHERE task_key = $2', [
      runId,
      taskKey,
    ]);
  }

  async clearItemFailures(taskKey: string): Promise<boolean> {
    const result = await this.#query(true, 'DELETE FROM item_failures WHERE task_key = $1', [taskKey]);
    return (result.rowCount ?? 0) > 0;
  }

  async createRun(init: RunInit): Promise<RunRecord> {
    this.#check(true);
    const status = checkStatus(init.status);
    const ids = await this.#ids();
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await this.#row<RunRow>(
          true,
          `INSERT INTO runs (id, automation_id, task_key, repo, task_type, item_id, item_key, item_title,
             item_url, status, reason, created_at, profile, provider, prompt, scheduled_for,
             upstream_run_id, resumed, session_id, screening_findings, screening_reason, screened_digest,
             attempt, host)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
             $21, $22, $23, $24)
           RETURNING *`,
          [
            ids.next(),
            init.automationId,
            init.taskKey,
            init.repo,
            init.taskType,
            init.itemId,
            init.itemKey,
            init.itemTitle,
            init.itemUrl,
            status,
            init.reason ?? null,
            this.#iso(),
            init.profile ?? null,
            init.provider ?? null,
            init.prompt ?? null,
            init.scheduledFor ?? null,
            init.upstreamRunId ?? null,
            init.resumed === true,
            init.sessionId ?? null,
            json(init.screeningFindings),
            init.screeningReason ?? null,
            init.screenedDigest ?? null,
            init.attempt ?? 1,
            init.host ?? null,
          ],
        );
        return runFromRow(row!);
      } catch (error) {
        // Another process made the same id in the same millisecond: take the next one.
        if (attempt < RUN_ID_TRIES && error instanceof StateError && isRunIdTaken(error.cause)) continue;
        throw error;
      }
    }
  }

  async updateRun(id: string, patch: RunPatch): Promise<RunRecord> {
    this.#check(true);
    const keys = PATCH_KEYS.filter((key) => patch[key] !== undefined);
    const p = parameters();
    const sets = keys.map((key) => `${PATCH_COLUMNS[key]} = ${p.add(patchValue(key, patch))}`);
    const row =
      keys.length === 0
        ? await this.#row<RunRow>(false, 'SELECT * FROM runs WHERE id = $1', [id])
        : await this.#row<RunRow>(
            true,
            `UPDATE runs SET ${sets.join(', ')} WHERE id = ${p.add(id)} RETURNING *`,
            p.params,
          );
    if (!row) throw new StateError(`run ${id} does not exist in state database ${this.path}`);
    return runFromRow(row);
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const row = await this.#row<RunRow>(false, 'SELECT * FROM runs WHERE id = $1', [id]);
    return row ? runFromRow(row) : undefined;
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    const p = parameters();
    const where = runWhere(filter, p);
    const limit = p.add(rowLimit(filter.limit));
    const offset = p.add(Math.max(0, Math.floor(filter.offset ?? 0)));
    const rows = await this.#rows<RunRow>(
      false,
      `SELECT * FROM runs ${where} ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`,
      p.params,
    );
    return rows.map(runFromRow);
  }

  async newestRunsOfTasks(taskKeys: readonly string[]): Promise<RunRecord[]> {
    if (taskKeys.length === 0) return [];
    const rows = await this.#rows<RunRow>(
      false,
      `SELECT r.* FROM unnest($1::text[]) AS k(task_key)
       CROSS JOIN LATERAL (SELECT * FROM runs WHERE runs.task_key = k.task_key ORDER BY id DESC LIMIT 1) r`,
      [[...new Set(taskKeys)]],
    );
    return rows.map(runFromRow);
  }

  async runFigures(filter: RunFigureFilter): Promise<RunFigures> {
    const tallies = talliesSql(filter, PG_FIGURES);
    const medians = mediansSql(filter, PG_FIGURES);
    const [talliesRows, medianRows] = await Promise.all([
      this.#rows(false, tallies.sql, tallies.params),
      this.#rows(false, medians.sql, medians.params),
    ]);
    return figuresFromRows(talliesRows, medianRows);
  }

  async countRuns(filter: RunFilter = {}): Promise<number> {
    const p = parameters();
    const where = runWhere(filter, p);
    const row = await this.#row<{ n: number }>(
      false,
      `SELECT count(*)::int AS n FROM runs ${where}`,
      p.params,
    );
    return row?.n ?? 0;
  }

  async pruneRuns(automationId: string, keep: number): Promise<RunRecord[]> {
    if (!Number.isInteger(keep) || keep < 0) {
      throw new RangeError(`pruneRuns: keep must be a non-negative integer, got ${keep}`);
    }
    const rows = await this.#rows<RunRow>(
      true,
      `DELETE FROM runs WHERE id IN (
         SELECT id FROM runs WHERE automation_id = $1 AND status <> ALL($2::text[])
         ORDER BY id DESC OFFSET $3)
       RETURNING *`,
      [automationId, UNFINISHED_STATUSES, keep],
    );
    return rows.map(runFromRow).sort(newestFirst);
  }

  async countFinishedRuns(automationId: string): Promise<number> {
    const row = await this.#row<{ n: number }>(
      false,
      'SELECT count(*)::int AS n FROM runs WHERE automation_id = $1 AND status <> ALL($2::text[])',
      [automationId, UNFINISHED_STATUSES],
    );
    return row?.n ?? 0;
  }

  async sumCost(filter: { since: string; automationId?: string }): Promise<number> {
    const p = parameters();
    const byAutomation =
      filter.automationId === undefined ? '' : ` AND automation_id = ${p.add(filter.automationId)}`;
    const row = await this.#row<{ total: number }>(
      false,
      `SELECT coalesce(sum(cost_usd), 0)::float8 AS total FROM runs
       WHERE cost_usd IS NOT NULL AND started_at >= ${p.add(filter.since)}${byAutomation}`,
      p.params,
    );
    return row?.total ?? 0;
  }

  async setBudgetPark(park: BudgetPark): Promise<void> {
    await this.#query(
      true,
      `INSERT INTO budget_parks (scope, until, reason, parked_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope) DO UPDATE SET until = excluded.until, reason = excluded.reason,
         parked_at = excluded.parked_at`,
      [park.scope, park.until, park.reason, this.#iso()],
    );
  }

  async listBudgetParks(at: string): Promise<BudgetPark[]> {
    const rows = await this.#rows<BudgetPark>(
      false,
      'SELECT scope, until, reason FROM budget_parks WHERE until > $1 ORDER BY scope',
      [at],
    );
    return rows.map((row) => ({ scope: row.scope, until: row.until, reason: row.reason }));
  }

  async listUnfinishedRuns(filter: { host?: string } = {}): Promise<RunRecord[]> {
    const p = parameters();
    const unfinished = p.add(UNFINISHED_STATUSES);
    const byHost = filter.host === undefined ? '' : ` AND host = ${p.add(filter.host)}`;
    const rows = await this.#rows<RunRow>(
      false,
      `SELECT * FROM runs WHERE status = ANY(${unfinished}::text[])${byHost} ORDER BY id`,
      p.params,
    );
    return rows.map(runFromRow);
  }

  async getCronState(automationId: string): Promise<CronState | undefined> {
    const row = await this.#row<CronRow>(false, 'SELECT * FROM cron_state WHERE automation_id = $1', [
      automationId,
    ]);
    return row ? cronFromRow(row) : undefined;
  }

  async putCronState(state: CronState): Promise<void> {
    await this.#query(
      true,
      `INSERT INTO cron_state (automation_id, created_at, last_scheduled_for, pending_scheduled_for,
         last_execution_at, config_hash)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (automation_id) DO UPDATE SET
         created_at = excluded.created_at, last_scheduled_for = excluded.last_scheduled_for,
         pending_scheduled_for = excluded.pending_scheduled_for,
         last_execution_at = excluded.last_execution_at, config_hash = excluded.config_hash`,
      [
        state.automationId,
        state.createdAt,
        state.lastScheduledFor,
        state.pendingScheduledFor,
        state.lastExecutionAt,
        state.configHash,
      ],
    );
  }

  async hasItemKey(automationId: string, itemKey: string): Promise<boolean> {
    const row = await this.#row(
      false,
      'SELECT 1 FROM item_memory WHERE automation_id = $1 AND item_key = $2',
      [automationId, itemKey],
    );
    return row !== undefined;
  }

  async recordItemKeys(automationId: string, entries: readonly ItemMemoryEntry[]): Promise<void> {
    this.#check(true);
    if (entries.length === 0) return;
    // One statement, in the order given: the first record of a key wins, here and across calls.
    await this.#query(
      true,
      `INSERT INTO item_memory (automation_id, item_key, run_id, skipped, recorded_at)
       SELECT $1, e.item_key, e.run_id, e.skipped, $5
       FROM unnest($2::text[], $3::text[], $4::boolean[]) WITH ORDINALITY AS e(item_key, run_id, skipped, n)
       ORDER BY e.n
       ON CONFLICT (automation_id, item_key) DO NOTHING`,
      [
        automationId,
        entries.map((e) => e.itemKey),
        entries.map((e) => e.runId),
        entries.map((e) => e.skipped),
        this.#iso(),
      ],
    );
  }

  async listItemKeys(automationId: string): Promise<ItemMemoryEntry[]> {
    const rows = await this.#rows<{ item_key: string; run_id: string | null; skipped: boolean }>(
      false,
      'SELECT item_key, run_id, skipped FROM item_memory WHERE automation_id = $1 ORDER BY item_key',
      [automationId],
    );
    return rows.map((row) => ({ itemKey: row.item_key, runId: row.run_id, skipped: row.skipped }));
  }

  async clearItemKeys(automationId: string): Promise<void> {
    await this.#query(true, 'DELETE FROM item_memory WHERE automation_id = $1', [automationId]);
  }

  async setPaused(automationId: string, paused: boolean): Promise<void> {
    await this.#query(
      true,
      `INSERT INTO automation_controls (automation_id, paused, changed_at) VALUES ($1, $2, $3)
       ON CONFLICT (automation_id) DO UPDATE SET paused = excluded.paused, changed_at = excluded.changed_at`,
      [automationId, paused, this.#iso()],
    );
  }

  async listPaused(): Promise<string[]> {
    const rows = await this.#rows<{ automation_id: string }>(
      false,
      'SELECT automation_id FROM automation_controls WHERE paused ORDER BY automation_id',
    );
    return rows.map((row) => row.automation_id);
  }

  async findBlockedRun(taskKey: string, digest: string): Promise<RunRecord | undefined> {
    const row = await this.#row<RunRow>(
      false,
      `SELECT * FROM runs WHERE task_key = $1 AND screened_digest = $2 AND status = 'blocked'
       ORDER BY id DESC LIMIT 1`,
      [taskKey, digest],
    );
    return row ? runFromRow(row) : undefined;
  }

  async addAllowance(runId: string, allowedBy: string): Promise<Allowance> {
    // One statement: the run is still blocked when the allowance is written.
    const row = await this.#row<AllowanceRow>(
      true,
      `INSERT INTO allowances (run_id, task_key, text_digest, allowed_by, allowed_at)
       SELECT id, task_key, screened_digest, $2, $3 FROM runs
       WHERE id = $1 AND status = 'blocked' AND screened_digest IS NOT NULL
       RETURNING *`,
      [runId, allowedBy, this.#iso()],
    );
    if (row) return allowanceFromRow(row);
    const run = await this.getRun(runId);
    if (!run) throw new StateError(`run ${runId} does not exist in state database ${this.path}`);
    throw new StateError(`run ${runId} was not blocked by screening (its status is ${run.status})`);
  }

  async takeAllowance(taskKey: string, digest: string): Promise<Allowance | undefined> {
    // The oldest waiting one, locked while it is used: two hosts never use the same allowance.
    const row = await this.#row<AllowanceRow>(
      true,
      `UPDATE allowances SET used_at = $1 WHERE used_at IS NULL AND id = (
         SELECT id FROM allowances WHERE task_key = $2 AND text_digest = $3 AND used_at IS NULL
         ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [this.#iso(), taskKey, digest],
    );
    return row ? allowanceFromRow(row) : undefined;
  }

  async listAllowances(filter: { runId?: string; pending?: boolean }): Promise<Allowance[]> {
    const p = parameters();
    const where: string[] = [];
    if (filter.runId !== undefined) where.push(`run_id = ${p.add(filter.runId)}`);
    if (filter.pending) where.push('used_at IS NULL');
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const rows = await this.#rows<AllowanceRow>(
      false,
      `SELECT * FROM allowances ${clause} ORDER BY id`,
      p.params,
    );
    return rows.map(allowanceFromRow);
  }

  enqueueWrite(init: WriteInit): Promise<WriteRecord> {
    return this.#delegate(true, (q) => q.enqueueWrite(init));
  }

  listDueWrites(dueBy: string, limit?: number): Promise<WriteRecord[]> {
    return this.#delegate(false, (q) => q.listDueWrites(dueBy, limit));
  }

  listWrites(filter?: { status?: WriteStatus; runId?: string; marker?: string }): Promise<WriteRecord[]> {
    return this.#delegate(false, (q) => q.listWrites(filter));
  }

  updateWrite(id: number, patch: WritePatch): Promise<WriteRecord> {
    return this.#delegate(true, (q) => q.updateWrite(id, patch));
  }

  async recordFinding(init: FindingInit): Promise<{ finding: FindingRecord; outcome: FindingOutcome }> {
    const now = this.#iso();
    // The CTE reads the row as it was before this statement: what the finding was before the report.
    const row = await this.#row<FindingRow & { prior: string | null }>(
      true,
      `WITH prior AS (SELECT status FROM findings WHERE watch = $1 AND fingerprint = $3)
       INSERT INTO findings AS f (${FINDING_INSERT_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', $11, $11, $12, $12, $13, $13)
       ON CONFLICT (watch, fingerprint) DO UPDATE SET ${FINDING_SEEN_AGAIN}
       RETURNING f.*, (SELECT status FROM prior) AS prior`,
      [
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
        init.runId,
        now,
      ],
    );
    if (!row) throw new StateError(`recording a finding in ${this.path} returned no row`);
    const outcome: FindingOutcome =
      row.prior === null ? 'new' : row.prior === 'resolved' ? 'reopened' : 'seen-again';
    return { finding: findingFromRow(row), outcome };
  }

  async resolveFinding(
    id: number,
    resolved: { commit: string; runId: string; resolution: string },
  ): Promise<FindingRecord | undefined> {
    const row = await this.#row<FindingRow>(
      true,
      `UPDATE findings SET status = 'resolved', resolved_at = $1, resolved_commit = $2, resolved_run_id = $3,
         resolution = $4 WHERE id = $5 AND status = 'open' RETURNING *`,
      [this.#iso(), resolved.commit, resolved.runId, resolved.resolution, id],
    );
    return row ? findingFromRow(row) : undefined;
  }

  async listFindings(
    filter: { watch?: string; status?: FindingRecord['status']; limit?: number } = {},
  ): Promise<FindingRecord[]> {
    const rows = await this.#rows<FindingRow>(
      false,
      `SELECT * FROM findings WHERE ($1::text IS NULL OR watch = $1) AND ($2::text IS NULL OR status = $2)
       ORDER BY id LIMIT $3`,
      [filter.watch ?? null, filter.status ?? null, filter.limit ?? null],
    );
    return rows.map(findingFromRow);
  }

  enqueueNotification(init: NotificationInit): Promise<NotificationRecord> {
    return this.#delegate(true, (q) => q.enqueueNotification(init));
  }

  listDueNotifications(dueBy: string, limit?: number): Promise<NotificationRecord[]> {
    return this.#delegate(false, (q) => q.listDueNotifications(dueBy, limit));
  }

  listNotifications(filter?: { status?: NotificationStatus }): Promise<NotificationRecord[]> {
    return this.#delegate(false, (q) => q.listNotifications(filter));
  }

  updateNotification(id: number, patch: NotificationPatch): Promise<NotificationRecord> {
    return this.#delegate(true, (q) => q.updateNotification(id, patch));
  }

  recordWebhookDelivery(delivery: { id: string; event: string; pruneBefore: string }): Promise<boolean> {
    return this.#delegate(true, (q) => q.recordWebhookDelivery(delivery));
  }

  beginPullRequest(init: PullRequestInit): Promise<PullRequestRecord> {
    return this.#delegate(true, (q) => q.beginPullRequest(init));
  }

  updatePullRequest(runId: string, patch: PullRequestPatch): Promise<PullRequestRecord> {
    return this.#delegate(true, (q) => q.updatePullRequest(runId, patch));
  }

  getPullRequest(runId: string): Promise<PullRequestRecord | undefined> {
    return this.#delegate(false, (q) => q.getPullRequest(runId));
  }

  listPullRequests(filter?: PullRequestFilter): Promise<PullRequestRecord[]> {
    return this.#delegate(false, (q) => q.listPullRequests(filter));
  }

  getPullRequestMark(runId: string, key: string): Promise<PullRequestMark | undefined> {
    return this.#delegate(false, (q) => q.getPullRequestMark(runId, key));
  }

  setPullRequestMark(runId: string, key: string, value: string): Promise<PullRequestMark> {
    return this.#delegate(true, (q) => q.setPullRequestMark(runId, key, value));
  }

  deletePullRequestMark(runId: string, key: string): Promise<boolean> {
    return this.#delegate(true, (q) => q.deletePullRequestMark(runId, key));
  }

  listPullRequestMarks(runId: string): Promise<PullRequestMark[]> {
    return this.#delegate(false, (q) => q.listPullRequestMarks(runId));
  }

  async getMeta(key: string): Promise<string | undefined> {
    const row = await this.#row<{ value: string }>(false, 'SELECT value FROM meta WHERE key = $1', [key]);
    return row?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.#query(
      true,
      'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      [key, value],
    );
  }

  async exclusive<T>(name: string, action: () => Promise<T>): Promise<T> {
    // A session advisory lock on a connection of its own, held while the action runs (its
    // statements use other connections of the pool). One key per schema and name. A connection
    // whose lock or unlock failed is destroyed, which frees the lock with its session.
    const client = await this.#pool.connect().catch((error: unknown) => {
      throw useError(error, this.#info);
    });
    const key = `curupira:${this.#info.schema}:exclusive:${name}`;
    let healthy = true;
    try {
      try {
        await client.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
      } catch (error) {
        healthy = false;
        throw useError(error, this.#info);
      }
      try {
        return await action();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => {
          healthy = false;
        });
      }
    } finally {
      client.release(!healthy);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#pool.end();
    } catch (error) {
      throw useError(error, this.#info);
    }
  }
}
