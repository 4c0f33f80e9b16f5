import type { Clock } from '../core/clock.js';

/**
 * The reason every wake aborts with: `abort()` without one builds a DOMException and its stack on
 * every call, even on a signal already aborted (a finished run wakes the loop).
 */
const WOKEN = Object.freeze({ woken: true });

/** A sleep that any event can cut short; a wake that arrives before the wait is not lost. */
export class Wakeup {
  private controller = new AbortController();

  wake(): void {
    if (!this.controller.signal.aborted) this.controller.abort(WOKEN);
  }

  async wait(ms: number, clock: Clock): Promise<void> {
    const controller = this.controller;
    if (!controller.signal.aborted) {
      try {
        await clock.sleep(Math.max(0, ms), controller.signal);
      } catch {
        // woken early
      }
    }
    if (controller.signal.aborted) this.controller = new AbortController();
  }
}
