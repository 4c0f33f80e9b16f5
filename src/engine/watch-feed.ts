/**
 * The feed of a watch (a review watch on a branch): every `poll_interval_seconds` its trigger looks
 * once and says what it found — an item to run, an item to skip with a reason (recorded as a
 * skipped run, no agent started), or nothing. One run per item key in this process: a commit
 * already reviewed, or whose review failed, is not offered again until the item changes.
 */
import type { ResolvedAutomation } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import type { Task } from '../core/types.js';
import type { Feed, PollContext, WatchSpec } from '../triggers/types.js';
import { recordSkippedRun, taskFromItem } from './task.js';

export class WatchFeed implements Feed {
  nextPollAt = 0;
  /** The item key last dispatched or recorded as skipped. */
  private handled: string | undefined;

  constructor(
    readonly automation: ResolvedAutomation,
    private readonly watch: WatchSpec,
    private readonly intervalSeconds: number,
  ) {}

  async poll(context: PollContext): Promise<Task[]> {
    this.nextPollAt = context.clock.now() + this.intervalSeconds * 1000;
    let look: Awaited<ReturnType<WatchSpec['look']>>;
    try {
      look = await this.watch.look(context);
    } catch (error) {
      context.log.warn(
        { automation: this.automation.id, error: errorMessage(error) },
        'The watch could not look',
      );
      return [];
    }
    if (!look) return [];
    const task = taskFromItem(this.automation, look.item);
    if ('skip' in look) {
      if (context.preview || this.handled === look.item.itemKey) return [];
      this.handled = look.item.itemKey;
      const runId = await recordSkippedRun(
        context.store,
        this.automation,
        task,
        look.skip,
        new Date(context.clock.now()).toISOString(),
      );
      context.log.info(
        { automation: this.automation.id, run: runId, reason: look.skip },
        'Skipped, no agent started',
      );
      return [];
    }
    if (this.handled === look.item.itemKey) return [];
    return [task];
  }

  markDispatched(task: Task): void {
    this.handled = task.item.itemKey;
  }

  forget(task: Task): void {
    if (this.handled === task.item.itemKey) this.handled = undefined;
  }

  async runFinished(): Promise<void> {}
}
