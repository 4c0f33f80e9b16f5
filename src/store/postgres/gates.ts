/**
 * What the gates before a run keep in the PostgreSQL store: paused automations, budget parks, and
 * screening's allowances of blocked text (each used once, by one host).
 */
import { StateError } from '../../core/errors.js';
import { type AllowanceRow, allowanceFromRow, type RunRow } from '../rows.js';
import type { Allowance, BudgetPark } from '../types.js';
import { type PgConnection, parameters } from './connection.js';

export class PgGates {
  readonly #c: PgConnection;

  constructor(connection: PgConnection) {
    this.#c = connection;
  }

  async setPaused(automationId: string, paused: boolean): Promise<void> {
    await this.#c.query(
      true,
      `INSERT INTO automation_controls (automation_id, paused, changed_at) VALUES ($1, $2, $3)
       ON CONFLICT (automation_id) DO UPDATE SET paused = excluded.paused, changed_at = excluded.changed_at`,
      [automationId, paused, this.#c.iso()],
    );
  }

  async listPaused(): Promise<string[]> {
    const rows = await this.#c.rows<{ automation_id: string }>(
      false,
      'SELECT automation_id FROM automation_controls WHERE paused ORDER BY automation_id',
    );
    return rows.map((row) => row.automation_id);
  }

  async setBudgetPark(park: BudgetPark): Promise<void> {
    await this.#c.query(
      true,
      `INSERT INTO budget_parks (scope, until, reason, parked_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope) DO UPDATE SET until = excluded.until, reason = excluded.reason,
         parked_at = excluded.parked_at`,
      [park.scope, park.until, park.reason, this.#c.iso()],
    );
  }

  async listBudgetParks(at: string): Promise<BudgetPark[]> {
    const rows = await this.#c.rows<BudgetPark>(
      false,
      'SELECT scope, until, reason FROM budget_parks WHERE until > $1 ORDER BY scope',
      [at],
    );
    return rows.map((row) => ({ scope: row.scope, until: row.until, reason: row.reason }));
  }

  async addAllowance(runId: string, allowedBy: string, allowedAt?: string): Promise<Allowance> {
    // One statement: the run is still blocked when the allowance is written.
    const row = await this.#c.row<AllowanceRow>(
      true,
      `INSERT INTO allowances (run_id, task_key, text_digest, allowed_by, allowed_at)
       SELECT id, task_key, screened_digest, $2, $3 FROM runs
       WHERE id = $1 AND status = 'blocked' AND screened_digest IS NOT NULL
       RETURNING *`,
      [runId, allowedBy, allowedAt ?? this.#c.iso()],
    );
    if (row) return allowanceFromRow(row);
    const run = await this.#c.row<RunRow>(false, 'SELECT * FROM runs WHERE id = $1', [runId]);
    if (!run) throw new StateError(`run ${runId} does not exist in state database ${this.#c.path}`);
    throw new StateError(`run ${runId} was not blocked by screening (its status is ${run.status})`);
  }

  async takeAllowance(taskKey: string, digest: string, token?: string): Promise<Allowance | undefined> {
    // The one this call's earlier try took (its answer lost), else the oldest waiting one, locked
    // while it is used: two hosts never use the same allowance.
    const row = await this.#c.row<AllowanceRow>(
      true,
      `WITH mine AS (SELECT * FROM allowances WHERE $4::text IS NOT NULL AND take_token = $4::text LIMIT 1),
       taken AS (
         UPDATE allowances SET used_at = $1, take_token = $4::text
         WHERE NOT EXISTS (SELECT 1 FROM mine) AND used_at IS NULL AND id = (
           SELECT id FROM allowances WHERE task_key = $2 AND text_digest = $3 AND used_at IS NULL
           ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING *)
       SELECT * FROM mine UNION ALL SELECT * FROM taken`,
      [this.#c.iso(), taskKey, digest, token ?? null],
    );
    return row ? allowanceFromRow(row) : undefined;
  }

  async listAllowances(filter: { runId?: string; pending?: boolean }): Promise<Allowance[]> {
    const p = parameters();
    const where: string[] = [];
    if (filter.runId !== undefined) where.push(`run_id = ${p.add(filter.runId)}`);
    if (filter.pending) where.push('used_at IS NULL');
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const rows = await this.#c.rows<AllowanceRow>(
      false,
      `SELECT * FROM allowances ${clause} ORDER BY id`,
      p.params,
    );
    return rows.map(allowanceFromRow);
  }
}
