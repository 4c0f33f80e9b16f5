/**
 * What a team gets for its money, over a window: runs by outcome, pull requests opened and merged,
 * merge rate, median time from a run's item to its merged pull request, cost per run and per merged
 * pull request, tokens; for all runs and per agent profile. One module computes them for the board,
 * an automation's page, the JSON API and `curupira status --json`. Outcome classes come from the
 * one map in src/core/outcome.ts.
 */

import { RUN_OUTCOME_CLASSES, type RunOutcomeClass, runOutcomeClass } from '../core/outcome.js';
import type { RunRecord } from '../core/types.js';
import type { PullRequestRecord, RunFigures, RunMedian, RunTally, Store } from '../store/types.js';

export interface Figures {
  runs: number;
  /** Runs per outcome class (`success` counts `merged` and `succeeded`, with or without changes). */
  byOutcome: Record<RunOutcomeClass, number>;
  /** Pull requests opened by (or adopted for) these runs, and how many of them merged. */
  pullRequestsOpened: number;
  pullRequestsMerged: number;
  /** merged / opened; null when none was opened. */
  mergeRate: number | null;
  /**
   * Median milliseconds from the item to its merged pull request: from the first attempt of the
   * run's task (the item picked up; a scheduled occurrence's time when earlier) to the merge.
   */
  medianToMergeMs: number | null;
  /** Median milliseconds a finished run took (start to finish). */
  medianDurationMs: number | null;
  /** USD over runs of known cost; per run divides by every run in the window. */
  costUsd: number;
  costPerRunUsd: number | null;
  costPerMergedUsd: number | null;
  tokens: { input: number; cachedInput: number; output: number };
}

export interface FigureWindow {
  /** ISO 8601, inclusive. */
  from: string;
  /** ISO 8601, exclusive. */
  to: string;
}

export interface FigureSet {
  window: FigureWindow;
  automationId: string | null;
  total: Figures;
  /** The same figures per agent profile (`-` for runs without one, such as blocked runs). */
  byProfile: Record<string, Figures>;
}

/** The windows a page offers, by name; `7d` is the default. */
export const FIGURE_WINDOWS = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;
export type FigureWindowName = keyof typeof FIGURE_WINDOWS;

export function windowEnding(now: Date, name: FigureWindowName = '7d'): FigureWindow {
  return { from: new Date(now.getTime() - FIGURE_WINDOWS[name]).toISOString(), to: now.toISOString() };
}

export function isWindowName(value: string | undefined): value is FigureWindowName {
  return value !== undefined && Object.hasOwn(FIGURE_WINDOWS, value);
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function emptyOutcomes(): Record<RunOutcomeClass, number> {
  return Object.fromEntries(RUN_OUTCOME_CLASSES.map((c) => [c, 0])) as Record<RunOutcomeClass, number>;
}

/** A pull request counts as opened once it has a number; as merged when its state is `merged`. */
function figuresOf(
  runs: readonly RunRecord[],
  prs: ReadonlyMap<string, PullRequestRecord>,
  itemAt: (run: RunRecord) => string,
): Figures {
  const byOutcome = emptyOutcomes();
  let opened = 0;
  let merged = 0;
  let costUsd = 0;
  const toMerge: number[] = [];
  const durations: number[] = [];
  const tokens = { input: 0, cachedInput: 0, output: 0 };
  for (const run of runs) {
    byOutcome[runOutcomeClass(run.status)] += 1;
    if (typeof run.costUsd === 'number' && Number.isFinite(run.costUsd)) costUsd += run.costUsd;
    if (run.usage) {
      tokens.input += run.usage.inputTokens;
      tokens.cachedInput += run.usage.cachedInputTokens;
      tokens.output += run.usage.outputTokens;
    }
    if (run.startedAt && run.finishedAt) {
      const took = Date.parse(run.finishedAt) - Date.parse(run.startedAt);
      if (Number.isFinite(took) && took >= 0) durations.push(took);
    }
    const pr = prs.get(run.id);
    if (pr?.delivery !== 'pr' || pr.number === null) continue;
    opened += 1;
    if (pr.state !== 'merged') continue;
    merged += 1;
    const took = Date.parse(pr.since) - Date.parse(itemAt(run));
    if (Number.isFinite(took) && took >= 0) toMerge.push(took);
  }
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  return {
    runs: runs.length,
    byOutcome,
    pullRequestsOpened: opened,
    pullRequestsMerged: merged,
    mergeRate: opened === 0 ? null : merged / opened,
    medianToMergeMs: median(toMerge),
    medianDurationMs: median(durations),
    costUsd: round(costUsd),
    costPerRunUsd: runs.length === 0 ? null : round(costUsd / runs.length),
    costPerMergedUsd: merged === 0 ? null : round(costUsd / merged),
    tokens,
  };
}

/**
 * The figures of run records in hand (already limited to the window) and their deliveries, by the
 * same rules as the store's `runFigures` (which the board, the API and `status --json` use).
 */
export function computeFigures(
  runs: readonly RunRecord[],
  pullRequests: readonly PullRequestRecord[],
  window: FigureWindow,
  automationId: string | null = null,
): FigureSet {
  const prs = new Map(pullRequests.map((pr) => [pr.runId, pr]));
  // The item's time, as the store's `runFigures` has it: the task's latest first attempt up to
  // this run among these runs (the run itself without one), or a scheduled occurrence when earlier.
  const itemAt = (run: RunRecord): string => {
    const first = runs
      .filter((r) => r.taskKey === run.taskKey && (r.attempt ?? 1) === 1 && r.id <= run.id)
      .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
    const at = first?.createdAt ?? run.createdAt;
    return run.scheduledFor && run.scheduledFor < at ? run.scheduledFor : at;
  };
  const profiles = new Map<string, RunRecord[]>();
  for (const run of runs) {
    const key = run.profile ?? '-';
    const list = profiles.get(key) ?? [];
    list.push(run);
    profiles.set(key, list);
  }
  const byProfile: Record<string, Figures> = {};
  for (const key of [...profiles.keys()].sort()) byProfile[key] = figuresOf(profiles.get(key)!, prs, itemAt);
  return { window, automationId, total: figuresOf(runs, prs, itemAt), byProfile };
}

/** Figures from the store's sums (already limited to a scope) and that scope's medians. */
function figuresOfTallies(tallies: readonly RunTally[], medians: RunMedian | undefined): Figures {
  const byOutcome = emptyOutcomes();
  let runs = 0;
  let opened = 0;
  let merged = 0;
  let costUsd = 0;
  const tokens = { input: 0, cachedInput: 0, output: 0 };
  for (const t of tallies) {
    runs += t.runs;
    byOutcome[runOutcomeClass(t.status)] += t.runs;
    opened += t.pullRequestsOpened;
    merged += t.pullRequestsMerged;
    costUsd += t.costUsd;
    tokens.input += t.inputTokens;
    tokens.cachedInput += t.cachedInputTokens;
    tokens.output += t.outputTokens;
  }
  const round = (n: number) => Math.round(n * 1e6) / 1e6;
  return {
    runs,
    byOutcome,
    pullRequestsOpened: opened,
    pullRequestsMerged: merged,
    mergeRate: opened === 0 ? null : merged / opened,
    medianToMergeMs: medians?.toMergeMs ?? null,
    medianDurationMs: medians?.durationMs ?? null,
    costUsd: round(costUsd),
    costPerRunUsd: runs === 0 ? null : round(costUsd / runs),
    costPerMergedUsd: merged === 0 ? null : round(costUsd / merged),
    tokens,
  };
}

const profileKey = (profile: string | null) => profile ?? '-';

/**
 * One automation's figures (or, with `automationId` null, everyone's) from the store's result: the
 * total and per profile.
 */
function setOf(result: RunFigures, window: FigureWindow, automationId: string | null): FigureSet {
  const tallies =
    automationId === null ? result.tallies : result.tallies.filter((t) => t.automationId === automationId);
  const median = (profile: string | null, byProfile: boolean) =>
    result.medians.find(
      (m) =>
        m.byAutomation === (automationId !== null) &&
        m.byProfile === byProfile &&
        (automationId === null || m.automationId === automationId) &&
        (!byProfile || m.profile === profile),
    );
  const profiles = new Map<string, { profile: string | null; tallies: RunTally[] }>();
  for (const t of tallies) {
    const key = profileKey(t.profile);
    const entry = profiles.get(key) ?? { profile: t.profile, tallies: [] };
    entry.tallies.push(t);
    profiles.set(key, entry);
  }
  const byProfile: Record<string, Figures> = {};
  for (const key of [...profiles.keys()].sort()) {
    const entry = profiles.get(key)!;
    byProfile[key] = figuresOfTallies(entry.tallies, median(entry.profile, true));
  }
  return { window, automationId, total: figuresOfTallies(tallies, median(null, false)), byProfile };
}

/** The window's figures of one automation (or all), computed by the store. */
export async function loadFigures(
  store: Store,
  window: FigureWindow,
  automationId: string | null = null,
): Promise<FigureSet> {
  const result = await store.runFigures({
    createdSince: window.from,
    createdBefore: window.to,
    ...(automationId === null ? {} : { automationId }),
  });
  return setOf(result, window, automationId);
}

/** What `GET /api/v1/state` and `curupira status --json` carry: fleet-wide and per automation. */
export interface StatusFigures {
  window: FigureWindow;
  total: Figures;
  byProfile: Record<string, Figures>;
  byAutomation: Record<string, { total: Figures; byProfile: Record<string, Figures> }>;
}

export async function statusFigures(
  store: Store,
  automationIds: readonly string[],
  window: FigureWindow,
): Promise<StatusFigures> {
  const result = await store.runFigures({ createdSince: window.from, createdBefore: window.to });
  const all = setOf(result, window, null);
  const byAutomation: StatusFigures['byAutomation'] = {};
  for (const id of automationIds) {
    const set = setOf(result, window, id);
    byAutomation[id] = { total: set.total, byProfile: set.byProfile };
  }
  return { window, total: all.total, byProfile: all.byProfile, byAutomation };
}

/** `42 %`, `-` when unknown. */
export function percent(rate: number | null): string {
  return rate === null ? '-' : `${Math.round(rate * 100)} %`;
}

/** `45s`, `12m`, `3h20m`, `2d4h`; `-` when unknown. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '-';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 === 0 ? '' : `${String(s % 60).padStart(2, '0')}s`}`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 === 0 ? '' : `${String(m % 60).padStart(2, '0')}m`}`;
  return `${Math.floor(h / 24)}d${h % 24 === 0 ? '' : `${h % 24}h`}`;
}

const recent = new WeakMap<Store, { key: string; at: number; value: Promise<StatusFigures> }>();

/**
 * The last 7 days' figures for the board header and `GET /api/v1/state`, computed at most once per
 * `ttlMs` per store: every open board asks after each change, and a week's figures need not be
 * fresher than that. A stale value is served while the next one is computed.
 */
export function recentFigures(
  store: Store,
  automationIds: readonly string[],
  now: Date = new Date(),
  ttlMs = 10_000,
): Promise<StatusFigures> {
  const key = automationIds.join('\n');
  const hit = recent.get(store);
  if (hit && hit.key === key && now.getTime() - hit.at < ttlMs) return hit.value;
  const value = statusFigures(store, automationIds, windowEnding(now));
  const entry = { key, at: now.getTime(), value };
  if (hit && hit.key === key) {
    // Stale: answer with the previous figures; the new ones replace them once computed.
    hit.at = now.getTime();
    value.then(() => recent.set(store, entry)).catch(() => undefined);
    return hit.value;
  }
  recent.set(store, entry);
  value.catch(() => recent.delete(store));
  return value;
}

const windows = new WeakMap<Store, Map<string, { at: number; value: Promise<FigureSet> }>>();

/**
 * A window's figures of one automation (or all), computed at most once per `ttlMs` per store: an
 * automation page and `GET /figures` read up to a month of runs, and figures over days need not be
 * fresher than that. A stale value is served while the next one is computed.
 */
export function windowFigures(
  store: Store,
  name: FigureWindowName,
  automationId: string | null,
  now: Date = new Date(),
  ttlMs = 10_000,
): Promise<FigureSet> {
  let cache = windows.get(store);
  if (!cache) {
    cache = new Map();
    windows.set(store, cache);
  }
  const key = `${automationId ?? ''}\n${name}`;
  const hit = cache.get(key);
  if (hit && now.getTime() - hit.at < ttlMs) return hit.value;
  const value = loadFigures(store, windowEnding(now, name), automationId);
  const entry = { at: now.getTime(), value };
  if (hit) {
    hit.at = now.getTime();
    value.then(() => cache.set(key, entry)).catch(() => undefined);
    return hit.value;
  }
  cache.set(key, entry);
  value.catch(() => cache.delete(key));
  return value;
}
