/**
 * What retries and escalation keep in the PostgreSQL store: agent sessions to resume (and their
 * failed resumes), and each item's failure count and escalation, counted in one statement so that
 * two hosts counting at once both count.
 */
import {
  type ItemFailuresRow,
  itemFailuresFromRow,
  type SessionRow,
  sessionFromRow,
  sessionValues,
} from '../rows.js';
import type { ItemFailures, SessionRecord, Store } from '../types.js';
import type { PgConnection } from './connection.js';

export class PgRetries {
  readonly #c: PgConnection;

  constructor(connection: PgConnection) {
    this.#c = connection;
  }

  async saveSession(session: SessionRecord): Promise<void> {
    await this.#c.query(
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
    const row = await this.#c.row<SessionRow>(false, 'SELECT * FROM sessions WHERE task_key = $1', [taskKey]);
    return row ? sessionFromRow(row) : undefined;
  }

  async listSessions(): Promise<SessionRecord[]> {
    const rows = await this.#c.rows<SessionRow>(
      false,
      'SELECT * FROM sessions ORDER BY created_at, task_key',
    );
    return rows.map(sessionFromRow);
  }

  async deleteSession(taskKey: string): Promise<void> {
    await this.#c.query(true, 'DELETE FROM sessions WHERE task_key = $1', [taskKey]);
  }

  async recordResumeFailure(taskKey: string): Promise<number> {
    const row = await this.#c.row<{ resume_failures: number }>(
      true,
      'UPDATE sessions SET resume_failures = resume_failures + 1 WHERE task_key = $1 RETURNING resume_failures',
      [taskKey],
    );
    return row?.resume_failures ?? 0;
  }

  async recordItemFailure(failure: Parameters<Store['recordItemFailure']>[0]): Promise<ItemFailures> {
    // One upsert: two hosts counting at once both count. New text starts the count again (and
    // lifts an escalation of the old text); reaching the limit escalates, once.
    const row = await this.#c.row<ItemFailuresRow>(
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
        this.#c.iso(),
      ],
    );
    return itemFailuresFromRow(row!);
  }

  async getItemFailures(taskKey: string): Promise<ItemFailures | undefined> {
    const row = await this.#c.row<ItemFailuresRow>(false, 'SELECT * FROM item_failures WHERE task_key = $1', [
      taskKey,
    ]);
    return row ? itemFailuresFromRow(row) : undefined;
  }

  async listEscalations(): Promise<ItemFailures[]> {
    const rows = await this.#c.rows<ItemFailuresRow>(
      false,
      'SELECT * FROM item_failures WHERE escalated_at IS NOT NULL ORDER BY escalated_at, task_key',
    );
    return rows.map(itemFailuresFromRow);
  }

  async setEscalationNotice(taskKey: string, runId: string): Promise<void> {
    await this.#c.query(true, 'UPDATE item_failures SET notice_run_id = $1 WHERE task_key = $2', [
      runId,
      taskKey,
    ]);
  }

  async raiseItemFailures(floor: Parameters<Store['raiseItemFailures']>[0]): Promise<ItemFailures> {
    // Never lowers a count, never escalates: another host's count only raises the floor.
    const row = await this.#c.row<ItemFailuresRow>(
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
        this.#c.iso(),
      ],
    );
    return itemFailuresFromRow(row!);
  }

  async clearItemFailures(taskKey: string): Promise<boolean> {
    const result = await this.#c.query(true, 'DELETE FROM item_failures WHERE task_key = $1', [taskKey]);
    return (result.rowCount ?? 0) > 0;
  }
}
