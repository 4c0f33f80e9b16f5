import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../core/clock.js';
import { GitHubGraphQLError } from '../core/errors.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { postGraphQL } from '../simulator/testing.js';
import { SimWorld } from '../simulator/world.js';
import { createGitHubClient } from './client.js';
import { OPERATIONS } from './operations.js';
import { staticTokenSource } from './token.js';

const TOKEN = 'operations-token';
let sim: Simulator;

beforeAll(async () => {
  const world = new SimWorld();
  world.addToken(TOKEN, 'alice');
  world.addRepo('acme/api');
  world.addIssue('acme/api', {
    title: 'Crash',
    body: 'Boom',
    labels: ['bug'],
    assignees: ['alice'],
    milestone: 'v1',
    author: 'bob',
    comments: [{ author: 'carol', body: 'Same here' }],
  });
  world.setAssociation('acme/api', 'carol', 'CONTRIBUTOR');
  world.addTeam('acme', 'maintainers', ['alice', 'carol']);
  world.addPullRequest('acme/api', {
    title: 'Fix crash',
    author: 'app/dependabot',
    labels: ['bug'],
    closingIssues: [1],
    additions: 3,
    deletions: 1,
    changedFiles: 1,
  });
  for (const owner of ['acme', 'alice']) {
    const project = world.addProject(owner, { title: `${owner} board` });
    world.addProjectItem(project, 'acme/api#1', { status: 'Todo' });
    world.addProjectItem(project, 'acme/api#2', { status: 'In Progress' });
    world.addProjectItem(project, { draft: { title: 'Idea', body: 'Later' } }, { status: 'Todo' });
  }
  sim = await startSimulator({ world });
});

afterAll(async () => {
  await sim.close();
});

/** Variables a real caller sends with each operation. A new operation needs a line here. */
const VARIABLES: Record<keyof typeof OPERATIONS, Record<string, unknown>> = {
  SEARCH_ISSUES: { query: 'repo:acme/api is:issue is:open sort:created-asc', first: 100, after: null },
  SEARCH_PULL_REQUESTS: { query: 'repo:acme/api is:pr is:open sort:created-asc', first: 100, after: null },
  SEARCH_COUNT: { query: 'repo:acme/api is:open' },
  ORGANIZATION_PROJECT_ITEMS: { owner: 'acme', number: 1, statusField: 'Status', first: 100, after: null },
  USER_PROJECT_ITEMS: { owner: 'alice', number: 1, statusField: 'Status', first: 100, after: null },
  VIEWER: {},
  SCREENING_CONTEXT: { owner: 'acme', name: 'api', number: 1, comments: 30, timeline: true },
  TEAM_MEMBERS: { org: 'acme', slug: 'maintainers', after: null },
  ITEM_STATES: { owner0: 'acme', name0: 'api' },
};

/** What each operation must find in the world above: proof every selected field was answered. */
const EXPECTED: Record<keyof typeof OPERATIONS, (data: Record<string, unknown>) => void> = {
  SEARCH_ISSUES: (data) =>
    expect(data.search).toMatchObject({
      issueCount: 1,
      nodes: [
        {
          __typename: 'Issue',
          number: 1,
          author: { login: 'bob' },
          labels: { nodes: [{ name: 'bug' }] },
          assignees: { nodes: [{ login: 'alice' }] },
          milestone: { title: 'v1' },
          repository: { nameWithOwner: 'acme/api' },
        },
      ],
    }),
  SEARCH_PULL_REQUESTS: (data) =>
    expect(data.search).toMatchObject({
      issueCount: 1,
      nodes: [{ __typename: 'PullRequest', number: 2, author: { login: 'dependabot' }, additions: 3 }],
    }),
  SEARCH_COUNT: (data) => expect(data.search).toEqual({ issueCount: 2 }),
  ORGANIZATION_PROJECT_ITEMS: (data) => {
    const items = (data.organization as { projectV2: { items: { nodes: { type: string }[] } } }).projectV2
      .items.nodes;
    expect(items.map((i) => i.type)).toEqual(['ISSUE', 'PULL_REQUEST', 'DRAFT_ISSUE']);
  },
  USER_PROJECT_ITEMS: (data) => {
    const project = (data.user as { projectV2: { items: { totalCount: number } } }).projectV2;
    expect(project.items.totalCount).toBe(3);
  },
  VIEWER: (data) => expect(data.viewer).toEqual({ login: 'alice' }),
  SCREENING_CONTEXT: (data) =>
    expect((data.repository as { issueOrPullRequest: unknown }).issueOrPullRequest).toEqual({
      __typename: 'Issue',
      author: { __typename: 'User', login: 'bob' },
      authorAssociation: 'NONE',
      comments: {
        totalCount: 1,
        nodes: [
          {
            author: { __typename: 'User', login: 'carol' },
            authorAssociation: 'CONTRIBUTOR',
            createdAt: expect.any(String),
            body: 'Same here',
          },
        ],
      },
      timelineItems: {
        nodes: [
          {
            __typename: 'LabeledEvent',
            createdAt: expect.any(String),
            actor: { __typename: 'User', login: 'bob' },
            label: { name: 'bug' },
          },
        ],
      },
    }),
  TEAM_MEMBERS: (data) =>
    expect(data.organization).toEqual({
      team: {
        members: {
          pageInfo: { hasNextPage: false, endCursor: expect.any(String) },
          nodes: [{ login: 'alice' }, { login: 'carol' }],
        },
      },
    }),
  ITEM_STATES: (data) =>
    expect(data.r0).toEqual({
      n1: { __typename: 'Issue', state: 'OPEN', labels: { nodes: [{ name: 'bug' }] } },
      n2: { __typename: 'PullRequest', pullRequestState: 'OPEN', labels: { nodes: [{ name: 'bug' }] } },
    }),
};

describe('every operation curupira sends executes against the simulator', () => {
  for (const name of Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[]) {
    it(name, async () => {
      const reply = await postGraphQL(sim.url, TOKEN, OPERATIONS[name], VARIABLES[name]);
      expect(reply.status).toBe(200);
      expect(reply.body.errors).toBeUndefined();
      const data = reply.body.data as Record<string, unknown>;
      EXPECTED[name](data);
      expect(data.rateLimit).toMatchObject({ cost: expect.any(Number), remaining: expect.any(Number) });
    });
  }

  it('and through the client', async () => {
    const client = createGitHubClient({
      apiUrl: sim.url,
      tokens: staticTokenSource(TOKEN),
      clock: new FakeClock(),
    });
    for (const name of Object.keys(OPERATIONS) as (keyof typeof OPERATIONS)[]) {
      const { data } = await client.graphql<Record<string, unknown>>(OPERATIONS[name], VARIABLES[name]);
      EXPECTED[name](data);
    }
  });
});

describe('a misspelt field', () => {
  const broken = OPERATIONS.SEARCH_ISSUES.replace('createdAt', 'createdOn');

  it("is rejected with GitHub's error shape, before anything runs or is charged", async () => {
    sim.resetRequests();
    const reply = await postGraphQL(sim.url, TOKEN, broken, VARIABLES.SEARCH_ISSUES);
    expect(reply.status).toBe(200);
    expect(reply.body).not.toHaveProperty('data');
    expect(reply.body.errors).toEqual([
      {
        path: ['query CurupiraSearchIssues', 'search', 'nodes', '... on Issue', 'createdOn'],
        extensions: { code: 'undefinedField', typeName: 'Issue', fieldName: 'createdOn' },
        locations: [expect.objectContaining({ line: expect.any(Number), column: expect.any(Number) })],
        message: "Field 'createdOn' doesn't exist on type 'Issue'",
      },
    ]);
    expect(sim.requests.at(-1)?.cost).toBe(0);
  });

  it('fails in the client with GitHubGraphQLError, without a retry', async () => {
    sim.resetRequests();
    const clock = new FakeClock();
    const client = createGitHubClient({ apiUrl: sim.url, tokens: staticTokenSource(TOKEN), clock });
    const error = await client.graphql(broken, VARIABLES.SEARCH_ISSUES).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitHubGraphQLError);
    expect((error as Error).message).toBe(
      "GitHub GraphQL error: Field 'createdOn' doesn't exist on type 'Issue'",
    );
    expect(sim.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });
});
