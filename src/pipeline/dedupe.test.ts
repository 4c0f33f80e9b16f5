import { describe, expect, it } from 'vitest';
import { type ClosedIssue, duplicateCandidates, formatCandidates, titleSimilarity } from './dedupe.js';

const DAY = 86_400_000;
const now = Date.parse('2026-12-04T12:00:00Z');
const closed = (
  number: number,
  title: string,
  daysAgo: number,
  extra: Partial<ClosedIssue> = {},
): ClosedIssue => ({
  number,
  title,
  html_url: `https://github.com/acme/api/issues/${number}`,
  closed_at: new Date(now - daysAgo * DAY).toISOString(),
  updated_at: new Date(now - daysAgo * DAY).toISOString(),
  state_reason: 'completed',
  ...extra,
});

describe('duplicate candidates (dedupe_closed_days)', () => {
  it('scores titles by the words they share, leaving out stop words and case', () => {
    expect(titleSimilarity('Crash on start', 'crash ON START')).toBe(1);
    expect(titleSimilarity('Crash on start', 'Dark mode')).toBe(0);
    expect(titleSimilarity('the a of', 'the a of')).toBe(0);
  });

  it('keeps closed issues in the window with similar titles, best first, at most five; never pull requests or itself', () => {
    const since = now - 30 * DAY;
    const list = [
      closed(1, 'Crash on start when the cache is cold', 3),
      closed(2, 'Crash on start when the cache is cold', 40),
      closed(3, 'Cache cold start crash', 1, { pull_request: {} }),
      closed(4, 'Crash at start', 2),
      closed(5, 'Dark mode', 1),
      closed(9, 'Cache cold start crash', 1),
      ...[10, 11, 12, 13, 14].map((n) => closed(n, 'cold cache crash', 5)),
    ];
    const found = duplicateCandidates('Cache cold start crash', list, since, 9);
    expect(found.map((i) => i.number)).toEqual([1, 14, 13, 12, 11]);
    expect(formatCandidates(found.slice(0, 1))).toBe(
      '#1: Crash on start when the cache is cold (closed 2026-12-01, completed) https://github.com/acme/api/issues/1',
    );
    expect(duplicateCandidates('Nothing alike here', list, since, 99)).toEqual([]);
  });
});
