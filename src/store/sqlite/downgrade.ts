/**
 * For migration tests: SQL that takes a current state file back to before a migration, newest
 * first, so a test can downgrade a file to version N and watch it migrate up again.
 */

/** Undoes migration 17 (the tokens of allowance takes and webhook deliveries). */
export const UNDO_MIGRATION_17 = `DROP INDEX IF EXISTS allowances_by_token; ALTER TABLE allowances DROP COLUMN take_token;
  ALTER TABLE webhook_deliveries DROP COLUMN receipt;`;

/** Undoes migration 16 (a run's reported result and inputs). */
export const UNDO_MIGRATION_16 =
  'ALTER TABLE runs DROP COLUMN result_json; ALTER TABLE runs DROP COLUMN inputs_json;';

/** Undoes migration 15 (the findings of code-review watches). */
export const UNDO_MIGRATION_15 = 'DROP TABLE IF EXISTS findings;';

/** Undoes migration 14 (the board's search and figures indexes). */
export const UNDO_MIGRATION_14 = `DROP INDEX IF EXISTS runs_by_task; DROP INDEX IF EXISTS runs_by_created;
  DROP INDEX IF EXISTS runs_by_profile; DROP INDEX IF EXISTS runs_by_repo;`;

/** Undoes migration 13 (which code a run's agent saw). */
export const UNDO_MIGRATION_13 =
  'ALTER TABLE runs DROP COLUMN base_commit; ALTER TABLE runs DROP COLUMN head_commit;';

/** Undoes migration 12 (the host of a run). */
export const UNDO_MIGRATION_12 = 'ALTER TABLE runs DROP COLUMN host;';

/** Undoes migration 11 (following pull requests: gates and marks). */
export const UNDO_MIGRATION_11 = `DROP TABLE IF EXISTS pull_request_marks; ALTER TABLE pull_requests DROP COLUMN gate;
  ALTER TABLE pull_requests DROP COLUMN gate_since; ALTER TABLE pull_requests DROP COLUMN gate_detail;`;

/** Undoes migration 10 (cost and budgets). */
export const UNDO_MIGRATION_10 = `DROP TABLE IF EXISTS budget_parks; DROP INDEX IF EXISTS runs_cost_by_start;
  ALTER TABLE runs DROP COLUMN model; ALTER TABLE runs DROP COLUMN cost_usd;`;

/** Undoes migration 9 (delivery: pull requests). */
export const UNDO_MIGRATION_9 = 'DROP TABLE IF EXISTS pull_requests;';

/** Undoes migration 8 (notifications): nothing, its tables are created only if missing. */
export const UNDO_MIGRATION_8 = '';

/** Undoes migration 7 (retries). */
export const UNDO_MIGRATION_7 = `DROP INDEX IF EXISTS runs_retry_due; ALTER TABLE runs DROP COLUMN attempt;
  ALTER TABLE runs DROP COLUMN retry_at;`;

/** Everything after migration 6 (the failure budget), newest first. */
export const UNDO_AFTER_6 = [
  UNDO_MIGRATION_17,
  UNDO_MIGRATION_16,
  UNDO_MIGRATION_15,
  UNDO_MIGRATION_14,
  UNDO_MIGRATION_13,
  UNDO_MIGRATION_12,
  UNDO_MIGRATION_11,
  UNDO_MIGRATION_10,
  UNDO_MIGRATION_9,
  UNDO_MIGRATION_8,
  UNDO_MIGRATION_7,
]
  .filter((sql) => sql !== '')
  .join(' ');
