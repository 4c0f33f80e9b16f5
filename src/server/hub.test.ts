import { describe, expect, it } from 'vitest';
import type { EngineStatus } from '../engine/engine.js';
import { Hub } from './hub.js';

const idle: EngineStatus = {
  mode: 'watch',
  running: [],
  queued: 0,
  maxActive: 1,
  nextPollAt: 1_000,
  stopping: false,
  draining: false,
  waiting: 0,
};

/** Notices the hub sent after `act` (its coalescing window is 1 ms here). */
async function notices(hub: Hub, act: () => void): Promise<number> {
  let seen = 0;
  const unsubscribe = hub.subscribe(() => {
    seen += 1;
  });
  act();
  await new Promise((resolve) => setTimeout(resolve, 20));
  unsubscribe();
  return seen;
}

describe('Hub', () => {
  it('tells boards of a status that changed what they show, not of a poll that only moved the next poll', async () => {
    const hub = new Hub(1);
    expect(await notices(hub, () => hub.setStatus(idle))).toBe(1);
    // An idle engine's ticks: only the next poll's time moves.
    expect(await notices(hub, () => hub.setStatus({ ...idle, nextPollAt: 2_000 }))).toBe(0);
    expect(hub.status?.nextPollAt).toBe(2_000);
    // Work queued, then a run: each is told.
    expect(await notices(hub, () => hub.setStatus({ ...idle, nextPollAt: 3_000, queued: 1 }))).toBe(1);
    const running = {
      ...idle,
      running: [
        {
          automationId: 'fix',
          repo: 'acme/api',
          itemId: '1',
          item: 'acme/api#1',
          title: 'x',
          status: 'running',
          startedAt: 5,
        },
      ],
    };
    expect(await notices(hub, () => hub.setStatus(running))).toBe(1);
    // Anything else the server says changed is told as before.
    expect(await notices(hub, () => hub.changed())).toBe(1);
    hub.close();
  });
});
