/**
 * What a run writes to GitHub, as the engine offers it to features: `RunWrites` queues writes
 * through the write queue (built by src/coordination/run-writes.ts), and the text helpers the comments
 * share. Types and pure functions only, so features need not import the engine.
 */
import type { AnyAutomation } from '../config/types.js';
import type { RunRecord, Task } from '../core/types.js';
import type { GitHubWrite, WriteInit } from '../store/types.js';
import type { DrainResult } from './write-queue.js';

export interface RunWrites {
  /** Queues what a starting run writes (its `status_label`). Never throws. */
  started(automation: AnyAutomation, task: Task, run: RunRecord): Promise<void>;
  /** Queues what a finished run writes (nothing unless its automation opted in). Never throws. */
  finished(automation: AnyAutomation, task: Task, run: RunRecord): Promise<void>;
  /** Queues an edit of the comment holding `marker` (nothing is posted when none is found): lease releases. */
  queueEdit(
    item: { repo: string; number: number },
    runId: string,
    marker: string,
    body: string,
  ): Promise<void>;
  /** The run's record changed after `finished` (the reason of a stop): its result comment is edited. */
  resultChanged(automation: AnyAutomation, task: Task, run: RunRecord): Promise<void>;
  /** Queues the writes of a task's item (escalation). Never throws. */
  forItem(task: Task, run: RunRecord, writes: { marker: string; write: GitHubWrite }[]): Promise<void>;
  /** Queues writes with their own target (the run log, the sweep's repairs). Never throws. */
  queue(writes: readonly WriteInit[]): Promise<void>;
  /** Sends what is due now (one drain at a time: a second waits for the first). Never throws. */
  drain(): Promise<DrainResult | undefined>;
  /** Sends until nothing is pending (retries included), or until `signal` aborts. Never throws. */
  flush(signal?: AbortSignal): Promise<void>;
}

/** How long a run took, from `from` (default its start) to its end: `42 s`, `2 min 5 s`. */
export function runDuration(run: RunRecord, from = run.startedAt): string | undefined {
  if (!from || !run.finishedAt) return undefined;
  const seconds = Math.max(0, Math.round((Date.parse(run.finishedAt) - Date.parse(from)) / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** Text that came from elsewhere (reasons quote agents and items) goes in a code span, ticks removed. */
export function code(text: string): string {
  return `\`${text.replace(/`/g, "'").replace(/[\r\n]+/g, ' ')}\``;
}
