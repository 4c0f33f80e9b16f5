/**
 * A cancel sticks: a run an operator cancelled (the board, the API, `curupira cancel`) holds its
 * item until a person retries that run. Neither its saved session nor a fresh run of its item
 * starts by itself, after a restart of this process or on any host of a fleet: the mark lives in
 * the store (a meta value per task key, which both backends keep), and the gate reads it before
 * every run. A retry (Control.retry → `retried`) lifts it. A run stopped because its item no longer
 * matches (`on_unmatch = "stop"`) is not held: it resumes when its item matches again.
 */
import type { Feature, GateRequest, GateVerdict, RunOutcome } from '../core/feature.js';
import type { RunRecord } from '../core/types.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';

/** The store's meta key that holds a task after an operator's cancel (its value: the run id). */
export function cancelHoldKey(taskKey: string): string {
  return `cancelled:${taskKey}`;
}

/** The run whose cancel holds this task, if one does. */
export async function cancelHold(store: Store, taskKey: string): Promise<string | undefined> {
  const runId = await store.getMeta(cancelHoldKey(taskKey));
  return runId ? runId : undefined;
}

/** Lifts an operator's cancel from a task (a person retried it); true when one held it. */
export async function liftCancelHold(store: Store, taskKey: string): Promise<boolean> {
  if ((await cancelHold(store, taskKey)) === undefined) return false;
  await store.setMeta(cancelHoldKey(taskKey), '');
  return true;
}

export interface CancelHoldOptions {
  store: Store;
  log: Logger;
}

export class CancelHoldFeature implements Feature {
  readonly name = 'cancel-hold';

  constructor(private readonly options: CancelHoldOptions) {}

  async gate({ automation, task, resumed }: GateRequest): Promise<GateVerdict> {
    const runId = await cancelHold(this.options.store, task.key);
    if (runId === undefined) return { kind: 'go' };
    this.options.log.info(
      // `sessionKept`: the held task is a session to resume (not "it was resumed").
      { automation: automation.id, id: task.item.id, run: runId, sessionKept: resumed },
      'Cancelled by an operator: not run until that run is retried',
    );
    const previous = await this.options.store.getRun(runId);
    return previous ? { kind: 'hold', previous } : { kind: 'hold' };
  }

  async afterRun({ task, run, cancelledBy }: RunOutcome): Promise<void> {
    if (cancelledBy === 'operator') await this.options.store.setMeta(cancelHoldKey(task.key), run.id);
  }

  async retried(run: RunRecord): Promise<void> {
    await liftCancelHold(this.options.store, run.taskKey);
  }
}
