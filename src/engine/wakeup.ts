import type { Clock } from '../core/clock.js';

/** A sleep that any event can cut short; a wake that arrives before the wait is not lost. */
export class Wakeup {
  private controller = new AbortController();

  wake(): void {
    this.controller.abort();
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
