/**
 * The figures of a window (issue 28), computed by the database rather than from run records: one
 * statement of sums per automation, profile and status, and one that gives each run's duration and
 * time to merge as two numbers, for the medians. Both backends share the statements; a dialect
 * gives what differs (time arithmetic, JSON, casts, placeholders). At 100,000 runs a week holds
 * about 10,000: reading them as run records took half a second or more.
 */
import type { RunStatus } from '../core/types.js';
import type { RunFigureFilter, RunFigures, RunMedian, RunTally } from './types.js';

export interface FiguresDialect {
  /** Milliseconds from ISO 8601 text `from` to `to`, as a number. */
  msBetween(from: string, to: string): string;
  /** A number field of the JSON text column `column` (null when absent). */
  jsonNumber(column: string, key: string): string;
  /** Casts an aggregate to a plain double (PostgreSQL's numeric and bigint come back as text). */
  real(expression: string): string;
  /** The placeholder of the `n`th parameter (1-based). */
  param(n: number): string;
}

const OPENED = "pr.delivery = 'pr' AND pr.number IS NOT NULL";

function where(filter: RunFigureFilter, d: FiguresDialect): { clause: string; params: string[] } {
  const params = [filter.createdSince, filter.createdBefore];
  let clause = `r.created_at >= ${d.param(1)} AND r.created_at < ${d.param(2)}`;
  if (filter.automationId !== undefined) {
    params.push(filter.automationId);
    // Not by the automation's index: a window is a few days of a ledger that may hold years of
    // one automation (at 100,000 runs SQLite chose it and read 66,000 rows instead of 6,700).
    clause += ` AND (r.automation_id || '') = ${d.param(3)}`;
  }
  return { clause, params };
}

/** Sums per (automation, profile, status). */
export function talliesSql(filter: RunFigureFilter, d: FiguresDialect): { sql: string; params: string[] } {
  const { clause, params } = where(filter, d);
  const sum = (e: string) => d.real(`coalesce(sum(${e}), 0)`);
  return {
    params,
    sql: `SELECT r.automation_id AS automation_id, r.profile AS profile, r.status AS status,
      ${d.real('count(*)')} AS runs,
      ${sum('r.cost_usd')} AS cost_usd,
      ${sum(d.jsonNumber('r.usage_json', 'inputTokens'))} AS input_tokens,
      ${sum(d.jsonNumber('r.usage_json', 'cachedInputTokens'))} AS cached_input_tokens,
      ${sum(d.jsonNumber('r.usage_json', 'outputTokens'))} AS output_tokens,
      ${sum(`CASE WHEN ${OPENED} THEN 1 ELSE 0 END`)} AS opened,
      ${sum(`CASE WHEN ${OPENED} AND pr.state = 'merged' THEN 1 ELSE 0 END`)} AS merged
    FROM runs r LEFT JOIN pull_requests pr ON pr.run_id = r.id
    WHERE ${clause}
    GROUP BY r.automation_id, r.profile, r.status`,
  };
}

/**
 * Per run of the window: its automation, profile, duration (`d`) and time to merge (`m`), as
 * numbers, for the medians. SQLite has no median aggregate, and ranking 4 scopes × 10,000 runs
 * with window functions took 250 ms where reading these four columns and sorting them takes a
 * tenth of it. The item's time is the creation of its task's latest first attempt at or before
 * this run (the item picked up), or a scheduled occurrence's time when earlier; without a first
 * attempt on record, the run's own creation.
 */
export function mediansSql(filter: RunFigureFilter, d: FiguresDialect): { sql: string; params: string[] } {
  const { clause, params } = where(filter, d);
  const firstAttempt = `(SELECT f.created_at FROM runs f WHERE f.task_key = r.task_key AND f.attempt = 1 AND f.id <= r.id ORDER BY f.id DESC LIMIT 1)`;
  const itemAt = `CASE WHEN r.scheduled_for IS NOT NULL AND r.scheduled_for < coalesce(${firstAttempt}, r.created_at) THEN r.scheduled_for ELSE coalesce(${firstAttempt}, r.created_at) END`;
  return {
    params,
    sql: `SELECT r.automation_id AS a, r.profile AS p,
        CASE WHEN r.started_at IS NOT NULL AND r.finished_at IS NOT NULL
          THEN ${d.msBetween('r.started_at', 'r.finished_at')} END AS d,
        CASE WHEN ${OPENED} AND pr.state = 'merged'
          THEN ${d.msBetween(itemAt, 'pr.since')} END AS m
      FROM runs r LEFT JOIN pull_requests pr ON pr.run_id = r.id
      WHERE ${clause}`,
  };
}

interface TallyRow {
  automation_id: string;
  profile: string | null;
  status: string;
  runs: number;
  cost_usd: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  opened: number;
  merged: number;
}

/** One run's numbers for the medians (`mediansSql`); `d` and `m` null when not known. */
interface MedianRow {
  a: string;
  p: string | null;
  d: number | null;
  m: number | null;
}

function median(sorted: readonly number[]): number | null {
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Records from the rows of `talliesSql` and `mediansSql`. */
export function figuresFromRows(tallies: readonly unknown[], medians: readonly unknown[]): RunFigures {
  const out: RunTally[] = (tallies as TallyRow[]).map((row) => ({
    automationId: row.automation_id,
    profile: row.profile,
    status: row.status as RunStatus,
    runs: Number(row.runs),
    costUsd: Number(row.cost_usd),
    inputTokens: Number(row.input_tokens),
    cachedInputTokens: Number(row.cached_input_tokens),
    outputTokens: Number(row.output_tokens),
    pullRequestsOpened: Number(row.opened),
    pullRequestsMerged: Number(row.merged),
  }));
  // Each run's numbers by (automation, profile) first, then merged into the wider scopes: by
  // automation, by profile, over everything.
  interface Values {
    automationId: string | null;
    profile: string | null;
    d: number[];
    m: number[];
  }
  const pairs = new Map<string, Map<string | null, Values>>();
  for (const row of medians as MedianRow[]) {
    const d = row.d === null ? -1 : Number(row.d);
    const m = row.m === null ? -1 : Number(row.m);
    if (d < 0 && m < 0) continue;
    let byProfile = pairs.get(row.a);
    if (!byProfile) {
      byProfile = new Map();
      pairs.set(row.a, byProfile);
    }
    let values = byProfile.get(row.p);
    if (!values) {
      values = { automationId: row.a, profile: row.p, d: [], m: [] };
      byProfile.set(row.p, values);
    }
    if (d >= 0) values.d.push(d);
    if (m >= 0) values.m.push(m);
  }
  const byNumber = (x: number, y: number) => x - y;
  const found: RunMedian[] = [];
  const emit = (byAutomation: boolean, byProfile: boolean, parts: readonly Values[]) => {
    const first = parts[0];
    if (!first) return;
    const durationMs = median(parts.flatMap((v) => v.d).sort(byNumber));
    const toMergeMs = median(parts.flatMap((v) => v.m).sort(byNumber));
    if (durationMs === null && toMergeMs === null) return;
    found.push({
      byAutomation,
      byProfile,
      automationId: byAutomation ? first.automationId : null,
      profile: byProfile ? first.profile : null,
      durationMs,
      toMergeMs,
    });
  };
  const profiles = new Map<string | null, Values[]>();
  for (const byProfile of pairs.values()) {
    for (const values of byProfile.values()) {
      emit(true, true, [values]);
      const list = profiles.get(values.profile) ?? [];
      list.push(values);
      profiles.set(values.profile, list);
    }
    emit(true, false, [...byProfile.values()]);
  }
  for (const list of profiles.values()) emit(false, true, list);
  emit(
    false,
    false,
    [...pairs.values()].flatMap((byProfile) => [...byProfile.values()]),
  );
  return { tallies: out, medians: found };
}
