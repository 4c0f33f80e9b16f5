import { expect, it } from 'vitest';
import { signalGroup } from './process-group.js';

it('never signals group 0 (its own) or -1 (every process): a group id below 2 is refused', () => {
  // Signal 0 only asks; without the guard kill(-1, 0) answers true for every process we may signal.
  expect(signalGroup(1, 0)).toBe(false);
  expect(signalGroup(0, 0)).toBe(false);
  expect(signalGroup(-5, 0)).toBe(false);
  expect(signalGroup(Number.NaN, 0)).toBe(false);
});
