/**
 * The fleet benchmark's arithmetic: percentiles, rates, statement counts per source and the
 * machine's busy share, on hand-made inputs.
 */
import { describe, expect, it } from 'vitest';
import {
  busyShare,
  type CountSnapshot,
  divided,
  median,
  percentile,
  perMinute,
  statementDelta,
} from './fleet-stats.mjs';

describe('fleet benchmark helpers', () => {
  it('takes nearest-rank percentiles of unsorted values', () => {
    const values = [50, 10, 40, 20, 30, 100, 90, 80, 70, 60];
    expect(median(values)).toBe(50);
    expect(percentile(values, 95)).toBe(100);
    expect(percentile(values, 10)).toBe(10);
    expect(percentile(values, 0)).toBe(10);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
    expect(values[0]).toBe(50); // the input is left as it was
  });

  it('turns a count and milliseconds into items per minute', () => {
    expect(perMinute(36, 18_000)).toBe(120);
    expect(perMinute(1, 0)).toBeNaN();
  });

  it('sums statement deltas per source over processes, a new process counting from zero', () => {
    const before: (CountSnapshot | undefined)[] = [
      {
        statements: { curupira: 10, 'curupira-fleet': 5, 'curupira-queue': 2 },
        counters: { fleetDbQueries: 5 },
      },
      undefined,
    ];
    const after: CountSnapshot[] = [
      {
        statements: { curupira: 16, 'curupira-fleet': 9, 'curupira-queue': 6, 'curupira-poller-lock': 1 },
        counters: { fleetDbQueries: 9 },
      },
      { statements: { curupira: 4, pgAdmin: 2 }, counters: { fleetDbQueries: 1 } },
    ];
    const delta = statementDelta(before, after);
    expect(delta).toEqual({
      store: 10,
      fleet: 4,
      queue: 4,
      lock: 1,
      other: 2,
      total: 21,
      counters: { fleetDbQueries: 5 },
    });
    expect(divided(delta, 2)).toEqual({
      store: 5,
      fleet: 2,
      queue: 2,
      lock: 0.5,
      other: 1,
      total: 10.5,
      counters: { fleetDbQueries: 2.5 },
    });
  });

  it('reads the busy share of the CPUs from two /proc/stat readings', () => {
    const before = 'cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 50 0 50 350 50 0 0 0 0 0\n';
    const after = 'cpu  250 0 150 800 200 0 0 0 0 0\ncpu0 125 0 75 400 100 0 0 0 0 0\n';
    // 400 ticks passed: 200 busy (user 150 + system 50), 200 idle (idle 100 + iowait 100).
    expect(busyShare(before, after)).toBe(0.5);
  });
});
