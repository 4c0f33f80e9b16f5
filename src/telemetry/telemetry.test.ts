import { describe, expect, it } from 'vitest';
import { parseOtlpHeaders } from './index.js';
import { pointsSpent } from './otel.js';

describe('parseOtlpHeaders', () => {
  it('reads key=value pairs separated by commas, decoding percent escapes', () => {
    expect(parseOtlpHeaders('api-key=abc%3D1, x-tenant = ops,broken,=nokey')).toEqual({
      'api-key': 'abc=1',
      'x-tenant': 'ops',
    });
    expect(parseOtlpHeaders(undefined)).toEqual({});
  });
});

describe('pointsSpent', () => {
  const rate = (used: number, resetAt: number, resource = 'graphql') => ({
    limit: 5000,
    remaining: 5000 - used,
    used,
    resetAt,
    resource,
  });

  it('counts the growth of used within a window, all of it in a new one, nothing on the first report', () => {
    const windows = new Map<string, { used: number; resetAt: number }>();
    expect(pointsSpent(windows, rate(40, 1000))).toBe(0);
    expect(pointsSpent(windows, rate(43, 1000))).toBe(3);
    expect(pointsSpent(windows, rate(43, 1000))).toBe(0);
    expect(pointsSpent(windows, rate(2, 2000))).toBe(2);
    // A late answer from the old window counts nothing; resources are separate budgets.
    expect(pointsSpent(windows, rate(50, 1000))).toBe(0);
    expect(pointsSpent(windows, rate(5, 2000))).toBe(3);
    expect(pointsSpent(windows, rate(7, 1000, 'core'))).toBe(0);
    expect(pointsSpent(windows, rate(9, 1000, 'core'))).toBe(2);
  });
});
