import { describe, expect, it } from 'vitest';
import { systemClock } from '../core/clock.js';
import { Wakeup } from './wakeup.js';

describe('Wakeup', () => {
  it('cuts a wait short, keeps a wake that came first, and sleeps again after', async () => {
    const wakeup = new Wakeup();
    // Woken twice before any wait: the next wait returns at once, the one after sleeps.
    wakeup.wake();
    wakeup.wake();
    let started = performance.now();
    await wakeup.wait(5_000, systemClock);
    expect(performance.now() - started).toBeLessThan(1_000);
    started = performance.now();
    await wakeup.wait(30, systemClock);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    // Woken while it waits.
    started = performance.now();
    const waiting = wakeup.wait(5_000, systemClock);
    setTimeout(() => wakeup.wake(), 10);
    await waiting;
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
