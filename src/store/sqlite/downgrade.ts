/**
 * For migration tests: SQL that takes a current state file back to before a migration, newest
 * first, so a test can downgrade a file to version N and watch it migrate up again.
 */

/** Undoes migration 12 (cost and budgets). */
export const UNDO_MIGRATION_12 = `DROP TABLE IF EXISTS budget_parks; DROP INDEX IF EXISTS runs_cost_by_start;
  ALTER TABLE runs DROP COLUMN model; ALTER TABLE runs DROP COLUMN cost_usd;`;

/** Everything after migration 6 (the failure budget), newest first. */
export const UNDO_AFTER_6 = UNDO_MIGRATION_12;
