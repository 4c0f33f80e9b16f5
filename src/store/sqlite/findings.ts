/**
 * Review findings in the SQLite store: recorded (new, seen again, reopened), resolved, listed.
 */
import {
  FINDING_INSERT_COLUMNS,
  FINDING_SEEN_AGAIN,
  type FindingRow,
  findingFromRow,
  findingReportValues,
} from '../findings-rows.js';
import type { FindingInit, FindingOutcome, FindingRecord } from '../types.js';
import type { SqliteConnection } from './connection.js';

export class SqliteFindings {
  readonly #c: SqliteConnection;

  constructor(connection: SqliteConnection) {
    this.#c = connection;
  }

  recordFinding(init: FindingInit): Promise<{ finding: FindingRecord; outcome: FindingOutcome }> {
    return this.#c.write(() => {
      const now = this.#c.iso();
      const prior = this.#c
        .sql('SELECT status FROM findings WHERE watch = ? AND fingerprint = ?')
        .pluck()
        .get(init.watch, init.fingerprint) as string | undefined;
      const row = this.#c
        .sql(
          `INSERT INTO findings (${FINDING_INSERT_COLUMNS})
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?, ?, ?, ?)
         ON CONFLICT (watch, fingerprint) DO UPDATE SET ${FINDING_SEEN_AGAIN}
         RETURNING *`,
        )
        .get(
          ...findingReportValues(init),
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
    return this.#c.write(() => {
      const row = this.#c
        .sql(
          `UPDATE findings SET status = 'resolved', resolved_at = ?, resolved_commit = ?, resolved_run_id = ?,
           resolution = ? WHERE id = ? AND status = 'open' RETURNING *`,
        )
        .get(this.#c.iso(), resolved.commit, resolved.runId, resolved.resolution, id) as
        | FindingRow
        | undefined;
      return row ? findingFromRow(row) : undefined;
    });
  }

  listFindings(
    filter: { watch?: string; status?: FindingRecord['status']; limit?: number } = {},
  ): Promise<FindingRecord[]> {
    return this.#c.read(() => {
      const rows = this.#c
        .sql(
          `SELECT * FROM findings WHERE (? IS NULL OR watch = ?) AND (? IS NULL OR status = ?) ORDER BY id LIMIT ?`,
        )
        .all(
          filter.watch ?? null,
          filter.watch ?? null,
          filter.status ?? null,
          filter.status ?? null,
          filter.limit ?? -1,
        ) as FindingRow[];
      return rows.map(findingFromRow);
    });
  }
}
