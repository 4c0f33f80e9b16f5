/**
 * What retries and escalation keep in the SQLite store: agent sessions to resume (and their failed
 * resumes), and each item's failure count and escalation.
 */
import {
  type ItemFailuresRow,
  itemFailuresFromRow,
  type SessionRow,
  sessionFromRow,
  sessionValues,
} from '../rows.js';
import type { ItemFailures, SessionRecord, Store, WriteOptions } from '../types.js';
import type { SqliteConnection } from './connection.js';

export class SqliteRetries {
  readonly #c: SqliteConnection;

  constructor(connection: SqliteConnection) {
    this.#c = connection;
  }

  saveSession(session: SessionRecord, options?: WriteOptions): Promise<void> {
    return this.#c.write(() => {
      this.#c
        .sql(
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
        )
        .run(...sessionValues(session));
    }, options);
  }

  getSession(taskKey: string): Promise<SessionRecord | undefined> {
    return this.#c.read(() => {
      const row = this.#c.sql('SELECT * FROM sessions WHERE task_key = ?').get(taskKey) as
        | SessionRow
        | undefined;
      return row ? sessionFromRow(row) : undefined;
    });
  }

  listSessions(): Promise<SessionRecord[]> {
    return this.#c.read(() => {
      const rows = this.#c.sql('SELECT * FROM sessions ORDER BY created_at, task_key').all() as SessionRow[];
      return rows.map(sessionFromRow);
    });
  }

  deleteSession(taskKey: string, options?: WriteOptions): Promise<void> {
    return this.#c.write(() => {
      this.#c.sql('DELETE FROM sessions WHERE task_key = ?').run(taskKey);
    }, options);
  }

  recordResumeFailure(taskKey: string): Promise<number> {
    return this.#c.write(() => {
      const count = this.#c
        .sql(
          'UPDATE sessions SET resume_failures = resume_failures + 1 WHERE task_key = ? RETURNING resume_failures',
        )
        .pluck()
        .get(taskKey) as number | undefined;
      return count ?? 0;
    });
  }

  recordItemFailure(failure: Parameters<Store['recordItemFailure']>[0]): Promise<ItemFailures> {
    return this.#c.write(() => {
      const now = this.#c.iso();
      // New text starts the count again (and lifts an escalation of the old text).
      const row = this.#c
        .sql(
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
        )
        .get(
          failure.taskKey,
          failure.automationId,
          failure.itemKey,
          failure.textDigest,
          failure.runId,
          now,
        ) as ItemFailuresRow;
      if (failure.limit > 0 && row.failures >= failure.limit && row.escalated_at === null) {
        const escalated = this.#c
          .sql('UPDATE item_failures SET escalated_at = ? WHERE task_key = ? RETURNING *')
          .get(now, failure.taskKey) as ItemFailuresRow;
        return itemFailuresFromRow(escalated);
      }
      return itemFailuresFromRow(row);
    });
  }

  getItemFailures(taskKey: string): Promise<ItemFailures | undefined> {
    return this.#c.read(() => {
      const row = this.#c.sql('SELECT * FROM item_failures WHERE task_key = ?').get(taskKey) as
        | ItemFailuresRow
        | undefined;
      return row ? itemFailuresFromRow(row) : undefined;
    });
  }

  listEscalations(): Promise<ItemFailures[]> {
    return this.#c.read(() => {
      const rows = this.#c
        .sql('SELECT * FROM item_failures WHERE escalated_at IS NOT NULL ORDER BY escalated_at, task_key')
        .all() as ItemFailuresRow[];
      return rows.map(itemFailuresFromRow);
    });
  }

  setEscalationNotice(taskKey: string, runId: string): Promise<void> {
    return this.#c.write(() => {
      this.#c.sql('UPDATE item_failures SET notice_run_id = ? WHERE task_key = ?').run(runId, taskKey);
    });
  }

  raiseItemFailures(floor: Parameters<Store['raiseItemFailures']>[0]): Promise<ItemFailures> {
    return this.#c.write(() => {
      // Never lowers a count, never escalates: another host's count only raises the floor.
      const row = this.#c
        .sql(
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
        )
        .get(
          floor.taskKey,
          floor.automationId,
          floor.itemKey,
          floor.failures,
          floor.textDigest,
          floor.runId,
          this.#c.iso(),
        ) as ItemFailuresRow;
      return itemFailuresFromRow(row);
    });
  }

  clearItemFailures(taskKey: string): Promise<boolean> {
    return this.#c.write(
      () => this.#c.sql('DELETE FROM item_failures WHERE task_key = ?').run(taskKey).changes > 0,
    );
  }
}
