/**
 * Pure helpers of the fleet benchmark (bench/fleet.mjs), tested by fleet-stats.test.ts.
 */

/** Nearest-rank percentile of `values` (any order); NaN for none. */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values) {
  return percentile(values, 50);
}

/** Items per minute, from a count and the milliseconds they took. */
export function perMinute(items, ms) {
  return ms > 0 ? (items * 60_000) / ms : Number.NaN;
}

/**
 * What each statement source sent between two readings of the processes' count files
 * (src/fleet/count-queries.ts): `before` and `after` are lists of snapshots, one per process,
 * `{ statements: { application_name: n }, counters: { name: n } }` (a process missing from
 * `before` counts from zero). Returns the sums per source, with the connection names mapped to
 * store, fleet (tables), queue (pg-boss), lock (the poller election), and the total.
 */
export function statementDelta(before, after) {
  const sources = { store: 0, fleet: 0, queue: 0, lock: 0, other: 0 };
  const counters = {};
  const NAMES = {
    curupira: 'store',
    'curupira-fleet': 'fleet',
    'curupira-queue': 'queue',
    'curupira-poller-lock': 'lock',
  };
  for (let i = 0; i < after.length; i += 1) {
    const now = after[i];
    const then = before[i] ?? { statements: {}, counters: {} };
    for (const [name, count] of Object.entries(now.statements ?? {})) {
      const source = NAMES[name] ?? 'other';
      sources[source] += count - (then.statements?.[name] ?? 0);
    }
    for (const [name, count] of Object.entries(now.counters ?? {})) {
      counters[name] = (counters[name] ?? 0) + count - (then.counters?.[name] ?? 0);
    }
  }
  const total = Object.values(sources).reduce((a, b) => a + b, 0);
  return { ...sources, total, counters };
}

/** Each value of `delta` (numbers, one level of nesting) divided by `n`. */
export function divided(delta, n) {
  return Object.fromEntries(
    Object.entries(delta).map(([key, value]) => [
      key,
      typeof value === 'number' ? value / n : divided(value, n),
    ]),
  );
}

/**
 * The share of the machine's CPU time that was busy between two readings of /proc/stat's first
 * line (`cpu user nice system idle iowait irq softirq steal …`); idle and iowait count as idle.
 */
export function busyShare(statBefore, statAfter) {
  const fields = (text) => text.split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const a = fields(statBefore);
  const b = fields(statAfter);
  const total = b.slice(0, 8).reduce((s, v, i) => s + v - a[i], 0);
  const idle = b[3] - a[3] + (b[4] - a[4]);
  return total > 0 ? (total - idle) / total : Number.NaN;
}
