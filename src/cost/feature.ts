/**
 * Cost budgets as a feature (src/cost/budget.ts): a meter per run, parks when a budget runs out
 * (a parked automation is neither polled nor started until the next UTC day), and the saved
 * sessions of unparked automations offered again when the day changes.
 */
import type { ResolvedAutomation } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import type { Feature, GateRequest, GateVerdict, KernelPort } from '../core/feature.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { type BudgetReachedEvent, type BudgetStatus, CostBudgets } from './budget.js';

export interface CostOptions {
  port: KernelPort;
  store: Store;
  log: Logger;
  /** A budget ran out: the run was stopped and its automation (or all, for the global one) parked. */
  onBudgetReached(event: BudgetReachedEvent): void;
}

export class CostFeature implements Feature<{ budgets: CostBudgets }, { budget: BudgetStatus }> {
  readonly name = 'cost';
  readonly budgets: CostBudgets;

  constructor(private readonly options: CostOptions) {
    const { port, store, log } = options;
    this.budgets = new CostBudgets({
      store,
      clock: port.clock,
      log,
      settings: () => port.settings(),
      onBudgetReached: (event) => options.onBudgetReached(event),
    });
  }

  start(): Promise<void> {
    return this.budgets.refresh();
  }

  async gate({ automation, task, resumed }: GateRequest): Promise<GateVerdict> {
    const park = this.budgets.parked(automation.id);
    if (!park) return { kind: 'go' };
    // Not recorded as a run: its saved session (or the item, at the next poll) comes back tomorrow.
    this.options.log.info(
      { automation: automation.id, id: task.item.id, until: park.until },
      'Parked by its budget: not started',
    );
    return { kind: 'hold', forget: !resumed };
  }

  /** Watch mode, once the UTC day changed: saved sessions of the automations a budget parked resume. */
  async beforePoll(): Promise<void> {
    const { port, store, log } = this.options;
    try {
      const unparked = await this.budgets.unparked();
      if (unparked.length === 0) return;
      const sessions = (await store.listSessions()).filter(
        (session) => unparked.includes(session.automationId) && !port.running(session.taskKey),
      );
      await port.resume(sessions);
    } catch (error) {
      log.warn({ error: errorMessage(error) }, 'Could not read the budgets');
    }
  }

  parks(automationId: string): boolean {
    return this.budgets.parked(automationId) !== undefined;
  }

  /** A remediation waits while its automation is parked by its budget. */
  holds(candidate: { automationId: string; remediation: boolean }): boolean {
    return candidate.remediation && this.parks(candidate.automationId);
  }

  runDeps(): { budgets: CostBudgets } {
    return { budgets: this.budgets };
  }

  status(automation: ResolvedAutomation): { budget: BudgetStatus } {
    return { budget: this.budgets.status(automation) };
  }
}
