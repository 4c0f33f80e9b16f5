/**
 * The fleet's own tables (issue 17), part of the PostgreSQL schema's first migration. Times are
 * `timestamptz` set from the database's clock (`now()`), so hosts with skewed clocks agree on who
 * is late. The partial unique index keeps one task on at most one host at a time, whatever any
 * poller believes: a second live dispatch of a task is refused by the database.
 */
export const FLEET_TABLES_DDL = `
  CREATE TABLE fleet_hosts (
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    pid INTEGER NOT NULL,
    instance TEXT NOT NULL,
    version TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    heartbeat_at TIMESTAMPTZ NOT NULL,
    capacity INTEGER NOT NULL,
    checkouts TEXT NOT NULL DEFAULT '[]',
    polling BOOLEAN NOT NULL DEFAULT false,
    stopped_at TIMESTAMPTZ
  );

  CREATE TABLE fleet_dispatches (
    id UUID PRIMARY KEY,
    task_key TEXT NOT NULL,
    automation_id TEXT NOT NULL,
    repo TEXT NOT NULL,
    host TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'taken_back')),
    payload TEXT NOT NULL,
    run_id TEXT,
    enqueued_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    started_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    settled_at TIMESTAMPTZ,
    detail TEXT,
    previous_id UUID,
    cancel_requested BOOLEAN NOT NULL DEFAULT false
  );
  CREATE UNIQUE INDEX fleet_dispatches_live ON fleet_dispatches (task_key) WHERE state IN ('queued', 'running');
  CREATE INDEX fleet_dispatches_unsettled ON fleet_dispatches (enqueued_at) WHERE settled_at IS NULL;
  CREATE INDEX fleet_dispatches_by_host ON fleet_dispatches (host, state);
`;
