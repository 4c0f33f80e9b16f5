/**
 * Budgets (issue 15, item 4): `max_cost_per_run`, an automation's `max_cost_per_day` and the
 * global `[settings] max_cost_per_day`, in USD per UTC day. Checked on every usage event of a
 * running agent: at 80 % a warning (once per run, automation and day, in the log and the status);
 * at 100 % the agent is stopped (its session kept) and the automation, or every automation for the
 * global budget, parks until the next UTC day. Parks are kept in the store, so a restart keeps
 * them; daily spend is the store's sum of runs started today plus what running agents spent since.
 *
 * A run of unknown cost (src/cost/prices.ts) counts nothing: there is no number to hold it to.
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { BudgetStatus, Usage } from '../core/types.js';
import type { Logger } from '../log.js';
import type { BudgetPark, Store } from '../store/types.js';
import { formatCost, runCost } from './prices.js';

/** The share of a budget that earns a warning. */
export const SOFT_SHARE = 0.8;
/** The scope of the global budget in parks and events. */
export const GLOBAL_SCOPE = '*';
const DAY_MS = 86_400_000;

export function utcDayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** The budgets that apply to one automation's runs (absent: no limit). */
export interface BudgetLimits {
  perRun?: number;
  automationPerDay?: number;
  globalPerDay?: number;
}

export function budgetLimits(settings: Settings, automation: ResolvedAutomation): BudgetLimits {
  const { execution } = settings;
  const perRun = automation.config.max_cost_per_run ?? execution.max_cost_per_run;
  const automationPerDay = automation.config.max_cost_per_day ?? execution.max_cost_per_automation_per_day;
  const globalPerDay = execution.max_cost_per_day;
  return {
    ...(perRun === undefined ? {} : { perRun }),
    ...(automationPerDay === undefined ? {} : { automationPerDay }),
    ...(globalPerDay === undefined ? {} : { globalPerDay }),
  };
}

/** What the `budget_reached` hook receives (notifications subscribe to it). */
export interface BudgetReachedEvent {
  /** `run`, `automation` (its daily budget) or `global` (all automations' daily budget). */
  budget: 'run' | 'automation' | 'global';
  automationId: string;
  runId: string;
  limitUsd: number;
  spentUsd: number;
  /** ISO 8601: when the parked automation (or every automation, for `global`) runs again. */
  parkedUntil: string;
  reason: string;
}

/** An automation's spend and budget state, for `status`, the board and the API. */
export type { BudgetStatus } from '../core/types.js';

/** What a running agent's usage means for its budgets. */
export interface MeterReading {
  /** USD so far for this run; null when unknown. */
  cost: number | null;
  /** Set once a budget ran out: why the agent must stop now. */
  stop?: string;
}

/** One run's view of the budgets (see `CostBudgets.meter`). */
export interface RunMeter {
  /** Called with the run's usage so far (the sum of its usage events) on each usage event. */
  usage(total: Usage): MeterReading;
  /** The soft warning this run earned, if any (for its record). */
  warning(): string | undefined;
  /** The run ended: its spend now lives in the store's record. */
  end(): void;
}

export interface CostBudgetsDeps {
  store: Store;
  clock: Clock;
  log: Logger;
  settings(): Settings;
  onBudgetReached?(event: BudgetReachedEvent): void;
}

export class CostBudgets {
  /** Start (epoch ms) of the UTC day the sums below are for. */
  private day = Number.NaN;
  /** Spent today by finished runs (from the store), per automation, and over all. */
  private stored = new Map<string, number>();
  private storedTotal = 0;
  /** What each running run spent so far (by run id), with its automation. */
  private readonly live = new Map<string, { automationId: string; cost: number }>();
  private parks = new Map<string, BudgetPark>();
  private readonly warned = new Set<string>();

  constructor(private readonly deps: CostBudgetsDeps) {}

  /** Reads today's spend and the parks from the store (at start, and when the UTC day changes). */
  async refresh(): Promise<void> {
    const now = this.deps.clock.now();
    const day = utcDayStart(now);
    const since = new Date(day).toISOString();
    const at = new Date(now).toISOString();
    const { store } = this.deps;
    const stored = new Map<string, number>();
    for (const automation of this.deps.settings().automations) {
      stored.set(automation.id, await store.sumCost({ since, automationId: automation.id }));
    }
    this.storedTotal = await store.sumCost({ since });
    this.stored = stored;
    this.parks = new Map((await store.listBudgetParks(at)).map((p) => [p.scope, p]));
    if (day !== this.day) this.warned.clear();
    this.day = day;
  }

  /**
   * Automations whose park ended since the last call (the UTC day changed): the engine offers
   * their saved sessions again. Reads the store only when the day changed.
   */
  async unparked(): Promise<string[]> {
    if (utcDayStart(this.deps.clock.now()) === this.day) return [];
    const before = new Set(this.parks.keys());
    await this.refresh();
    return this.deps
      .settings()
      .automations.map((a) => a.id)
      .filter((id) => (before.has(id) || before.has(GLOBAL_SCOPE)) && !this.activePark(id));
  }

  private spentBy(automationId: string): number {
    let sum = this.stored.get(automationId) ?? 0;
    for (const run of this.live.values()) if (run.automationId === automationId) sum += run.cost;
    return sum;
  }

  private spentTotal(): number {
    let sum = this.storedTotal;
    for (const run of this.live.values()) sum += run.cost;
    return sum;
  }

  private activePark(automationId: string): BudgetPark | undefined {
    const at = new Date(this.deps.clock.now()).toISOString();
    for (const scope of [automationId, GLOBAL_SCOPE]) {
      const park = this.parks.get(scope);
      if (park && park.until > at) return park;
    }
    return undefined;
  }

  /** Why the automation may not start a run now (a budget ran out today), or undefined. */
  parked(automationId: string): BudgetPark | undefined {
    return this.activePark(automationId);
  }

  status(automation: ResolvedAutomation): BudgetStatus {
    const limits = budgetLimits(this.deps.settings(), automation);
    const spent = this.spentBy(automation.id);
    const park = this.activePark(automation.id);
    const warn =
      (limits.automationPerDay !== undefined && spent >= SOFT_SHARE * limits.automationPerDay) ||
      (limits.globalPerDay !== undefined && this.spentTotal() >= SOFT_SHARE * limits.globalPerDay);
    return {
      spentTodayUsd: spent,
      ...(limits.automationPerDay === undefined ? {} : { limitPerDayUsd: limits.automationPerDay }),
      state: park ? 'parked' : warn ? 'warning' : 'ok',
      ...(park ? { parkedUntil: park.until, reason: park.reason } : {}),
    };
  }

  /** A meter for one run that is about to start its agent. */
  meter(automation: ResolvedAutomation, runId: string): RunMeter {
    const settings = this.deps.settings();
    const limits = budgetLimits(settings, automation);
    const { provider } = automation.profile;
    const model = automation.profile.model;
    let warning: string | undefined;
    let stop: string | undefined;
    this.live.set(runId, { automationId: automation.id, cost: 0 });
    return {
      usage: (total) => {
        const cost = runCost(total, provider, model, settings.pricing);
        if (cost === null) return { cost };
        const entry = this.live.get(runId);
        if (entry) entry.cost = cost;
        if (stop === undefined) {
          const verdict = this.check(automation, runId, cost, limits);
          if (verdict.warning && warning === undefined) warning = verdict.warning;
          stop = verdict.stop;
        }
        return stop === undefined ? { cost } : { cost, stop };
      },
      warning: () => warning,
      end: () => {
        const entry = this.live.get(runId);
        this.live.delete(runId);
        // The finished run's cost now counts from its record (it started today, or it is gone by tomorrow).
        if (entry) {
          this.stored.set(entry.automationId, (this.stored.get(entry.automationId) ?? 0) + entry.cost);
          this.storedTotal += entry.cost;
        }
      },
    };
  }

  /** Each budget against what this run and today's runs spent; the first one out stops the run. */
  private check(
    automation: ResolvedAutomation,
    runId: string,
    cost: number,
    limits: BudgetLimits,
  ): { warning?: string; stop?: string } {
    const checks: { budget: BudgetReachedEvent['budget']; key: string; limit?: number; spent: number }[] = [
      { budget: 'run', key: 'max_cost_per_run', limit: limits.perRun, spent: cost },
      {
        budget: 'automation',
        key:
          automation.config.max_cost_per_day === undefined
            ? 'max_cost_per_automation_per_day'
            : 'max_cost_per_day',
        limit: limits.automationPerDay,
        spent: this.spentBy(automation.id),
      },
      {
        budget: 'global',
        key: '[settings] max_cost_per_day',
        limit: limits.globalPerDay,
        spent: this.spentTotal(),
      },
    ];
    let warning: string | undefined;
    for (const { budget, key, limit, spent } of checks) {
      if (limit === undefined) continue;
      const words = `${formatCost(spent)} of ${formatCost(limit)} (${key})`;
      if (spent >= limit) return { stop: this.reach(automation, runId, budget, limit, spent, words) };
      if (spent >= SOFT_SHARE * limit) {
        const line = `budget warning: ${Math.floor((spent / limit) * 100)} % used, ${words}`;
        warning ??= line;
        this.warnOnce(automation.id, runId, budget, line);
      }
    }
    return warning === undefined ? {} : { warning };
  }

  private warnOnce(automationId: string, runId: string, budget: string, line: string): void {
    const key = `${budget}:${budget === 'run' ? runId : budget === 'global' ? GLOBAL_SCOPE : automationId}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.deps.log.warn({ automation: automationId, run: runId, budget, note: line }, 'Budget 80 % used');
  }

  /** A budget ran out: park its scope until the next UTC day, tell the hook, say why. */
  private reach(
    automation: ResolvedAutomation,
    runId: string,
    budget: BudgetReachedEvent['budget'],
    limit: number,
    spent: number,
    words: string,
  ): string {
    const until = new Date(utcDayStart(this.deps.clock.now()) + DAY_MS).toISOString();
    const scope = budget === 'global' ? GLOBAL_SCOPE : automation.id;
    const who = budget === 'global' ? 'every automation' : `'${automation.id}'`;
    const reason = `budget reached: ${words}; ${who} parked until ${until}`;
    const existing = this.parks.get(scope);
    if (!existing || existing.until < until) {
      const park = { scope, until, reason };
      this.parks.set(scope, park);
      this.deps.store.setBudgetPark(park).catch((error: unknown) => {
        this.deps.log.error(
          { automation: automation.id, error: errorMessage(error) },
          'Could not save a budget park',
        );
      });
      this.deps.log.warn({ automation: automation.id, run: runId, budget, until }, 'Budget reached: parked');
      this.deps.onBudgetReached?.({
        budget,
        automationId: automation.id,
        runId,
        limitUsd: limit,
        spentUsd: spent,
        parkedUntil: until,
        reason,
      });
    }
    return reason;
  }
}
