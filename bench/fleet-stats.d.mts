/** Types for fleet-stats.mjs (used by fleet-stats.test.ts). */
export interface CountSnapshot {
  statements?: Record<string, number>;
  counters?: Record<string, number>;
}
export interface StatementDelta {
  store: number;
  fleet: number;
  queue: number;
  lock: number;
  other: number;
  total: number;
  counters: Record<string, number>;
}
export function percentile(values: readonly number[], p: number): number;
export function median(values: readonly number[]): number;
export function perMinute(items: number, ms: number): number;
export function statementDelta(
  before: readonly (CountSnapshot | undefined)[],
  after: readonly CountSnapshot[],
): StatementDelta;
export function divided<T extends object>(delta: T, n: number): T;
export function busyShare(statBefore: string, statAfter: string): number;
