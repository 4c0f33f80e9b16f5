import { describe, expect, it } from 'vitest';
import { createRunIdGenerator, isRunId } from './run-id.js';

describe('run ids', () => {
  it('sort in creation order within one millisecond and when the clock steps back', () => {
    let time = Date.parse('2025-06-01T12:00:00.000Z');
    const ids = createRunIdGenerator(() => time);
    const made: string[] = [];
    for (let i = 0; i < 50; i++) made.push(ids.next());
    time -= 10_000;
    for (let i = 0; i < 5; i++) made.push(ids.next());
    time += 60_000;
    made.push(ids.next());

    expect(made.every(isRunId)).toBe(true);
    expect(new Set(made).size).toBe(made.length);
    expect([...made].sort()).toEqual(made);
  });

  it('follow the largest stored id after a restart, even with an earlier clock', () => {
    const before = createRunIdGenerator(() => Date.parse('2030-01-01T00:00:00.000Z')).next();
    const after = createRunIdGenerator(() => Date.parse('2025-01-01T00:00:00.000Z'), before).next();
    expect(after > before).toBe(true);
  });

  it('sort by time across generators', () => {
    const early = createRunIdGenerator(() => 1_000).next();
    const late = createRunIdGenerator(() => 1_001).next();
    expect(early < late).toBe(true);
  });
});
