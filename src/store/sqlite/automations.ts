/**
 * What each automation's feed remembers in the SQLite store: its cron marks and the item keys
 * `once` and `ignore_backlog` recorded; and the small named values (`meta`).
 */
import { type CronRow, cronFromRow } from '../rows.js';
import type { CronState, ItemMemoryEntry } from '../types.js';
import { bool, type SqliteConnection } from './connection.js';

interface ItemRow {
  item_key: string;
  run_id: string | null;
  skipped: number;
}

export class SqliteAutomations {
  readonly #c: SqliteConnection;

  constructor(connection: SqliteConnection) {
    this.#c = connection;
  }

  getCronState(automationId: string): Promise<CronState | undefined> {
    return this.#c.read(() => {
      const row = this.#c.sql('SELECT * FROM cron_state WHERE automation_id = ?').get(automationId) as
        | CronRow
        | undefined;
      return row ? cronFromRow(row) : undefined;
    });
  }

  putCronState(state: CronState): Promise<void> {
    return this.#c.write(() => {
      this.#c
        .sql(
          `INSERT INTO cron_state (automation_id, created_at, last_scheduled_for, pending_scheduled_for,
           last_execution_at, config_hash)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (automation_id) DO UPDATE SET
           created_at = excluded.created_at, last_scheduled_for = excluded.last_scheduled_for,
           pending_scheduled_for = excluded.pending_scheduled_for,
           last_execution_at = excluded.last_execution_at, config_hash = excluded.config_hash`,
        )
        .run(
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
    return this.#c.read(
      () =>
        this.#c
          .sql('SELECT 1 FROM item_memory WHERE automation_id = ? AND item_key = ?')
          .get(automationId, itemKey) !== undefined,
    );
  }

  recordItemKeys(automationId: string, entries: readonly ItemMemoryEntry[]): Promise<void> {
    return this.#c.write(() => {
      const insert = this.#c.sql(
        `INSERT INTO item_memory (automation_id, item_key, run_id, skipped, recorded_at)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (automation_id, item_key) DO NOTHING`,
      );
      const recordedAt = this.#c.iso();
      this.#c.db
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
    return this.#c.read(() => {
      const rows = this.#c
        .sql('SELECT item_key, run_id, skipped FROM item_memory WHERE automation_id = ? ORDER BY item_key')
        .all(automationId) as ItemRow[];
      return rows.map((row) => ({ itemKey: row.item_key, runId: row.run_id, skipped: row.skipped === 1 }));
    });
  }

  clearItemKeys(automationId: string): Promise<void> {
    return this.#c.write(() => {
      this.#c.sql('DELETE FROM item_memory WHERE automation_id = ?').run(automationId);
    });
  }

  getMeta(key: string): Promise<string | undefined> {
    return this.#c.read(
      () => this.#c.sql('SELECT value FROM meta WHERE key = ?').pluck().get(key) as string | undefined,
    );
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.#c.write(() => {
      this.#c
        .sql(
          'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
        )
        .run(key, value);
    });
  }
}
