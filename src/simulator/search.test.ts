import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseSearchQuery, searchIssues, tokenizeSearchQuery } from './search.js';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

/**
 * acme/api: issues #1 (open, bug + agent-ready, alice's, v1), #2 (open, dark mode, no assignee),
 * #3 (closed bug); PRs #4 (approved, green, closes #1), #5 (draft, pending, into develop),
 * #6 (dependabot, failing, changes requested), #7 (closed unmerged, error, "closes" #2),
 * #8 (merged, closes #3). acme/web: issue #1 with labels "Bug" and `say "hi"`.
 */
function buildWorld(): SimWorld {
  const world = new SimWorld();
  world.addRepo('acme/api');
  world.addRepo('acme/web');
  world.addToken('alice-token', 'alice');
  world.addIssue('acme/api', {
    title: 'Crash on start',
    body: 'The app crashes when started offline.',
    labels: ['bug', 'agent-ready'],
    assignees: ['alice'],
    author: 'alice',
    milestone: 'v1',
  });
  world.addIssue('acme/api', {
    title: 'Add dark mode',
    body: 'Users want a dark mode.',
    labels: ['enhancement', 'good first issue'],
    author: 'bob',
  });
  world.addIssue('acme/api', { title: 'Old bug', labels: ['bug'], author: 'alice', assignees: ['bob'] });
  world.closeIssue('acme/api', 3);
  world.addPullRequest('acme/api', {
    title: 'Fix crash',
    author: 'alice',
    labels: ['bug'],
    headRefName: 'fix-crash',
    closingIssues: [1],
    reviewDecision: 'APPROVED',
    reviews: [{ author: 'bob', state: 'APPROVED' }],
    checkState: 'SUCCESS',
  });
  world.addPullRequest('acme/api', {
    title: 'WIP dark mode',
    author: 'bob',
    draft: true,
    headRefName: 'dark-mode',
    baseRefName: 'develop',
    reviewDecision: 'REVIEW_REQUIRED',
    checkState: 'PENDING',
  });
  world.addPullRequest('acme/api', {
    title: 'Bump lodash from 4.17.20 to 4.17.21',
    author: 'dependabot[bot]',
    headRefName: 'dependabot/npm_and_yarn/lodash-4.17.21',
    reviewDecision: 'CHANGES_REQUESTED',
    reviews: [{ author: 'alice', state: 'CHANGES_REQUESTED' }],
    checkState: 'FAILURE',
  });
  world.addPullRequest('acme/api', {
    title: 'Abandoned attempt',
    author: 'bob',
    state: 'CLOSED',
    closingIssues: [2],
    checkState: 'ERROR',
  });
  world.addPullRequest('acme/api', { title: 'Old fix', author: 'carol', closingIssues: [3] });
  world.mergePullRequest('acme/api', 8);
  world.addIssue('acme/web', { title: 'Web is slow', labels: ['Bug', 'say "hi"'], assignees: ['alice'] });
  const project = world.addProject('acme', { title: 'Roadmap' });
  world.addProjectItem(project, 'acme/api#2', { status: 'Todo' });
  world.addProjectItem(project, 'acme/api#5', { status: 'In Progress' });
  return world;
}

const world = buildWorld();

function found(query: string): string[] {
  return searchIssues(world, query, { viewer: 'alice' })
    .items.map((item) => `${item.repo.split('/')[1]}#${item.number}`)
    .sort();
}

describe('search qualifiers', () => {
  test.each([
    ['repo:acme/api is:issue', ['api#1', 'api#2', 'api#3']],
    ['repo:acme/api is:pr', ['api#4', 'api#5', 'api#6', 'api#7', 'api#8']],
    ['repo:acme/web', ['web#1']],
    ['repo:acme/api repo:acme/web is:issue is:open', ['api#1', 'api#2', 'web#1']],
    ['repo:acme/api is:issue is:open', ['api#1', 'api#2']],
    ['repo:acme/api is:issue is:closed', ['api#3']],
    ['repo:acme/api is:pr is:open', ['api#4', 'api#5', 'api#6']],
    ['repo:acme/api is:pr is:closed', ['api#7', 'api#8']],
    ['repo:acme/api is:merged', ['api#8']],
    ['repo:acme/api is:pr -is:merged is:closed', ['api#7']],
  ])('type and state: %s', (query, expected) => {
    expect(found(query)).toEqual(expected);
  });

  test.each([
    ['label:bug', ['api#1', 'api#3', 'api#4', 'web#1']],
    ['label:BUG repo:acme/web', ['web#1']],
    ['repo:acme/api label:bug label:agent-ready', ['api#1']],
    ['repo:acme/api label:"good first issue"', ['api#2']],
    ['repo:acme/api label:enhancement,agent-ready', ['api#1', 'api#2']],
    ['repo:acme/api is:issue -label:bug', ['api#2']],
    ['repo:acme/api is:issue -label:bug -label:enhancement', []],
    ['label:"say \\"hi\\""', ['web#1']],
  ])('labels: %s', (query, expected) => {
    expect(found(query)).toEqual(expected);
  });

  test.each([
    ['repo:acme/api assignee:alice', ['api#1']],
    ['assignee:@me', ['api#1', 'web#1']],
    ['repo:acme/api is:issue no:assignee', ['api#2']],
    ['repo:acme/api is:issue assignee:*', ['api#1', 'api#3']],
    ['repo:acme/api is:issue -no:assignee', ['api#1', 'api#3']],
    ['repo:acme/api author:alice', ['api#1', 'api#3', 'api#4']],
    ['repo:acme/api author:@me is:pr', ['api#4']],
    ['repo:acme/api -author:alice is:issue', ['api#2']],
    ['repo:acme/api author:app/dependabot', ['api#6']],
    ['repo:acme/api author:dependabot[bot]', ['api#6']],
    ['repo:acme/api author:dependabot', []],
    ['repo:acme/api milestone:v1', ['api#1']],
    ['repo:acme/api milestone:"V1"', ['api#1']],
    ['repo:acme/api milestone:v2', []],
    ['repo:acme/api is:issue -milestone:v1', ['api#2', 'api#3']],
    ['project:acme/1', ['api#2', 'api#5']],
    ['project:acme/2', []],
    ['repo:acme/api -project:acme/1 is:open', ['api#1', 'api#4', 'api#6']],
  ])('people, milestones and projects: %s', (query, expected) => {
    expect(found(query)).toEqual(expected);
  });

  test.each([
    // PR #7 is closed without merging, so issue #2 is not linked; merged #8 still links #3.
    ['repo:acme/api is:issue linked:pr', ['api#1', 'api#3']],
    ['repo:acme/api is:issue -linked:pr', ['api#2']],
    ['repo:acme/api is:pr linked:issue', ['api#4', 'api#7', 'api#8']],
    ['repo:acme/api is:pr -linked:issue', ['api#5', 'api#6']],
    ['repo:acme/api draft:true', ['api#5']],
    ['repo:acme/api draft:false', ['api#4', 'api#6', 'api#7', 'api#8']],
    ['repo:acme/api base:develop', ['api#5']],
    ['repo:acme/api is:pr -base:develop is:open', ['api#4', 'api#6']],
    ['repo:acme/api head:fix-crash', ['api#4']],
    ['repo:acme/api head:fix', []],
    ['repo:acme/api review:approved', ['api#4']],
    ['repo:acme/api review:changes_requested', ['api#6']],
    ['repo:acme/api review:required', ['api#5']],
    ['repo:acme/api is:pr review:none', ['api#5', 'api#7', 'api#8']],
    ['repo:acme/api status:success', ['api#4']],
    ['repo:acme/api status:failure', ['api#6', 'api#7']],
    ['repo:acme/api status:pending', ['api#5']],
    ['repo:acme/api is:pr -status:success', ['api#5', 'api#6', 'api#7', 'api#8']],
  ])('links, drafts, refs, reviews and checks: %s', (query, expected) => {
    expect(found(query)).toEqual(expected);
  });

  test.each([
    ['repo:acme/api crash', ['api#1', 'api#4']],
    ['repo:acme/api "dark mode"', ['api#2', 'api#5']],
    ['repo:acme/api offline', ['api#1']],
    ['repo:acme/api in:title offline', []],
    ['repo:acme/api is:issue -crash', ['api#2', 'api#3']],
    ['repo:acme/api colour:blue', []],
  ])('text: %s', (query, expected) => {
    expect(found(query)).toEqual(expected);
  });
});

describe('search sort orders', () => {
  const order = (q: string, w: SimWorld = world) =>
    searchIssues(w, q, { viewer: 'alice' }).items.map((item) => item.number);

  test('created, ascending and descending; created-desc is the default', () => {
    expect(order('repo:acme/api is:issue sort:created-asc')).toEqual([1, 2, 3]);
    expect(order('repo:acme/api is:issue sort:created-desc')).toEqual([3, 2, 1]);
    expect(order('repo:acme/api is:issue')).toEqual([3, 2, 1]);
  });

  test('updated follows the latest activity; comments follows the comment count', () => {
    const w = buildWorld();
    w.addComment('acme/api', 2, { body: 'first' });
    w.addComment('acme/api', 2, { body: 'second' });
    w.addComment('acme/api', 1, { body: 'latest' });
    expect(order('repo:acme/api is:issue is:open sort:updated-desc', w)).toEqual([1, 2]);
    expect(order('repo:acme/api is:issue is:open sort:updated-asc', w)).toEqual([2, 1]);
    expect(order('repo:acme/api is:issue sort:comments-desc', w)).toEqual([2, 1, 3]);
    expect(order('repo:acme/api is:issue sort:comments-asc', w)).toEqual([3, 1, 2]);
  });
});

describe('query parsing', () => {
  test('negation, quoting and escapes split into terms', () => {
    expect(tokenizeSearchQuery('repo:a/b -label:"needs \\"triage\\"" "two words" -linked:pr')).toEqual([
      { key: 'repo', value: 'a/b', negated: false },
      { key: 'label', value: 'needs "triage"', negated: true },
      { key: null, value: 'two words', negated: false },
      { key: 'linked', value: 'pr', negated: true },
    ]);
    expect(parseSearchQuery('is:issue sort:updated-asc').sort).toEqual({
      field: 'updated',
      direction: 'asc',
    });
  });
});

describe('search over GraphQL', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ world: buildWorld() });
  });
  afterAll(async () => {
    await sim.close();
  });

  test('results resolve to Issue or PullRequest through the SearchResultItem union', async () => {
    const reply = await postGraphQL<{ search: { issueCount: number; nodes: Record<string, unknown>[] } }>(
      sim.url,
      'alice-token',
      `query ($q: String!) { search(type: ISSUE, query: $q, first: 10) { issueCount
        nodes { __typename ... on Issue { number } ... on PullRequest { number isDraft } } } }`,
      { q: 'repo:acme/api label:bug is:open sort:created-asc' },
    );
    expect(reply.body.data?.search).toEqual({
      issueCount: 2,
      nodes: [
        { __typename: 'Issue', number: 1 },
        { __typename: 'PullRequest', number: 4, isDraft: false },
      ],
    });
  });

  test('@me is the user the token belongs to', async () => {
    sim.world.addToken('bob-token', 'bob');
    const reply = await postGraphQL<{ search: { nodes: { number: number }[] } }>(
      sim.url,
      'bob-token',
      '{ search(type: ISSUE, query: "repo:acme/api assignee:@me", first: 10) { nodes { ... on Issue { number } } } }',
    );
    expect(reply.body.data?.search.nodes).toEqual([{ number: 3 }]);
  });
});
