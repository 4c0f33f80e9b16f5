/**
 * The local failure budget (issue 12, item 4): failed and timed-out runs are counted per automation
 * and item (the task key) in the store. At `max_item_failures` the item is escalated: the next time
 * it comes up, one `escalated` run says so and what to do, and the automation runs it no more until
 * a person resets it (`curupira reset RUN_ID`, or Retry on the board) or its title or body changes.
 * Nothing here writes to GitHub: it works with no opt-in key set.
 *
 * `max_resume_failures` is narrower: it counts the failed resumes of one saved session in a row and
 * drops that session (the next run starts fresh). This budget counts every failed run of the item,
 * fresh or resumed, so a resume loop stops here whatever the session does.
 */
import { createHash } from 'node:crypto';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { changedNothing } from '../core/outcome.js';
import { runInit } from '../core/task-fields.js';
import { isFailure, type RunRecord, type Task } from '../core/types.js';
import type { ItemFailures, Store } from '../store/types.js';

/** The automation's budget: its own `max_item_failures`, else the settings-wide one (0: none). */
export function failureBudget(settings: Settings, automation: ResolvedAutomation): number {
  return automation.config.max_item_failures ?? settings.execution.max_item_failures;
}

/** What the count is kept against: the item's title and body (new text starts the count again). */
export function itemTextDigest(task: Task): string {
  return createHash('sha256').update(`${task.item.title}\u0000${task.item.body}`).digest('hex').slice(0, 16);
}

/** What the budget says before a task runs. */
export type BudgetGate =
  | { kind: 'run' }
  /** Escalated, and already said so: nothing new is recorded. */
  | { kind: 'held'; failures: ItemFailures }
  /** Escalated: this `escalated` run (just recorded) says so. */
  | { kind: 'escalated'; run: RunRecord };

/** Escalated and still held: its failures reached the budget (0: never). */
export function isEscalated(state: ItemFailures | undefined, limit: number): state is ItemFailures {
  return state !== undefined && state.escalatedAt !== null && limit > 0 && state.failures >= limit;
}

/** The reason an escalation gives, with what to do about it. */
export function escalationReason(automationId: string, state: ItemFailures, limit: number): string {
  return `escalated: failed ${state.failures} times (max_item_failures = ${limit}); '${automationId}' runs this item no more until \`curupira reset ${state.lastRunId}\` (or Retry on the board) or the item's title or body changes`;
}

export async function checkBudget(
  store: Store,
  settings: Settings,
  automation: ResolvedAutomation,
  task: Task,
  at: string,
): Promise<BudgetGate> {
  const limit = failureBudget(settings, automation);
  const state = await store.getItemFailures(task.key);
  if (!isEscalated(state, limit)) return { kind: 'run' };
  if (state.textDigest !== itemTextDigest(task)) {
    // The item was edited since it failed: the budget starts again.
    await store.clearItemFailures(task.key);
    return { kind: 'run' };
  }
  if (state.noticeRunId !== null) return { kind: 'held', failures: state };
  const created = await store.createRun({
    ...runInit(automation, task, 'escalated'),
    reason: escalationReason(automation.id, state, limit),
  });
  const run = await store.updateRun(created.id, { finishedAt: at });
  await store.setEscalationNotice(task.key, run.id);
  return { kind: 'escalated', run };
}

/**
 * After a run: a success that changed something forgets the item's failures; a failure, a timeout or a stall counts one
 * more (each retry is a run, so each failed try counts: see src/retries/retry.ts), and
 * the run that reaches the budget says in its reason that the item is now escalated.
 */
export async function countRun(
  store: Store,
  settings: Settings,
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
): Promise<RunRecord> {
  if (run.status === 'succeeded') {
    // A run that changed nothing proves nothing: after a failed try it leaves the count as it is,
    // so a loop of failing fresh runs and empty resumes still reaches the budget.
    if (!changedNothing(run)) await store.clearItemFailures(task.key);
    return run;
  }
  if (!isFailure(run.status)) return run;
  const limit = failureBudget(settings, automation);
  const state = await store.recordItemFailure({
    taskKey: task.key,
    automationId: automation.id,
    itemKey: task.item.itemKey,
    runId: run.id,
    textDigest: itemTextDigest(task),
    limit,
  });
  // Escalated by this very failure (the store stamps both times with one clock reading).
  if (!isEscalated(state, limit) || state.escalatedAt !== state.updatedAt) return run;
  return store.updateRun(run.id, {
    reason: `${run.reason ?? run.status}; ${escalationReason(automation.id, state, limit)}`,
  });
}
