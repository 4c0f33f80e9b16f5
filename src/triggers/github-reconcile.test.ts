import { describe, expect, it } from 'vitest';
import { FakeClock } from '../core/clock.js';
import type { Task } from '../core/types.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { unmatchedItems, whyUnmatched } from './github-reconcile.js';

const labels = (...names: string[]) => ({ nodes: names.map((name) => ({ name })) });
const FILTERS = { state: 'open', labels: ['agent-ready'], exclude_labels: ['wontfix'] };

describe('whyUnmatched', () => {
  it('an open item with the labels still matches (label case does not matter, as on GitHub)', () => {
    expect(whyUnmatched({ __typename: 'Issue', state: 'OPEN', labels: labels('Agent-Ready') }, FILTERS)).toBe(
      undefined,
    );
  });

  it('names what changed: closed, merged, deleted, a label removed or an excluded one added', () => {
    expect(
      whyUnmatched({ __typename: 'Issue', state: 'CLOSED', labels: labels('agent-ready') }, FILTERS),
    ).toBe('item closed');
    expect(
      whyUnmatched(
        { __typename: 'PullRequest', pullRequestState: 'MERGED', labels: labels('agent-ready') },
        FILTERS,
      ),
    ).toBe('pull request merged');
    expect(whyUnmatched(null, FILTERS)).toBe('item deleted');
    expect(whyUnmatched({ __typename: 'Issue', state: 'OPEN', labels: labels() }, FILTERS)).toBe(
      "label 'agent-ready' removed",
    );
    expect(
      whyUnmatched({ __typename: 'Issue', state: 'OPEN', labels: labels('agent-ready', 'wontfix') }, FILTERS),
    ).toBe("label 'wontfix' added");
  });

  it('follows the automation state filter', () => {
    const closed = { ...FILTERS, state: 'closed' };
    expect(whyUnmatched({ __typename: 'Issue', state: 'OPEN', labels: labels('agent-ready') }, closed)).toBe(
      'item reopened',
    );
    const all = { ...FILTERS, state: 'all' };
    expect(whyUnmatched({ __typename: 'Issue', state: 'CLOSED', labels: labels('agent-ready') }, all)).toBe(
      undefined,
    );
  });

  it('reads the items from GitHub (the simulator) 100 to a request: a missing issue or repository counts as deleted', async () => {
    const world = new SimWorld();
    world.addToken('t', 'alice');
    world.addRepo('acme/api');
    world.addIssue('acme/api', { title: 'Open', body: '', labels: ['agent-ready'], author: 'bob' });
    world.addIssue('acme/api', { title: 'Gone soon', body: '', labels: ['agent-ready'], author: 'bob' });
    world.closeIssue('acme/api', 2);
    const sim = await startSimulator({ world });
    try {
      const client = createGitHubClient({
        apiUrl: sim.url,
        tokens: staticTokenSource('t'),
        clock: new FakeClock(),
      });
      const task = (id: string): Task => ({
        key: `k${id}`,
        fingerprint: '',
        identity: { automationId: 'fix', repo: 'acme/api', taskType: 'github-issues', id },
        item: { id, title: '', url: '', body: '', fields: {}, itemKey: `issue:${id}` },
      });
      const reasons = await unmatchedItems(client, [task('1'), task('2'), task('99')], FILTERS);
      expect([...reasons]).toEqual([
        ['k2', 'item closed'],
        ['k99', 'item deleted'],
      ]);
      // One request for all of them, however many (100 items a request).
      const reads = () => sim.requests.filter((r) => r.operationName === 'CurupiraItemStates');
      expect(reads().map((r) => r.cost)).toEqual([1]);
      const many = Array.from({ length: 150 }, (_, i) => task(String(i + 1)));
      const gone = { ...task('5'), key: 'gone', identity: { ...task('5').identity, repo: 'acme/gone' } };
      const again = await unmatchedItems(client, [...many, gone], FILTERS);
      expect(again.get('k1')).toBeUndefined();
      expect([again.get('k2'), again.get('k150'), again.get('gone')]).toEqual([
        'item closed',
        'item deleted',
        'item deleted',
      ]);
      expect(reads().map((r) => r.cost)).toEqual([1, 1, 1]);
    } finally {
      await sim.close();
    }
  });
});
