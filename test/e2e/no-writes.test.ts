/**
 * Seed 000's promise: with none of the opt-in keys, curupira writes nothing to GitHub. A run that
 * discovers, runs agents that commit, fails one and keeps worktrees sends only reads: GETs and
 * GraphQL queries, never a mutation or any other method.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, issueAutomation } from '../helpers/harness.js';

let h: Harness | undefined;
afterAll(async () => {
  await h?.cleanup();
});

describe('writes to GitHub', () => {
  it('a run without the opt-in keys sends zero write requests', async () => {
    h = await createHarness({
      issues: [
        { title: 'Commit [[fake:commit]]', labels: ['agent-ready'] },
        { title: 'Fail [[fake:fail]]', labels: ['agent-ready'] },
      ],
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const { runs } = await h.run();
    expect(runs.map((r) => r.status).sort()).toEqual(['failed', 'succeeded']);
    expect(h.sim.requests.length).toBeGreaterThan(0);
    const writes = h.sim.requests.filter(
      (r) =>
        !(
          r.method === 'GET' ||
          (r.method === 'POST' && r.path.endsWith('/graphql') && !/^\s*mutation\b/.test(r.query ?? ''))
        ),
    );
    expect(writes).toEqual([]);
  }, 60_000);
});
