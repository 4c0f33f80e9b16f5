/**
 * An engine in watch mode, in this process, over a harness: what it settled (`onRun`) and each
 * round of its loop (`onTick`), so a test waits on those events instead of sleeping.
 */
import type { RunRecord } from '../../src/core/types.js';
import { Engine, type EngineOptions, type EngineStatus } from '../../src/features.js';
import type { NotificationEvent } from '../../src/notify/index.js';
import type { Store } from '../../src/store/types.js';
import { type Harness, type HarnessRunOptions, recordingNotifier, waitFor } from './harness.js';

export interface Watching {
  engine: Engine;
  store: Store;
  /** Runs that reached their final record, in order. */
  runs: RunRecord[];
  /** The status each finished round of the watch loop left, in order. */
  ticks: EngineStatus[];
  /**
   * Wakes the loop and waits for a whole round that began after this call (a round already under
   * way may have read the world before it); returns the status that round left. A test that checks
   * that something does not happen checks it after this round, which would have done it.
   */
  round(timeoutMs?: number): Promise<EngineStatus>;
  /** Stops the engine (running agents are stopped, their sessions kept) and closes a store it opened. */
  stop(): Promise<void>;
}

export interface WatchOptions extends Omit<HarnessRunOptions, 'mode' | 'stop'> {
  /** The store to watch over (left open); default: one opened here and closed by `stop`. */
  store?: Store;
  /** Notifications are recorded here instead of sent. */
  events?: NotificationEvent[];
  /** Anything else of the engine's options (an injected clock, a notifier, onEvent…). */
  engine?: Partial<EngineOptions>;
}

export async function startWatching(harness: Harness, options: WatchOptions = {}): Promise<Watching> {
  const { store: given, events, engine: extra, ...runOptions } = options;
  const store = given ?? (await harness.openStore());
  const stop = new AbortController();
  const runs: RunRecord[] = [];
  const ticks: EngineStatus[] = [];
  const base = harness.engineOptions(store, {
    ...runOptions,
    mode: 'watch',
    stop: stop.signal,
    onRun: (run) => {
      runs.push(run);
      runOptions.onRun?.(run);
    },
  });
  const engine = new Engine({
    ...base,
    ...(events ? { notifier: recordingNotifier(events) } : {}),
    ...extra,
    onTick: (status) => {
      ticks.push(status);
      extra?.onTick?.(status);
    },
  });
  const done = engine.run();
  let stopped: Promise<void> | undefined;
  return {
    engine,
    store,
    runs,
    ticks,
    round: (timeoutMs) => nextRound(engine, ticks, timeoutMs),
    stop() {
      stopped ??= (async () => {
        stop.abort();
        await done;
        if (!given) await store.close();
      })();
      return stopped;
    },
  };
}

/**
 * Wakes a watching engine and waits for a whole round of its loop that began after this call;
 * returns the status it left. `ticks` is where its `onTick` records them.
 */
export async function nextRound(
  engine: Engine,
  ticks: readonly EngineStatus[],
  timeoutMs = 15_000,
): Promise<EngineStatus> {
  // Woken twice: the round after the first wake-up may have begun before this call, the one after
  // the second cannot have (a wake-up during a round makes the loop go round once more).
  for (const _ of [1, 2]) {
    const seen = ticks.length;
    engine.allowed(); // it only wakes the loop
    await waitFor('a round of the watch loop', () => ticks.length > seen, timeoutMs, 5);
  }
  return ticks.at(-1)!;
}

/**
 * Runs the engine in watch mode until `until` holds (and at least `ticks` rounds of its loop have
 * finished), then stops it; returns the runs it settled.
 */
export async function watchUntil(
  harness: Harness,
  what: string,
  until: (store: Store) => boolean | Promise<boolean>,
  options: WatchOptions & { ticks?: number; timeoutMs?: number } = {},
): Promise<RunRecord[]> {
  const { ticks = 0, timeoutMs = 30_000, ...watch } = options;
  const watching = await startWatching(harness, watch);
  try {
    await waitFor(
      what,
      async () => watching.ticks.length >= ticks && (await until(watching.store)),
      timeoutMs,
    );
  } finally {
    await watching.stop();
  }
  return watching.runs;
}
