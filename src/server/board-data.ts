/**
 * What the board and `/api/v1/state` show, from the engine (automations, running work) and the
 * store (the run ledger). Columns are decided by status generically: a status that is neither
 * running nor calm (succeeded, skipped, cancelled, merged) needs attention, whatever new status appears.
 */

import type { ResolvedAutomation, Settings } from '../config/types.js';
import {
  isTerminal,
  type RunRecord,
  SUCCESS_STATUSES,
  TERMINAL_STATUSES,
  UNFINISHED_STATUSES,
} from '../core/types.js';
import type { BudgetStatus } from '../cost/budget.js';
import { additionalDeliveryKey, repositoriesExplain } from '../delivery/repositories.js';
import type { AutomationStatus, EngineStatus } from '../engine/engine.js';
import type { PullRequestRecord, Store } from '../store/types.js';
import { runAutomation } from '../triggers/registry.js';
import type { AttentionGroup } from './cards.js';
import { type FigureSet, recentFigures } from './figures.js';

/** What the server needs from the engine: its view and its controls. */
export interface EngineView {
  automations(): AutomationStatus[];
  currentSettings(): Settings;
  setPaused(id: string, paused: boolean): Promise<void>;
  /** `inputs`: for the runs this trigger starts (checked against the automation's declared ones). */
  trigger(id: string, inputs?: Readonly<Record<string, string>>): 'fired' | 'polling';
  /** Runs one of the scans the automation's feed offers now (a review watch's `baseline`). */
  scanNow(id: string, scan: string): 'polling';
  cancel(runId: string): void;
  retry(runId: string): Promise<'resumed' | 'polling' | 'fired'>;
  /** An allowance was recorded (`allow`): offer allowed items at once instead of at the next poll. */
  allowed(): void;
  /** A GitHub webhook: these event automations poll now (paused ones do not); returns those polled. */
  pollNow(ids: readonly string[]): string[];
}

export interface AutomationCard {
  id: string;
  triggerType: string;
  /** Not polled: paused by an operator, or `enabled = false` in the settings file (`disabled`). */
  paused: boolean;
  disabled: boolean;
  /** `validate --explain`'s lines for the automation (schedule, search query…). */
  explain: { label: string; value: string }[];
  /** Schedules: the next fire (ISO 8601). */
  nextFireAt: string | null;
  /** Event triggers: the next poll, the last one, what it found, the last poll error. */
  nextPollAt: string | null;
  lastPollAt: string | null;
  lastFound: number | null;
  waiting: number;
  /** Open items matching the trigger at the last poll, when known. */
  matching: number | null;
  lastError: string | null;
  /** Event triggers with item memory (`once`, `ignore_backlog`): whether the baseline is taken, when. */
  baseline: { set: boolean; at: string | null } | null;
  /** Why it was paused automatically (`pause_after_failures`); null when paused by hand or not paused. */
  pausedReason: string | null;
  /** Its provider is parked by a usage limit until then (ISO 8601). */
  parkedUntil: string | null;
  /** Its tasks waiting to run again: `#12 retry 2/3 at 14:05:30`, `#7 parked until 15:00:00`. */
  retries: string[];
  /** Today's spend (UTC day) and budget state: `parked` until `parkedUntil` when a budget ran out. */
  budget: BudgetStatus | null;
  /** The scans a person may ask for now (a review watch's `baseline`: "Run a baseline now"). */
  scans: string[];
}

export interface BoardData {
  now: string;
  summary: string;
  attentionCount: number;
  automations: AutomationCard[];
  inProgress: RunRecord[];
  attention: RunRecord[];
  /** Needs attention, one entry per item: its latest attempt with the earlier ones. */
  attentionGroups?: AttentionGroup[];
  done: RunRecord[];
  /**
   * The delivery (branch, pull request, gate) of each run on the board that has one, by run id; a
   * task across repositories' other deliveries by `<run id>~<alias>` (`runDeliveries`).
   */
  deliveries?: Record<string, PullRequestRecord>;
  engine: EngineStatus | undefined;
  /** Fleet-wide figures for the header (over the last 7 days), when computed. */
  totals?: FigureSet;
}

/** Cards per run column on the board (the API pages through the rest). */
export const COLUMN_LIMIT = 30;

function iso(ms: number | undefined): string | null {
  return ms === undefined || !Number.isFinite(ms) || ms <= 0 ? null : new Date(ms).toISOString();
}

function nextFire(automation: ResolvedAutomation, now: Date): string | null {
  const next = automation.trigger.nextFire?.(automation, now);
  return next ? next.toISOString() : null;
}

export function automationCards(engine: EngineView, now: Date): AutomationCard[] {
  const settings = engine.currentSettings();
  const states = new Map(engine.automations().map((a) => [a.id, a]));
  return settings.automations.map((automation) => {
    const state = states.get(automation.id);
    let explain: { label: string; value: string }[] = [];
    try {
      const repositories = repositoriesExplain(automation);
      explain = [...(repositories ? [repositories] : []), ...automation.trigger.explain(automation, now)];
    } catch {
      explain = [];
    }
    return {
      id: automation.id,
      triggerType: automation.triggerType,
      paused: state?.paused ?? automation.config.enabled === false,
      disabled: state?.disabled ?? automation.config.enabled === false,
      explain,
      nextFireAt: nextFire(automation, now),
      nextPollAt: iso(state?.nextPollAt),
      lastPollAt: iso(state?.lastPollAt),
      lastFound: state?.lastFound ?? null,
      waiting: state?.waiting ?? 0,
      matching: state?.matching ?? null,
      lastError: state?.lastError ?? null,
      baseline: state?.baseline ?? null,
      pausedReason: state?.pausedReason ?? null,
      parkedUntil: iso(state?.parkedUntil),
      retries: (state?.retries ?? []).map((r) => `${r.item} ${r.note}`),
      budget: state?.budget ?? null,
      scans: [...(state?.scans ?? [])],
    };
  });
}

/** `1 running · 2 queued · next Sun 02:30` (times in the first automation's timezone). */
export function summaryLine(
  running: number,
  queued: number,
  cards: readonly AutomationCard[],
  timezone: string,
): string {
  const parts = [`${running} running`];
  if (queued > 0) parts.push(`${queued} queued`);
  const next = cards
    .filter((c) => !c.paused && c.nextFireAt)
    .map((c) => c.nextFireAt!)
    .sort()[0];
  if (next) {
    const text = new Intl.DateTimeFormat('en-GB', {
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZone: timezone,
    }).format(new Date(next));
    parts.push(`next ${text.replace(',', '')}`);
  }
  const paused = cards.filter((c) => c.paused).length;
  if (paused > 0) parts.push(`${paused} paused`);
  return parts.join(' · ');
}

export async function boardData(
  store: Store,
  engine: EngineView,
  status: EngineStatus | undefined,
  now = new Date(),
): Promise<BoardData> {
  const cards = automationCards(engine, now);
  const [inProgress, attention, attentionRuns, done] = await Promise.all([
    store.listRuns({ status: [...UNFINISHED_STATUSES], limit: COLUMN_LIMIT }),
    store.listRuns({ attention: true, limit: ATTENTION_READ }),
    store.countRuns({ attention: true }),
    store.listRuns({
      attention: false,
      status: TERMINAL_STATUSES,
      limit: COLUMN_LIMIT,
    }),
  ]);
  const timezone = engine.currentSettings().automations[0]?.timezone ?? 'UTC';
  const { groups } = await groupAttention(store, attention);
  // Runs past the ones read count as one item each: the count stays one query at any size.
  const attentionCount = groups.length + Math.max(0, attentionRuns - attention.length);
  const shownGroups = groups.slice(0, COLUMN_LIMIT);
  const totals = await recentFigures(
    store,
    cards.map((c) => c.id),
    now,
  ).catch(() => undefined);
  const deliveries = await deliveriesOf(
    store,
    [...inProgress, ...shownGroups.map((g) => g.latest), ...done],
    engine.currentSettings().automations,
  );
  return {
    now: now.toISOString(),
    summary: summaryLine(inProgress.length, status?.queued ?? 0, cards, timezone),
    attentionCount,
    automations: cards,
    inProgress,
    attention,
    attentionGroups: shownGroups,
    done,
    deliveries,
    engine: status,
    ...(totals
      ? {
          totals: {
            window: totals.window,
            automationId: null,
            total: totals.total,
            byProfile: totals.byProfile,
          },
        }
      : {}),
  };
}

/** Runs read for Needs attention before they are grouped by item. */
export const ATTENTION_READ = 100;

/**
 * Needs attention by item (task): the newest attempt shows, earlier ones fold inside it. An item
 * whose newest run since succeeded (a retry that worked) no longer needs attention and is left out;
 * one whose retry is running says so.
 */
export async function groupAttention(
  store: Store,
  attention: readonly RunRecord[],
): Promise<{ groups: AttentionGroup[]; resolved: number }> {
  const byTask = new Map<string, RunRecord[]>();
  for (const run of attention) {
    const list = byTask.get(run.taskKey) ?? [];
    list.push(run);
    byTask.set(run.taskKey, list);
  }
  const groups: AttentionGroup[] = [];
  let resolved = 0;
  // One query for the newest run of every item shown (it was one query per item).
  const newest = new Map((await store.newestRunsOfTasks([...byTask.keys()])).map((r) => [r.taskKey, r]));
  [...byTask.values()].forEach((runs) => {
    const latest = runs[0]!;
    const last = newest.get(latest.taskKey);
    const later = last && last.id > latest.id ? last : null;
    if (later && SUCCESS_STATUSES.includes(later.status) && !latest.worktreeKept) {
      resolved += runs.length;
      return;
    }
    groups.push({
      latest,
      earlier: runs.slice(1),
      running: later && !isTerminal(later.status) ? later : null,
    });
  });
  return { groups, resolved };
}

/**
 * The deliveries of these runs (a run without one is absent), by delivery key: the primary's under
 * the run id, a task across repositories' others under `<run id>~<alias>` (`automations` says which
 * runs have others; `runDeliveries` gives a run's).
 */
export async function deliveriesOf(
  store: Store,
  runs: readonly RunRecord[],
  automations: readonly ResolvedAutomation[] = [],
): Promise<Record<string, PullRequestRecord>> {
  const keys = runs.flatMap((run) => [
    run.id,
    ...(runAutomation(run, automations)?.additionalRepositories ?? []).map((r) =>
      additionalDeliveryKey(run.id, r.alias),
    ),
  ]);
  // One query for every card's delivery (it was one query per card).
  const found = await store.listPullRequests({ runIds: keys }).catch(() => []);
  const out: Record<string, PullRequestRecord> = {};
  for (const pr of found) out[pr.runId] = pr;
  return out;
}
