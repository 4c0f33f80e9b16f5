/**
 * What each automation's feed remembers in the PostgreSQL store: its cron marks and the item keys
 * `once` and `ignore_backlog` recorded; and the small named values (`meta`).
 */
import { type CronRow, cronFromRow } from '../rows.js';
import type { CronState, ItemMemoryEntry } from '../types.js';
import type { PgConnection } from './connection.js';

export class PgAutomations {
  readonly #c: PgConnection;

  constructor(connection: PgConnection) {
    this.#c = connection;
  }

  async getCronState(automationId: string): Promise<CronState | undefined> {
    const row = await this.#c.row<CronRow>(false, 'SELECT * FROM cron_state WHERE automation_id = $1', [
      automationId,
    ]);
    return row ? cronFromRow(row) : undefined;
  }

  async putCronState(state: CronState): Promise<void> {
    await this.#c.query(
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
    const row = await this.#c.row(
      false,
      'SELECT 1 FROM item_memory WHERE automation_id = $1 AND item_key = $2',
      [automationId, itemKey],
    );
    return row !== undefined;
  }

  async recordItemKeys(automationId: string, entries: readonly ItemMemoryEntry[]): Promise<void> {
    this.#c.check(true);
    if (entries.length === 0) return;
    // One statement, in the order given: the first record of a key wins, here and across calls.
    await this.#c.query(
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
        this.#c.iso(),
      ],
    );
  }

  async listItemKeys(automationId: string): Promise<ItemMemoryEntry[]> {
    const rows = await this.#c.rows<{ item_key: string; run_id: string | null; skipped: boolean }>(
      false,
      'SELECT item_key, run_id, skipped FROM item_memory WHERE automation_id = $1 ORDER BY item_key',
      [automationId],
    );
    return rows.map((row) => ({ itemKey: row.item_key, runId: row.run_id, skipped: row.skipped }));
  }

  async clearItemKeys(automationId: string): Promise<void> {
    await this.#c.query(true, 'DELETE FROM item_memory WHERE automation_id = $1', [automationId]);
  }

  async getMeta(key: string): Promise<string | undefined> {
    const row = await this.#c.row<{ value: string }>(false, 'SELECT value FROM meta WHERE key = $1', [key]);
    return row?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.#c.query(
      true,
      'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      [key, value],
    );
  }
}
