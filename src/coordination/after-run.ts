/**
 * What a counted run writes to GitHub besides its own result (run-writes.ts): the escalation's
 * label and comment when this run reached the budget, and its run-log entry. The engine calls it
 * once per recorded run, only when GitHub writes are configured. Never throws.
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { RunRecord, Task } from '../core/types.js';
import type { RunWrites } from '../github/write-port.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import type { Escalation } from './escalation.js';
import { markCurrentLog, runLogOn, runLogWrites } from './run-log.js';

export interface AfterRunDeps {
  store: Store;
  settings: Settings;
  clock: Clock;
  log: Logger;
  writes: RunWrites;
  escalation: Escalation;
}

export async function afterRunWrites(
  deps: AfterRunDeps,
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
): Promise<void> {
  const { store, settings, writes } = deps;
  try {
    await writes.forItem(task, run, await deps.escalation.writesAfter(automation, task, run));
    if (!runLogOn(settings, automation)) return;
    const log = await runLogWrites(store, settings, automation, task, run, deps.clock.now());
    await writes.queue(log);
    await markCurrentLog(store, log);
  } catch (error) {
    deps.log.warn(
      { automation: automation.id, run: run.id, error: errorMessage(error) },
      'Could not queue the escalation or run-log writes',
    );
  }
}
