import { describe, expect, it } from 'vitest';
import { whyUnmatched } from './github-reconcile.js';

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
});
