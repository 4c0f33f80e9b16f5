import { describe, expect, it } from 'vitest';
import { describeRetry, planRetry, RETRY_MAX_MS, retryDelayMs } from './retry.js';

describe('the retry policy', () => {
  it('waits 10 s, doubling, capped at 5 minutes (jitter at its middle)', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 10].map((n) => retryDelayMs(n, 0.5))).toEqual([
      10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000,
    ]);
  });

  it('jitters ±20 % and never waits more than the cap', () => {
    expect(retryDelayMs(1, 0)).toBe(8_000);
    expect(retryDelayMs(1, 0.999999)).toBe(12_000);
    expect(retryDelayMs(2, 0)).toBe(16_000);
    expect(retryDelayMs(6, 0)).toBe(240_000);
    expect(retryDelayMs(6, 0.99)).toBe(RETRY_MAX_MS);
  });

  it('retries failed, timed-out and stalled runs while tries are left', () => {
    const now = 1_000_000;
    for (const status of ['failed', 'timed_out', 'stalled'] as const) {
      expect(
        planRetry({ run: { status, attempt: 1 }, maxAttempts: 3, escalated: false, now, random: 0.5 }),
      ).toEqual({ attempt: 2, maxAttempts: 3, at: now + 10_000 });
    }
    expect(
      planRetry({
        run: { status: 'failed', attempt: 2 },
        maxAttempts: 3,
        escalated: false,
        now,
        random: 0.5,
      }),
    ).toEqual({
      attempt: 3,
      maxAttempts: 3,
      at: now + 20_000,
    });
    expect(
      planRetry({
        run: { status: 'failed', attempt: 3 },
        maxAttempts: 3,
        escalated: false,
        now,
        random: 0.5,
      }),
    ).toBeUndefined();
    expect(
      planRetry({ run: { status: 'failed' }, maxAttempts: 1, escalated: false, now, random: 0.5 }),
    ).toBeUndefined();
  });

  it('never retries blocked, escalated, cancelled, parked, skipped or succeeded runs, nor an escalating failure', () => {
    for (const status of ['blocked', 'escalated', 'cancelled', 'parked', 'skipped', 'succeeded'] as const) {
      expect(
        planRetry({ run: { status, attempt: 1 }, maxAttempts: 5, escalated: false, now: 0, random: 0 }),
      ).toBeUndefined();
    }
    expect(
      planRetry({
        run: { status: 'failed', attempt: 1 },
        maxAttempts: 5,
        escalated: true,
        now: 0,
        random: 0,
      }),
    ).toBeUndefined();
  });

  it('says when: retry 2/3 at 14:05:30', () => {
    expect(describeRetry({ attempt: 2, maxAttempts: 3, at: Date.UTC(2026, 0, 1, 14, 5, 30) })).toBe(
      'retry 2/3 at 14:05:30',
    );
  });
});
