import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.js';

describe('Backoff', () => {
  it('follows the seed: 30, 60, 120, 240, 300, 300 after empty polls', () => {
    const backoff = new Backoff(30);
    expect([1, 2, 3, 4, 5, 6].map(() => backoff.next(false) / 1000)).toEqual([30, 60, 120, 240, 300, 300]);
  });

  it('resets to the base after any discovery, and doubles on the next empty poll (no second base wait)', () => {
    const backoff = new Backoff(30);
    backoff.next(false);
    backoff.next(false);
    expect(backoff.next(true)).toBe(30_000);
    expect(backoff.next(false)).toBe(60_000);
    expect(backoff.next(false)).toBe(120_000);
  });

  it('caps the base at 300 s', () => {
    const backoff = new Backoff(900);
    expect(backoff.next(false)).toBe(300_000);
    expect(backoff.next(true)).toBe(300_000);
  });
});
