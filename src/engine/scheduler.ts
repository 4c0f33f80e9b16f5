/**
 * The scheduler's pure core: which task starts next. It holds the bounded queue and what runs, and
 * decides from limits and exclusivity alone; it performs no I/O and knows no clock. The engine
 * offers tasks, asks for the next one to start, and reports when a run ends.
 *
 * Exclusivity: a task key never runs twice at once; `checkout = "main"` runs never share their
 * checkout; cron runs of one automation never overlap.
 *
 * Fairness: retries and new items share the slots. A retry joins the queue when its backoff ends,
 * behind what already waits, and after a retry starts, a new item waiting goes next: a backlog of
 * failing items can never keep a new one out for more than one run.
 */
import type { Task } from '../core/types.js';

export interface Candidate {
  task: Task;
  automationId: string;
  /** Resources the run holds while it runs; two runs sharing a key never run together. */
  locks: readonly string[];
  /**
   * Saved sessions resume before new work (`resume`); a retry after its backoff (`retry`) queues
   * behind what is already waiting and takes turns with new items (see `next`).
   */
  priority?: 'resume' | 'normal' | 'retry';
  /**
   * Queued even when the queue is full (`max_pending_tasks`): remediation runs of delivered pull
   * requests, at most one per pull request, which must wait their turn rather than be refused.
   */
  unbounded?: boolean;
}

/**
 * `queued`: new in the queue. `updated`: the same task was queued with older item text, and this
 * version replaced it in place. `busy`: the same task runs now with older item text; offer it again
 * once that run ends. `duplicate`: the same version is queued or running. `full`: no room.
 */
export type OfferResult = 'queued' | 'updated' | 'busy' | 'duplicate' | 'full';

export interface SchedulerSnapshot {
  running: readonly Candidate[];
  queued: readonly Candidate[];
}

export function locksFor(
  task: Task,
  options: { sharedCheckout?: string; serialAutomation?: boolean },
): string[] {
  const locks = [`task:${task.key}`];
  if (options.sharedCheckout) locks.push(`checkout:${options.sharedCheckout}`);
  if (options.serialAutomation) locks.push(`automation:${task.identity.automationId}`);
  return locks;
}

export class SchedulerCore {
  private maxActive: number;
  private maxPending: number;
  private readonly queue: Candidate[] = [];
  private readonly running = new Map<string, Candidate>();
  private readonly held = new Set<string>();
  /** The last candidate started was a retry: a new item waiting goes next. */
  private retryLast = false;

  constructor(limits: { maxActive: number; maxPending: number }) {
    this.maxActive = limits.maxActive;
    this.maxPending = limits.maxPending;
  }

  setLimits(limits: { maxActive: number; maxPending: number }): void {
    this.maxActive = limits.maxActive;
    this.maxPending = limits.maxPending;
  }

  /** Queues a task unless the same task is already queued or running, or the queue is full. */
  offer(candidate: Candidate): OfferResult {
    const key = candidate.task.key;
    const running = this.running.get(key);
    if (running) return running.task.fingerprint === candidate.task.fingerprint ? 'duplicate' : 'busy';
    const queued = this.queue.findIndex((c) => c.task.key === key);
    if (queued >= 0) {
      const old = this.queue[queued]!;
      if (old.task.fingerprint === candidate.task.fingerprint || (old.priority ?? 'normal') !== 'normal')
        return 'duplicate';
      this.queue[queued] = { ...candidate, ...(old.priority ? { priority: old.priority } : {}) };
      return 'updated';
    }
    if (this.queue.length >= this.maxPending && !candidate.unbounded) return 'full';
    if (candidate.priority === 'resume') {
      const firstNormal = this.queue.findIndex((c) => c.priority !== 'resume');
      this.queue.splice(firstNormal < 0 ? this.queue.length : firstNormal, 0, candidate);
    } else {
      this.queue.push(candidate);
    }
    return 'queued';
  }

  /** Room left in the queue. */
  get capacity(): number {
    return Math.max(0, this.maxPending - this.queue.length);
  }

  /**
   * The next task to start, if a slot is free and one is eligible; it is marked running. `held`
   * keeps a candidate queued for now (a parked provider's tasks wait for its reset).
   */
  next(held?: (candidate: Candidate) => boolean): Candidate | undefined {
    if (this.running.size >= this.maxActive) return undefined;
    const ready = (c: Candidate): boolean => c.locks.every((lock) => !this.held.has(lock)) && !held?.(c);
    let index = this.queue.findIndex(ready);
    if (index < 0) return undefined;
    // Retries and new items take turns.
    if (this.retryLast && this.queue[index]?.priority === 'retry') {
      const fresh = this.queue.findIndex((c) => c.priority !== 'retry' && ready(c));
      if (fresh >= 0) index = fresh;
    }
    const [candidate] = this.queue.splice(index, 1);
    if (!candidate) return undefined;
    this.retryLast = candidate.priority === 'retry';
    this.running.set(candidate.task.key, candidate);
    for (const lock of candidate.locks) this.held.add(lock);
    return candidate;
  }

  /** A run ended: frees its slot and locks. */
  finish(taskKey: string): void {
    const candidate = this.running.get(taskKey);
    if (!candidate) return;
    this.running.delete(taskKey);
    for (const lock of candidate.locks) this.held.delete(lock);
  }

  /** Drops queued tasks (all, or those matching); returns them. */
  clearQueue(predicate: (candidate: Candidate) => boolean = () => true): Candidate[] {
    const removed: Candidate[] = [];
    for (let i = this.queue.length - 1; i >= 0; i -= 1) {
      if (predicate(this.queue[i]!)) removed.unshift(...this.queue.splice(i, 1));
    }
    return removed;
  }

  isBusy(taskKey: string): boolean {
    return this.running.has(taskKey) || this.queue.some((c) => c.task.key === taskKey);
  }

  get activeCount(): number {
    return this.running.size;
  }

  get queuedCount(): number {
    return this.queue.length;
  }

  get idle(): boolean {
    return this.running.size === 0 && this.queue.length === 0;
  }

  snapshot(): SchedulerSnapshot {
    return { running: [...this.running.values()], queued: [...this.queue] };
  }
}
