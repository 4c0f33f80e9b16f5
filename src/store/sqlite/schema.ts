/**
 * The SQLite schema, as forward-only migrations. Migration `i` (0-based) brings the file from
 * `user_version = i` to `user_version = i + 1`; each runs in its own transaction, together with
 * the `application_id` mark, so a crash leaves the file at one version or the next, never between.
 *
 * Never edit a migration that has shipped: append a new one.
 */
import { sharedMigrations } from '../migrations-sql.js';

/** `PRAGMA application_id` of a curupira state file: the ASCII bytes `CURU`. */
export const APPLICATION_ID = 0x43555255;

export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE sessions (
    task_key TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    profile TEXT NOT NULL,
    session_id TEXT NOT NULL,
    prompt TEXT NOT NULL,
    prompt_template_hash TEXT NOT NULL,
    task_json TEXT NOT NULL,
    worktree_path TEXT,
    branch TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;

  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL,
    task_key TEXT NOT NULL,
    repo TEXT NOT NULL,
    task_type TEXT NOT NULL,
    item_id TEXT NOT NULL,
    item_key TEXT NOT NULL,
    item_title TEXT NOT NULL,
    item_url TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    profile TEXT,
    provider TEXT,
    session_id TEXT,
    resumed INTEGER NOT NULL DEFAULT 0 CHECK (resumed IN (0, 1)),
    exit_code INTEGER,
    signal TEXT,
    transcript_path TEXT,
    branch TEXT,
    worktree_path TEXT,
    worktree_kept INTEGER NOT NULL DEFAULT 0 CHECK (worktree_kept IN (0, 1)),
    commits INTEGER NOT NULL DEFAULT 0,
    usage_json TEXT,
    prompt TEXT,
    scheduled_for TEXT,
    upstream_run_id TEXT,
    agent_pid INTEGER
  ) STRICT;
  CREATE INDEX runs_by_automation ON runs (automation_id, id);
  CREATE INDEX runs_by_status ON runs (status, id);
  CREATE INDEX runs_kept_worktrees ON runs (id) WHERE worktree_kept = 1;

  CREATE TABLE cron_state (
    automation_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    last_scheduled_for TEXT,
    pending_scheduled_for TEXT,
    last_execution_at TEXT,
    config_hash TEXT
  ) STRICT;

  CREATE TABLE item_memory (
    automation_id TEXT NOT NULL,
    item_key TEXT NOT NULL,
    run_id TEXT,
    skipped INTEGER NOT NULL CHECK (skipped IN (0, 1)),
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (automation_id, item_key)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // 2: how often a saved session failed to resume in a row; the agent's outcome, written the moment
  // the agent exits (before cleanup), so a crash after that finishes the run instead of resuming it.
  `
  ALTER TABLE sessions ADD COLUMN resume_failures INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE runs ADD COLUMN agent_outcome TEXT;
  `,
  // 3: operator controls from `curupira serve`: automations paused by hand (kept across restarts)
  // and runs dismissed from the board's Needs attention column; a partial index keeps that column
  // fast at any ledger size (its WHERE must match `attentionSql` in ../sql.ts word for word).
  `
  CREATE TABLE automation_controls (
    automation_id TEXT PRIMARY KEY,
    paused INTEGER NOT NULL CHECK (paused IN (0, 1)),
    changed_at TEXT NOT NULL
  ) STRICT;
  ALTER TABLE runs ADD COLUMN dismissed_at TEXT;
  CREATE INDEX runs_attention ON runs (id) WHERE dismissed_at IS NULL AND (worktree_kept = 1 OR status NOT IN ('queued', 'preparing', 'running', 'succeeded', 'skipped', 'cancelled'));
  `,
  // 4: screening. A run's findings (JSON), its verdict and the digest of the text screened; a
  // blocked run is not screened again until the digest changes or an operator allows that digest.
  `
  ALTER TABLE runs ADD COLUMN screening_findings TEXT;
  ALTER TABLE runs ADD COLUMN screening_reason TEXT;
  ALTER TABLE runs ADD COLUMN screened_digest TEXT;
  CREATE INDEX runs_blocked_by_task ON runs (task_key, screened_digest) WHERE status = 'blocked';

  CREATE TABLE allowances (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    task_key TEXT NOT NULL,
    text_digest TEXT NOT NULL,
    allowed_by TEXT NOT NULL,
    allowed_at TEXT NOT NULL,
    used_at TEXT
  ) STRICT;
  CREATE INDEX allowances_waiting ON allowances (task_key, text_digest) WHERE used_at IS NULL;
  CREATE INDEX allowances_by_run ON allowances (run_id);
  `,
  // 5: the GitHub write queue (src/github/write-queue.ts). A row is written before its request, so
  // a kill -9 never loses a write; `marker` is its idempotency key (also hidden in what it posts).
  `
  CREATE TABLE writes (
    id INTEGER PRIMARY KEY,
    marker TEXT NOT NULL UNIQUE,
    repo TEXT NOT NULL,
    item_number INTEGER NOT NULL,
    write_json TEXT NOT NULL,
    run_id TEXT,
    status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error TEXT,
    result_id INTEGER,
    created_at TEXT NOT NULL,
    sent_at TEXT
  ) STRICT;
  CREATE INDEX writes_due ON writes (next_attempt_at, id) WHERE status = 'pending';
  CREATE INDEX writes_by_run ON writes (run_id) WHERE run_id IS NOT NULL;
  `,
  // 6: the local failure budget (issue 12).
  // Failed runs per automation and item (task key), the digest of the item's text they failed on,
  // and when the item was escalated (no further runs until a person resets it or the text changes).
  `
  CREATE TABLE item_failures (
    task_key TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL,
    item_key TEXT NOT NULL,
    failures INTEGER NOT NULL CHECK (failures >= 0),
    text_digest TEXT NOT NULL,
    last_run_id TEXT NOT NULL,
    escalated_at TEXT,
    notice_run_id TEXT,
    updated_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // 7 (issue 15): retries. Which try of its task a run is, and when its task runs again by itself (a retry after
  // a failure, or the end of a parked run's usage limit), so `runs` and a restart both know.
  `
  ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE runs ADD COLUMN retry_at TEXT;
  CREATE INDEX runs_retry_due ON runs (retry_at) WHERE retry_at IS NOT NULL;
  `,
  // 8 (issue 15): notifications (src/notify/) and GitHub webhook deliveries (src/server/webhooks.ts).
  // A notification row is written before any request, so a restart loses none; `key` (event id and
  // target) is its idempotency key: the same event is queued once per target, whoever emits it again.
  // `webhook_deliveries` remembers GitHub's delivery ids, so a redelivery is acted on once.
  // IF NOT EXISTS: tests that take a file back to an older version keep these tables.
  `
  CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    target TEXT NOT NULL,
    event_id TEXT NOT NULL,
    event TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT
  ) STRICT;
  CREATE INDEX IF NOT EXISTS notifications_due ON notifications (next_attempt_at, id) WHERE status = 'pending';

  CREATE TABLE IF NOT EXISTS webhook_deliveries (
    delivery_id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    received_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS webhook_deliveries_by_time ON webhook_deliveries (received_at);
  `,
  // 9 (issue 13): delivery. One row per run that delivers its branch: the push, then the pull
  // request it opened or adopted ("gate"), with one current state and since when. Written before
  // each step, so a kill -9 between the push and the pull request resumes where it stopped.
  `
  CREATE TABLE pull_requests (
    run_id TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL,
    task_key TEXT NOT NULL,
    repo TEXT NOT NULL,
    delivery TEXT NOT NULL CHECK (delivery IN ('pr', 'branch')),
    head_branch TEXT NOT NULL,
    head_sha TEXT,
    base_branch TEXT,
    number INTEGER,
    url TEXT,
    adopted INTEGER NOT NULL DEFAULT 0 CHECK (adopted IN (0, 1)),
    state TEXT NOT NULL,
    detail TEXT,
    since TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX pull_requests_by_state ON pull_requests (state);
  CREATE INDEX pull_requests_by_head ON pull_requests (repo, head_branch);
  `,
  // 10 (issue 15): cost and budgets (src/cost/). A run's model and cost; automations (or `*`, all of them) parked
  // by a spent budget until a time (the next UTC day).
  // IF NOT EXISTS: tests that take a file back to an older version keep the table.
  `
  ALTER TABLE runs ADD COLUMN model TEXT;
  ALTER TABLE runs ADD COLUMN cost_usd REAL;
  CREATE INDEX IF NOT EXISTS runs_cost_by_start ON runs (started_at) WHERE cost_usd IS NOT NULL;
  CREATE TABLE IF NOT EXISTS budget_parks (
    scope TEXT PRIMARY KEY,
    until TEXT NOT NULL,
    reason TEXT NOT NULL,
    parked_at TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // 11 (issue 13): following an open pull request. Its gate (awaiting review, changes requested,
  // CI failing, conflicted, behind, ready…) with since-when and a word, next to the lifecycle
  // `state`; and small per-delivery marks: high-water marks of the reviews and comments handled,
  // remediation rounds spent, notices already sent, the follow-up action in flight.
  `
  ALTER TABLE pull_requests ADD COLUMN gate TEXT;
  ALTER TABLE pull_requests ADD COLUMN gate_since TEXT;
  ALTER TABLE pull_requests ADD COLUMN gate_detail TEXT;
  CREATE TABLE IF NOT EXISTS pull_request_marks (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
  ) STRICT, WITHOUT ROWID;
  `,
  // 12 (issue 17): the fleet host that ran a run. The embedded store records none (null); the
  // column is here so both backends hold the same run record.
  `
  ALTER TABLE runs ADD COLUMN host TEXT;
  `,
  // 13–16: the same in both backends (../migrations-sql.ts).
  ...sharedMigrations({
    key: 'TEXT',
    identity: 'INTEGER PRIMARY KEY AUTOINCREMENT',
    tableOptions: ' STRICT',
  }),
];

/** The schema version this build writes and understands. */
export const SCHEMA_VERSION = MIGRATIONS.length;
