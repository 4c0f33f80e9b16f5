/**
 * Review findings in the PostgreSQL store: recorded (new, seen again, reopened), resolved, listed.
 */
import { StateError } from '../../core/errors.js';
import {
  FINDING_INSERT_COLUMNS,
  FINDING_SEEN_AGAIN,
  type FindingRow,
  findingFromRow,
  findingReportValues,
} from '../findings-rows.js';
import type { FindingInit, FindingOutcome, FindingRecord } from '../types.js';
import type { PgConnection } from './connection.js';

export class PgFindings {
  readonly #c: PgConnection;

  constructor(connection: PgConnection) {
    this.#c = connection;
  }

  async recordFinding(init: FindingInit): Promise<{ finding: FindingRecord; outcome: FindingOutcome }> {
    const now = this.#c.iso();
    // The CTE reads the row as it was before this statement: what the finding was before the report.
    const row = await this.#c.row<FindingRow & { prior: string | null }>(
      true,
      `WITH prior AS (SELECT status FROM findings WHERE watch = $1 AND fingerprint = $3)
       INSERT INTO findings AS f (${FINDING_INSERT_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', $11, $11, $12, $12, $13, $13)
       ON CONFLICT (watch, fingerprint) DO UPDATE SET ${FINDING_SEEN_AGAIN}
       RETURNING f.*, (SELECT status FROM prior) AS prior`,
      [...findingReportValues(init), init.commit, init.runId, now],
    );
    if (!row) throw new StateError(`recording a finding in ${this.#c.path} returned no row`);
    const outcome: FindingOutcome =
      row.prior === null ? 'new' : row.prior === 'resolved' ? 'reopened' : 'seen-again';
    return { finding: findingFromRow(row), outcome };
  }

  async resolveFinding(
    id: number,
    resolved: { commit: string; runId: string; resolution: string },
  ): Promise<FindingRecord | undefined> {
    const row = await this.#c.row<FindingRow>(
      true,
      `UPDATE findings SET status = 'resolved', resolved_at = $1, resolved_commit = $2, resolved_run_id = $3,
         resolution = $4 WHERE id = $5 AND status = 'open' RETURNING *`,
      [this.#c.iso(), resolved.commit, resolved.runId, resolved.resolution, id],
    );
    return row ? findingFromRow(row) : undefined;
  }

  async listFindings(
    filter: { watch?: string; status?: FindingRecord['status']; limit?: number } = {},
  ): Promise<FindingRecord[]> {
    const rows = await this.#c.rows<FindingRow>(
      false,
      `SELECT * FROM findings WHERE ($1::text IS NULL OR watch = $1) AND ($2::text IS NULL OR status = $2)
       ORDER BY id LIMIT $3`,
      [filter.watch ?? null, filter.status ?? null, filter.limit ?? null],
    );
    return rows.map(findingFromRow);
  }
}
