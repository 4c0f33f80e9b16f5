/**
 * Findings of code-review watches (issue 29): one row per distinct problem a watch found, by the
 * watch and a fingerprint (the same problem found again is the same row, its last-seen commit moved;
 * one found again after it was resolved is open again). Shared by both backends: the SQL differs
 * only in types and in how an id is made.
 */
import type { FindingInit, FindingRecord } from './types.js';

/** A `findings` row as either driver returns it (PostgreSQL's BIGINT id comes back as text). */
export interface FindingRow {
  id: number | string;
  watch: string;
  repo: string;
  fingerprint: string;
  file: string;
  line_start: number;
  line_end: number;
  severity: string;
  category: string;
  title: string;
  detail: string;
  status: string;
  first_seen_commit: string;
  last_seen_commit: string;
  first_run_id: string;
  last_run_id: string;
  first_seen_at: string;
  last_seen_at: string;
  resolved_at: string | null;
  resolved_commit: string | null;
  resolved_run_id: string | null;
  resolution: string | null;
}

export function findingFromRow(row: FindingRow): FindingRecord {
  return {
    id: Number(row.id),
    watch: row.watch,
    repo: row.repo,
    fingerprint: row.fingerprint,
    file: row.file,
    lineStart: row.line_start,
    lineEnd: row.line_end,
    severity: row.severity as FindingRecord['severity'],
    category: row.category,
    title: row.title,
    detail: row.detail,
    status: row.status as FindingRecord['status'],
    firstSeenCommit: row.first_seen_commit,
    lastSeenCommit: row.last_seen_commit,
    firstRunId: row.first_run_id,
    lastRunId: row.last_run_id,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
    resolvedAt: row.resolved_at,
    resolvedCommit: row.resolved_commit,
    resolvedRunId: row.resolved_run_id,
    resolution: row.resolution,
  };
}

/** The columns of an insert, in order ($1… or ?), after `id`. */
export const FINDING_INSERT_COLUMNS =
  'watch, repo, fingerprint, file, line_start, line_end, severity, category, title, detail, status, first_seen_commit, last_seen_commit, first_run_id, last_run_id, first_seen_at, last_seen_at';

/** What a finding found again takes from the new report (its lines may have moved). */
export const FINDING_SEEN_AGAIN = `file = excluded.file, line_start = excluded.line_start, line_end = excluded.line_end,
  severity = excluded.severity, category = excluded.category, title = excluded.title, detail = excluded.detail,
  status = 'open', last_seen_commit = excluded.last_seen_commit, last_run_id = excluded.last_run_id,
  last_seen_at = excluded.last_seen_at, resolved_at = NULL, resolved_commit = NULL, resolved_run_id = NULL,
  resolution = NULL`;

/** The values of a report's own columns, in `FINDING_INSERT_COLUMNS` order up to `detail`. */
export function findingReportValues(init: FindingInit): (string | number)[] {
  return [
    init.watch,
    init.repo,
    init.fingerprint,
    init.file,
    init.lineStart,
    init.lineEnd,
    init.severity,
    init.category,
    init.title,
    init.detail,
  ];
}
