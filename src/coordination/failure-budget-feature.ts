/**
 * The failure budget as a feature (budget.ts, escalation.ts): an escalated item is held back (or
 * recorded once as `escalated`), a finished run is counted, and an item reset since it was held
 * (`curupira reset`) is polled again. With GitHub writes, escalation also reads and writes the
 * item's label and the counts other hosts left in comments.
 */

import { errorMessage } from '../core/errors.js';
import type { Feature, GateRequest, GateVerdict, KernelPort, RunOutcome } from '../core/feature.js';
import type { RunRecord } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { checkBudget, countRun } from './budget.js';
import { Escalation } from './escalation.js';

export interface FailureBudgetOptions {
  port: KernelPort;
  store: Store;
  log: Logger;
  github(): GitHubClient;
  /** True when GitHub writes are configured (escalation then reads the item's label). */
  writing(): boolean;
}

export class FailureBudgetFeature implements Feature {
  readonly name = 'failure-budget';
  readonly escalation: Escalation;
  /** Escalated tasks held back by this process (task key → automation): a reset is noticed in watch mode. */
  private readonly escalated = new Map<string, string>();

  constructor(private readonly options: FailureBudgetOptions) {
    const { store, log, port, github } = options;
    this.escalation = new Escalation({ store, settings: () => port.settings(), github, log });
  }

  async gate({ automation, task, resumed }: GateRequest): Promise<GateVerdict> {
    const { store, port, log } = this.options;
    if (this.options.writing() && (await this.escalation.gate(automation, task, resumed)) === 'held')
      return { kind: 'hold' };
    const at = new Date(port.clock.now()).toISOString();
    const budget = await checkBudget(store, port.settings(), automation, task, at);
    if (budget.kind !== 'run') this.escalated.set(task.key, automation.id);
    if (budget.kind === 'escalated') return { kind: 'record', run: budget.run };
    if (budget.kind === 'held') {
      log.info(
        { automation: automation.id, id: task.item.id, failures: budget.failures.failures },
        'Still escalated: not run until `curupira reset` or its text changes',
      );
      return { kind: 'hold' };
    }
    return { kind: 'go' };
  }

  runEnded({ automation, task, run }: RunOutcome): Promise<RunRecord> {
    return countRun(this.options.store, this.options.port.settings(), automation, task, run);
  }

  /** A person asking again is the reset an escalation waits for. */
  async retried(run: RunRecord): Promise<void> {
    if (run.status === 'escalated') await this.options.store.clearItemFailures(run.taskKey);
  }

  /** Watch mode: an escalated item reset (`curupira reset`) since it was held back is polled again. */
  async beforePoll(): Promise<void> {
    try {
      for (const [key, automationId] of this.escalated) {
        if ((await this.options.store.getItemFailures(key))?.escalatedAt) continue;
        this.escalated.delete(key);
        this.options.port.forget(key, { automationId, pollNow: true });
      }
    } catch (error) {
      this.options.log.warn({ error: errorMessage(error) }, 'Could not read escalations');
    }
  }
}
