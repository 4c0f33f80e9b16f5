/**
 * Time as an injected dependency: the scheduler, the feed, backoff and rate-limit waits all take a
 * `Clock`, so tests drive them with `FakeClock` instead of sleeping.
 */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      function onAbort(): void {
        clearTimeout(timer);
        reject(signal?.reason);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

interface Sleeper {
  until: number;
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** A clock that only moves when a test calls `advance` or `set`. */
export class FakeClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];
  /** Every duration passed to `sleep`, in order: lets a test assert how long code chose to wait. */
  readonly sleeps: number[] = [];

  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const sleeper: Sleeper = {
        until: this.current + Math.max(0, ms),
        resolve,
        reject,
        signal,
        onAbort: () => {
          this.sleepers = this.sleepers.filter((s) => s !== sleeper);
          reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', sleeper.onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /** Number of sleeps not yet woken. */
  get pending(): number {
    return this.sleepers.length;
  }

  /** Moves time forward, waking every sleeper whose time has come (in order), letting promises settle. */
  async advance(ms: number): Promise<void> {
    await this.set(this.current + ms);
  }

  async set(time: number | Date): Promise<void> {
    const target = typeof time === 'number' ? time : time.getTime();
    for (;;) {
      const due = this.sleepers.filter((s) => s.until <= target).sort((a, b) => a.until - b.until)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.until);
      this.sleepers = this.sleepers.filter((s) => s !== due);
      due.signal?.removeEventListener('abort', due.onAbort);
      due.resolve();
      await flushPromises();
    }
    this.current = Math.max(this.current, target);
    await flushPromises();
  }
}

export async function flushPromises(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}
