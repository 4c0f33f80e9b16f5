/**
 * The feed of a watch (a review watch on a branch): every `poll_interval_seconds` its trigger looks
 * once and says what it found — an item to run, an item to skip with a reason (recorded as a
 * skipped run, no agent started), or nothing. One run per item key in this process: a commit
 * already reviewed, or whose review failed, is not offered again until the item changes. A scan a
 * person asks for ("run a baseline now") is looked for at once and runs whatever was reviewed
 * before; while it is queued or running, the watch's own looks wait for it.
 */
import type { ResolvedAutomation } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import type { RunRecord, Task } from '../core/types.js';
import type { Feed, PollContext, WatchSpec } from '../triggers/types.js';
import { recordSkippedRun, taskFromItem } from './task.js';

/** A scan asked by hand whose look failed is looked for again this soon (not a whole interval on). */
const ASKED_RETRY_MS = 30_000;

export class WatchFeed implements Feed {
  nextPollAt = 0;
  /** The item key last dispatched or recorded as skipped. */
  private handled: string | undefined;
  /** A scan a person asked for, for the next poll. */
  private asked: string | undefined;
  /** The task key of the asked scan's task, until the next poll offers it. */
  private askedTask: string | undefined;
  /** The task key of the asked scan, while it is queued or running. */
  private askedRunning: string | undefined;
  /** The scan asked before a restart was read from the state (at the first poll). */
  private restored = false;

  constructor(
    readonly automation: ResolvedAutomation,
    private readonly watch: WatchSpec,
    private readonly intervalSeconds: number,
  ) {}

  get scans(): readonly string[] {
    return this.watch.scans ?? [];
  }

  askScan(scan: string): void {
    this.asked = scan;
    this.nextPollAt = 0;
  }

  async poll(context: PollContext): Promise<Task[]> {
    this.nextPollAt = context.clock.now() + this.intervalSeconds * 1000;
    // A scan asked before a restart, whose run had not started, is asked still.
    if (!context.preview && !this.restored) {
      this.restored = true;
      const saved = await context.store.getMeta(this.askedKey);
      if (saved && this.asked === undefined && this.askedRunning === undefined) this.asked = saved;
    }
    // A preview (`run --dry-run`) neither takes nor drops a scan asked for.
    const asked = context.preview ? undefined : this.asked;
    if (!context.preview) this.asked = undefined;
    // Kept in the state until its run ends: a restart before that asks for it again (the same
    // review, if its run was recovered meanwhile, is not offered twice).
    if (asked !== undefined) await context.store.setMeta(this.askedKey, asked);
    // The watch's own looks wait while a scan asked by hand is queued or running.
    if (asked === undefined && this.askedRunning !== undefined) return [];
    let look: Awaited<ReturnType<WatchSpec['look']>>;
    try {
      look = await this.watch.look(context, asked);
    } catch (error) {
      // A scan a person asked for stays asked: looked for again at the next poll, not dropped.
      if (asked !== undefined) {
        this.asked ??= asked;
        this.nextPollAt = Math.min(this.nextPollAt, context.clock.now() + ASKED_RETRY_MS);
      }
      context.log.warn(
        { automation: this.automation.id, error: errorMessage(error), ...(asked ? { scan: asked } : {}) },
        asked ? 'The watch could not look for the scan asked; trying again' : 'The watch could not look',
      );
      return [];
    }
    if (!look) return [];
    const task = taskFromItem(this.automation, look.item);
    if ('skip' in look) {
      // Nothing to run for the scan asked: it is answered.
      if (asked !== undefined) await context.store.setMeta(this.askedKey, '');
      if (context.preview || this.handled === look.item.itemKey) return [];
      this.handled = look.item.itemKey;
      // The same skip the last process recorded (a restart at an unchanged head): said once.
      if (await this.lastRecorded(context, look.item.itemKey)) return [];
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
    if (asked !== undefined) {
      this.askedTask = task.key;
      return [task];
    }
    if (this.handled === look.item.itemKey) return [];
    return [task];
  }

  markDispatched(task: Task): void {
    this.handled = task.item.itemKey;
    if (task.key === this.askedTask) {
      this.askedRunning = task.key;
      this.askedTask = undefined;
    }
  }

  forget(task: Task): void {
    if (this.handled === task.item.itemKey) this.handled = undefined;
    if (this.askedRunning === task.key) this.askedRunning = undefined;
  }

  async runFinished(task: Task, context: PollContext): Promise<void> {
    if (this.askedRunning !== task.key) return;
    this.askedRunning = undefined;
    this.nextPollAt = 0;
    if (this.asked === undefined) await context.store.setMeta(this.askedKey, '');
  }

  /** The watch's newest run is a skip of this item (recorded before a restart). */
  private async lastRecorded(context: PollContext, itemKey: string): Promise<boolean> {
    const [last] = await context.store
      .listRuns({ automationId: this.automation.id, limit: 1 })
      .catch(() => [] as RunRecord[]);
    return last?.status === 'skipped' && last.itemKey === itemKey;
  }

  /** The state's record of a scan asked and not yet run (meta key; empty once it ran). */
  private get askedKey(): string {
    return `scan-asked:${this.automation.id}`;
  }
}
