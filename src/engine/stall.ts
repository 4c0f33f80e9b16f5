/**
 * Stall detection (issue 15): an agent that prints nothing, on stdout or stderr, for
 * `stall_timeout_minutes` is stopped. The watch aborts its signal; the executor passes that signal
 * to the agent's process (whose group then gets SIGTERM, then SIGKILL, as on a timeout) and
 * records the run as `stalled`. Time comes from the injected clock, so tests drive it.
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';

/** The automation's quiet-agent limit in ms (0: none). */
export function stallTimeoutMs(
  execution: Pick<Settings['execution'], 'stall_timeout_minutes'>,
  automation: Pick<ResolvedAutomation, 'config'>,
): number {
  return Math.round((automation.config.stall_timeout_minutes ?? execution.stall_timeout_minutes) * 60_000);
}

export interface StallWatch {
  /** Aborted when the agent has been quiet for the whole limit. */
  readonly signal: AbortSignal;
  /** The agent printed something: the quiet time starts again. */
  touch(): void;
  /** The agent ended: the watch stops (no abort after this). */
  stop(): void;
  readonly stalled: boolean;
}

/** Watches for silence longer than `timeoutMs` (0 or less: never aborts). */
export function watchForStall(clock: Clock, timeoutMs: number): StallWatch {
  const controller = new AbortController();
  const ended = new AbortController();
  let last = clock.now();
  const watch: StallWatch = {
    signal: controller.signal,
    touch: () => {
      last = clock.now();
    },
    stop: () => ended.abort(),
    get stalled() {
      return controller.signal.aborted;
    },
  };
  if (timeoutMs <= 0) return watch;
  void (async () => {
    for (;;) {
      const wait = last + timeoutMs - clock.now();
      if (wait <= 0) {
        controller.abort(new Error(`no output for ${timeoutMs / 1000} seconds`));
        return;
      }
      try {
        await clock.sleep(wait, ended.signal);
      } catch {
        return;
      }
    }
  })();
  return watch;
}
