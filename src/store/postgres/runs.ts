/**
 * The run ledger of the PostgreSQL store: opening, updating, listing and counting runs, their
 * figures and cost, pruning. Run ids come from `run-id.ts`, seeded once from the newest id stored;
 * two processes making the same id at once is settled by taking the next one.
 */
import { StateError } from '../../core/errors.js';
import { type RunRecord, UNFINISHED_STATUSES } from '../../core/types.js';
import { type FiguresDialect, figuresFromRows, mediansSql, talliesSql } from '../figures-sql.js';
import { checkStatus, PATCH_COLUMNS, PATCH_KEYS, type PatchKey, type RunRow, runFromRow } from '../rows.js';
import { createRunIdGenerator, type RunIdGenerator } from '../run-id.js';
import { attentionSql } from '../sql.js';
import type { RunFigureFilter, RunFigures, RunFilter, RunInit, RunPatch } from '../types.js';
import { json, type Param, type PgConnection, parameters } from './connection.js';

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

export class PgRuns {
  readonly #c: PgConnection;
  #runIds: Promise<RunIdGenerator> | undefined;

  constructor(connection: PgConnection) {
    this.#c = connection;
  }

  /** The run id generator, seeded once from the largest id stored (see run-id.ts). */
  #ids(): Promise<RunIdGenerator> {
    if (!this.#runIds) {
      const made = this.#c
        .row<{ newest: string | null }>(false, 'SELECT max(id) AS newest FROM runs')
        .then((row) => createRunIdGenerator(this.#c.now, row?.newest ?? undefined));
      // A failed seeding (the server was away) is tried again by the next run.
      made.catch(() => {
        if (this.#runIds === made) this.#runIds = undefined;
      });
      this.#runIds = made;
    }
    return this.#runIds;
  }

  async createRun(init: RunInit): Promise<RunRecord> {
    this.#c.check(true);
    const status = checkStatus(init.status);
    const ids = await this.#ids();
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await this.#c.row<RunRow>(
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
            this.#c.iso(),
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
    this.#c.check(true);
    const keys = PATCH_KEYS.filter((key) => patch[key] !== undefined);
    const p = parameters();
    const sets = keys.map((key) => `${PATCH_COLUMNS[key]} = ${p.add(patchValue(key, patch))}`);
    const row =
      keys.length === 0
        ? await this.#c.row<RunRow>(false, 'SELECT * FROM runs WHERE id = $1', [id])
        : await this.#c.row<RunRow>(
            true,
            `UPDATE runs SET ${sets.join(', ')} WHERE id = ${p.add(id)} RETURNING *`,
            p.params,
          );
    if (!row) throw new StateError(`run ${id} does not exist in state database ${this.#c.path}`);
    return runFromRow(row);
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const row = await this.#c.row<RunRow>(false, 'SELECT * FROM runs WHERE id = $1', [id]);
    return row ? runFromRow(row) : undefined;
  }

  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    const p = parameters();
    const where = runWhere(filter, p);
    const limit = p.add(rowLimit(filter.limit));
    const offset = p.add(Math.max(0, Math.floor(filter.offset ?? 0)));
    const rows = await this.#c.rows<RunRow>(
      false,
      `SELECT * FROM runs ${where} ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`,
      p.params,
    );
    return rows.map(runFromRow);
  }

  async countRuns(filter: RunFilter = {}): Promise<number> {
    const p = parameters();
    const where = runWhere(filter, p);
    const row = await this.#c.row<{ n: number }>(
      false,
      `SELECT count(*)::int AS n FROM runs ${where}`,
      p.params,
    );
    return row?.n ?? 0;
  }

  async newestRunsOfTasks(taskKeys: readonly string[]): Promise<RunRecord[]> {
    if (taskKeys.length === 0) return [];
    const rows = await this.#c.rows<RunRow>(
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
      this.#c.rows(false, tallies.sql, tallies.params),
      this.#c.rows(false, medians.sql, medians.params),
    ]);
    return figuresFromRows(talliesRows, medianRows);
  }

  async pruneRuns(automationId: string, keep: number): Promise<RunRecord[]> {
    if (!Number.isInteger(keep) || keep < 0) {
      throw new RangeError(`pruneRuns: keep must be a non-negative integer, got ${keep}`);
    }
    const rows = await this.#c.rows<RunRow>(
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
    const row = await this.#c.row<{ n: number }>(
      false,
      'SELECT count(*)::int AS n FROM runs WHERE automation_id = $1 AND status <> ALL($2::text[])',
      [automationId, UNFINISHED_STATUSES],
    );
    return row?.n ?? 0;
  }

  async listUnfinishedRuns(filter: { host?: string } = {}): Promise<RunRecord[]> {
    const p = parameters();
    const unfinished = p.add(UNFINISHED_STATUSES);
    const byHost = filter.host === undefined ? '' : ` AND host = ${p.add(filter.host)}`;
    const rows = await this.#c.rows<RunRow>(
      false,
      `SELECT * FROM runs WHERE status = ANY(${unfinished}::text[])${byHost} ORDER BY id`,
      p.params,
    );
    return rows.map(runFromRow);
  }

  async findBlockedRun(taskKey: string, digest: string): Promise<RunRecord | undefined> {
    const row = await this.#c.row<RunRow>(
      false,
      `SELECT * FROM runs WHERE task_key = $1 AND screened_digest = $2 AND status = 'blocked'
       ORDER BY id DESC LIMIT 1`,
      [taskKey, digest],
    );
    return row ? runFromRow(row) : undefined;
  }

  async sumCost(filter: { since: string; automationId?: string }): Promise<number> {
    const p = parameters();
    const byAutomation =
      filter.automationId === undefined ? '' : ` AND automation_id = ${p.add(filter.automationId)}`;
    const row = await this.#c.row<{ total: number }>(
      false,
      `SELECT coalesce(sum(cost_usd), 0)::float8 AS total FROM runs
       WHERE cost_usd IS NOT NULL AND started_at >= ${p.add(filter.since)}${byAutomation}`,
      p.params,
    );
    return row?.total ?? 0;
  }
}
