/**
 * A fake kernel port for a feature's unit tests: the settings and injected clock it is given, and
 * a record of everything the feature asked of the kernel (offers, forgets, pauses, wakes). No
 * feeds, no scheduler, no processes: a feature's gate and after-run logic run in milliseconds.
 */
import type { Settings } from '../../src/config/types.js';
import type { FakeClock } from '../../src/core/clock.js';
import type { KernelPort, OfferOptions } from '../../src/core/feature.js';
import type { Task } from '../../src/core/types.js';
import type { SessionRecord } from '../../src/store/types.js';

export interface FakePort extends KernelPort {
  offers: { automationId: string; task: Task; options: OfferOptions | undefined }[];
  forgets: { taskKey: string; options: unknown }[];
  pauses: { automationId: string; reason: string }[];
  resumed: SessionRecord[];
  wakes: number;
  /** What `capacity()` answers (default 1). */
  free: number;
  /** Automations `paused()` says yes for. */
  pausedIds: Set<string>;
  /** Task keys `running()` says yes for. */
  runningKeys: Set<string>;
  stopping: boolean;
}

export function fakePort(settings: Settings, clock: FakeClock, mode: 'drain' | 'watch' = 'watch'): FakePort {
  const port: FakePort = {
    mode,
    clock,
    pollSignal: new AbortController().signal,
    offers: [],
    forgets: [],
    pauses: [],
    resumed: [],
    wakes: 0,
    free: 1,
    pausedIds: new Set(),
    runningKeys: new Set(),
    stopping: false,
    settings: () => settings,
    offer(automationId, task, options) {
      port.offers.push({ automationId, task, options });
      return 'queued';
    },
    async resume(sessions) {
      port.resumed.push(...sessions);
    },
    capacity: () => port.free,
    forget(taskKey, options) {
      port.forgets.push({ taskKey, options });
    },
    pollSoon() {
      port.wakes += 1;
    },
    wake() {
      port.wakes += 1;
    },
    async pause(automationId, reason) {
      port.pauses.push({ automationId, reason });
      port.pausedIds.add(automationId);
    },
    paused: (automationId) => port.pausedIds.has(automationId),
    running: (taskKey) => port.runningKeys.has(taskKey),
    winding: () => port.stopping,
  };
  return port;
}
