import { describe, expect, it } from 'vitest';
import { parseFixture } from './fixture-schema.js';
import { worldFromFixture } from './world.js';

function problem(fixture: unknown): string {
  try {
    parseFixture(fixture);
  } catch (error) {
    return (error as Error).message;
  }
  return 'no problem';
}

describe('fixture parsing (zod)', () => {
  it('names the first problem where a reader would look for it', () => {
    expect(problem(5)).toBe('fixture must be a JSON object');
    expect(problem({ users: {} })).toBe('users must be a JSON array');
    expect(problem({ users: [{ name: 'A' }] })).toBe('users[].login must be a non-empty string');
    expect(problem({ tokens: { t: '' } })).toBe('tokens.t must be a non-empty string');
    expect(problem({ repos: [{}] })).toBe('repos[].name must be a non-empty string');
    expect(problem({ repos: [{ name: 'acme/api', issues: [{ body: 'x' }] }] })).toBe(
      'acme/api.issues[].title must be a non-empty string',
    );
    expect(problem({ repos: [{ name: 'acme/api', issues: [{ title: 'x', state: 'DONE' }] }] })).toBe(
      'acme/api.issues[].state must be one of "OPEN", "CLOSED"',
    );
    expect(problem({ repos: [{ name: 'acme/api', labels: [{ name: 5 }] }] })).toBe(
      'acme/api.labels[].name must be a non-empty string',
    );
    expect(problem({ projects: [{ owner: 'acme', title: 'B', items: [{ status: 'Todo' }] }] })).toBe(
      'a project item needs "issue", "pullRequest" or "draft"',
    );
    expect(problem({ projects: [{ owner: 'acme', title: 'B', items: [{ draft: { body: 'x' } }] }] })).toBe(
      'projects[].items[].draft.title must be a non-empty string',
    );
  });

  it('refuses a key the schema does not know, as the JSON Schema does', () => {
    expect(problem({ repos: [{ name: 'acme/api', issue: [] }] })).toBe('acme/api has unknown keys: issue');
    expect(() => worldFromFixture({ repo: [] })).toThrow('fixture has unknown keys: repo');
  });

  it('loads what it parsed: labels, milestones, tokens and the clock start', () => {
    const world = worldFromFixture({
      now: '2026-03-01T00:00:00Z',
      tokens: { t: 'alice' },
      repos: [
        {
          name: 'acme/api',
          labels: ['bug', { name: 'p1', color: 'ff0000' }],
          milestones: [{ title: 'v1', state: 'CLOSED' }],
          issues: [{ title: 'Bug', labels: ['bug'], milestone: 'v1' }],
        },
      ],
    });
    expect(world.viewerForToken('t')?.login).toBe('alice');
    expect(world.issue('acme/api', 1)?.createdAt.startsWith('2026-03-01')).toBe(true);
  });
});
