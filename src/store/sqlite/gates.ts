/**
 * What the gates before a run keep in the SQLite store: paused automations, budget parks, and
 * screening's allowances of blocked text.
 */
import { StateError } from '../../core/errors.js';
import { type AllowanceRow, allowanceFromRow, type RunRow } from '../rows.js';
import type { Allowance, BudgetPark } from '../types.js';
import { bool, type SqliteConnection } from './connection.js';

export class SqliteGates {
  readonly #c: SqliteConnection;

  constructor(connection: SqliteConnection) {
    this.#c = connection;
  }

  setPaused(automationId: string, paused: boolean): Promise<void> {
    return this.#c.write(() => {
      this.#c
        .sql(
          `INSERT INTO automation_controls (automation_id, paused, changed_at) VALUES (?, ?, ?)
         ON CONFLICT (automation_id) DO UPDATE SET paused = excluded.paused, changed_at = excluded.changed_at`,
        )
        .run(automationId, bool(paused), this.#c.iso());
    });
  }

  listPaused(): Promise<string[]> {
    return this.#c.read(
      () =>
        this.#c
          .sql('SELECT automation_id FROM automation_controls WHERE paused = 1 ORDER BY automation_id')
          .pluck()
          .all() as string[],
    );
  }

  setBudgetPark(park: BudgetPark): Promise<void> {
    return this.#c.write(() => {
      this.#c
        .sql(
          `INSERT INTO budget_parks (scope, until, reason, parked_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (scope) DO UPDATE SET until = excluded.until, reason = excluded.reason,
           parked_at = excluded.parked_at`,
        )
        .run(park.scope, park.until, park.reason, this.#c.iso());
    });
  }

  listBudgetParks(at: string): Promise<BudgetPark[]> {
    return this.#c.read(() => {
      const rows = this.#c
        .sql('SELECT scope, until, reason FROM budget_parks WHERE until > ? ORDER BY scope')
        .all(at) as BudgetPark[];
      return rows.map((row) => ({ scope: row.scope, until: row.until, reason: row.reason }));
    });
  }

  addAllowance(runId: string, allowedBy: string, allowedAt?: string): Promise<Allowance> {
    return this.#c.write(() => {
      const run = this.#c.sql('SELECT * FROM runs WHERE id = ?').get(runId) as RunRow | undefined;
      if (!run) throw new StateError(`run ${runId} does not exist in state database ${this.#c.path}`);
      if (run.status !== 'blocked' || run.screened_digest === null)
        throw new StateError(`run ${runId} was not blocked by screening (its status is ${run.status})`);
      const row = this.#c
        .sql(
          `INSERT INTO allowances (run_id, task_key, text_digest, allowed_by, allowed_at)
         VALUES (?, ?, ?, ?, ?) RETURNING *`,
        )
        .get(runId, run.task_key, run.screened_digest, allowedBy, allowedAt ?? this.#c.iso()) as AllowanceRow;
      return allowanceFromRow(row);
    });
  }

  takeAllowance(taskKey: string, digest: string, token?: string): Promise<Allowance | undefined> {
    return this.#c.write(() => {
      if (token !== undefined) {
        const mine = this.#c.sql('SELECT * FROM allowances WHERE take_token = ?').get(token) as
          | AllowanceRow
          | undefined;
        if (mine) return allowanceFromRow(mine);
      }
      const row = this.#c
        .sql(
          `UPDATE allowances SET used_at = ?, take_token = ? WHERE id = (
           SELECT id FROM allowances WHERE task_key = ? AND text_digest = ? AND used_at IS NULL
           ORDER BY id LIMIT 1)
         RETURNING *`,
        )
        .get(this.#c.iso(), token ?? null, taskKey, digest) as AllowanceRow | undefined;
      return row ? allowanceFromRow(row) : undefined;
    });
  }

  listAllowances(filter: { runId?: string; pending?: boolean }): Promise<Allowance[]> {
    return this.#c.read(() => {
      const where: string[] = [];
      const params: string[] = [];
      if (filter.runId !== undefined) {
        where.push('run_id = ?');
        params.push(filter.runId);
      }
      if (filter.pending) where.push('used_at IS NULL');
      const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
      const rows = this.#c
        .sql(`SELECT * FROM allowances ${clause} ORDER BY id`)
        .all(...params) as AllowanceRow[];
      return rows.map(allowanceFromRow);
    });
  }
}
