import { describe, expect, it } from 'vitest';
import { FakeClock } from '../core/clock.js';
import { stallTimeoutMs, watchForStall } from './stall.js';

describe('stall watch (fake clock)', () => {
  it('aborts after the whole limit without output, not before', async () => {
    const clock = new FakeClock();
    const watch = watchForStall(clock, 60_000);
    await clock.advance(59_999);
    expect(watch.stalled).toBe(false);
    await clock.advance(1);
    expect(watch.stalled).toBe(true);
    expect(watch.signal.aborted).toBe(true);
  });

  it('output restarts the quiet time', async () => {
    const clock = new FakeClock();
    const watch = watchForStall(clock, 60_000);
    await clock.advance(50_000);
    watch.touch();
    await clock.advance(50_000);
    expect(watch.stalled).toBe(false);
    watch.touch();
    await clock.advance(59_000);
    expect(watch.stalled).toBe(false);
    await clock.advance(1_000);
    expect(watch.stalled).toBe(true);
  });

  it('a stopped watch never aborts and leaves no sleeper; 0 disables it', async () => {
    const clock = new FakeClock();
    const watch = watchForStall(clock, 60_000);
    watch.stop();
    await clock.advance(120_000);
    expect(watch.stalled).toBe(false);
    expect(clock.pending).toBe(0);
    const off = watchForStall(clock, 0);
    await clock.advance(10 * 60 * 60_000);
    expect(off.stalled).toBe(false);
    expect(clock.pending).toBe(0);
  });

  it('the automation overrides the settings-wide limit', () => {
    expect(stallTimeoutMs({ stall_timeout_minutes: 15 }, { config: {} } as never)).toBe(900_000);
    expect(
      stallTimeoutMs({ stall_timeout_minutes: 15 }, { config: { stall_timeout_minutes: 0 } } as never),
    ).toBe(0);
  });
});
