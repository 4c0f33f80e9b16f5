/**
 * The migrations both backends make in the same words: SQLite's 13–17 are PostgreSQL's 4–8
 * (PostgreSQL's first migration made everything of SQLite's 1–12 at once). Each backend spreads
 * `sharedMigrations(itsDialect)` at that place of its list; the dialect fills the few words that
 * differ. Migrations are applied by their index and never edited once shipped, so this text is
 * what both schema files held before it was shared, byte for byte.
 *
 * A migration both backends need in the same words may be appended here (it then lands at the end
 * of both lists); one that differs is appended to each backend's own list, after the spread.
 */

/** The words of a migration that differ between the backends. */
export interface MigrationDialect {
  /** The type of text that is sorted or compared (ids, keys, times): SQLite `TEXT`, PostgreSQL byte-order text. */
  key: string;
  /** The column definition of an integer id the database numbers. */
  identity: string;
  /** What follows a CREATE TABLE's closing parenthesis (SQLite: ` STRICT`). */
  tableOptions: string;
}

export function sharedMigrations({ key, identity, tableOptions }: MigrationDialect): string[] {
  return [
    // SQLite 13, PostgreSQL 4 (issue 25): which code the agent saw. The commit of the base its
    // worktree was cut from (the default branch, `pr_base_branch`, or a pull request's base) and,
    // for a worktree at a pull request's head (`worktree_from = "head"`), that head commit.
    `
  ALTER TABLE runs ADD COLUMN base_commit TEXT;
  ALTER TABLE runs ADD COLUMN head_commit TEXT;
  `,
    // SQLite 14, PostgreSQL 5 (issue 28): the board's search and figures. Runs by task (an item's
    // attempts), by creation time (a figures window), by agent profile and by repository, each
    // newest first.
    `
  CREATE INDEX IF NOT EXISTS runs_by_task ON runs (task_key, id);
  CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at);
  CREATE INDEX IF NOT EXISTS runs_by_profile ON runs (profile, id);
  CREATE INDEX IF NOT EXISTS runs_by_repo ON runs (repo, id);
  `,
    // SQLite 15, PostgreSQL 6 (issue 29): findings of code-review watches, one row per distinct
    // problem of a watch (its fingerprint), with where it was first and last seen and, once fixed,
    // where it was resolved.
    `
  CREATE TABLE IF NOT EXISTS findings (
    id ${identity},
    watch ${key} NOT NULL,
    repo TEXT NOT NULL,
    fingerprint ${key} NOT NULL,
    file TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    severity TEXT NOT NULL,
    category TEXT NOT NULL,
    title TEXT NOT NULL,
    detail TEXT NOT NULL,
    status TEXT NOT NULL,
    first_seen_commit TEXT NOT NULL,
    last_seen_commit TEXT NOT NULL,
    first_run_id ${key} NOT NULL,
    last_run_id ${key} NOT NULL,
    first_seen_at ${key} NOT NULL,
    last_seen_at ${key} NOT NULL,
    resolved_at ${key},
    resolved_commit TEXT,
    resolved_run_id ${key},
    resolution TEXT,
    UNIQUE (watch, fingerprint)
  )${tableOptions};
  CREATE INDEX IF NOT EXISTS findings_by_watch ON findings (watch, status, id);
  `,
    // SQLite 16, PostgreSQL 7 (issue 32): the result the agent reported (an outcome of the
    // automation's declared set, a reason, fields) and the inputs the run was given
    // (`--set key=value`), each as JSON.
    `
  ALTER TABLE runs ADD COLUMN result_json TEXT;
  ALTER TABLE runs ADD COLUMN inputs_json TEXT;
  `,
    // SQLite 17, PostgreSQL 8: the token of the call that used an allowance, and of the call that
    // recorded a webhook delivery, so that a call sent again after its answer was lost (a fleet's
    // database connection reset after the commit) finds its own earlier effect instead of taking
    // another allowance or reading its own delivery as a redelivery.
    `
  ALTER TABLE allowances ADD COLUMN take_token TEXT;
  CREATE INDEX IF NOT EXISTS allowances_by_token ON allowances (take_token) WHERE take_token IS NOT NULL;
  ALTER TABLE webhook_deliveries ADD COLUMN receipt TEXT;
  `,
  ];
}
