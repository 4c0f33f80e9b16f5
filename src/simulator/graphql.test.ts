import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

const TOKEN = 'graphql-test-token';
let sim: Simulator;

beforeAll(async () => {
  const world = new SimWorld();
  world.addRepo('acme/api', { defaultBranch: 'trunk' });
  world.addToken(TOKEN, 'alice');
  world.addLabel('acme/api', 'agent-ready', { color: '0e8a16' });
  world.addIssue('acme/api', {
    title: 'Crash on start',
    body: 'It crashes.',
    labels: ['agent-ready', 'bug'],
    assignees: ['alice'],
    milestone: 'v1',
    author: 'bob',
    comments: [{ author: 'carol', body: 'Same here' }, 'Me too'],
  });
  world.addPullRequest('acme/api', {
    title: 'Bump lodash',
    author: 'app/dependabot',
    headRefName: 'dependabot/npm/lodash',
    closingIssues: [1],
    additions: 10,
    deletions: 2,
    changedFiles: 1,
    checkState: 'FAILURE',
    reviewDecision: 'REVIEW_REQUIRED',
  });
  world.addRepo('acme/many');
  for (let i = 0; i < 1050; i += 1) world.addIssue('acme/many', { title: `Issue ${i + 1}` });
  sim = await startSimulator({ world });
});

afterAll(async () => {
  await sim.close();
});

describe('schema validation', () => {
  test('a misspelt field fails with the error GitHub sends, and nothing runs', async () => {
    const reply = await postGraphQL(
      sim.url,
      TOKEN,
      'query {\n  repository(owner: "acme", name: "api") {\n    issue(number: 1) { titel }\n  }\n}',
    );
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      errors: [
        {
          path: ['query', 'repository', 'issue', 'titel'],
          extensions: { code: 'undefinedField', typeName: 'Issue', fieldName: 'titel' },
          locations: [{ line: 3, column: 24 }],
          message: "Field 'titel' doesn't exist on type 'Issue'",
        },
      ],
    });
    expect(sim.requests.at(-1)?.cost).toBe(0);
  });

  test('a missing required argument, an unknown argument and an unknown type read as on GitHub', async () => {
    const reply = await postGraphQL(
      sim.url,
      TOKEN,
      'query Lookup { repository(owner: "acme") { issue(number: 1, sort: 1) { title } ... on Widget { id } } }',
    );
    const byCode = Object.fromEntries((reply.body.errors ?? []).map((e) => [e.extensions?.code, e]));
    expect(byCode.missingRequiredArguments).toMatchObject({
      path: ['query Lookup', 'repository'],
      message: "Field 'repository' is missing required arguments: name",
      extensions: { className: 'Field', name: 'repository', arguments: 'name' },
    });
    expect(byCode.argumentNotAccepted).toMatchObject({
      path: ['query Lookup', 'repository', 'issue', 'sort'],
      message: "Field 'issue' doesn't accept argument 'sort'",
    });
    expect(byCode.undefinedType).toMatchObject({
      path: ['query Lookup', 'repository', '... on Widget'],
      message: "No such type Widget, so it can't be a fragment condition",
    });
    expect(reply.body.data).toBeUndefined();
  });

  test('a query asked again is answered afresh (its variables, the world now); an invalid one fails each time', async () => {
    const query =
      'query ($n: Int!) { repository(owner: "acme", name: "api") { issueOrPullRequest(number: $n) { ... on Issue { title } ... on PullRequest { title } } } }';
    const first = await postGraphQL(sim.url, TOKEN, query, { n: 1 });
    const second = await postGraphQL(sim.url, TOKEN, query, { n: 2 });
    expect(first.body.data).toEqual({ repository: { issueOrPullRequest: { title: 'Crash on start' } } });
    expect(second.body.data).toEqual({ repository: { issueOrPullRequest: { title: 'Bump lodash' } } });
    const badVariable = await postGraphQL(sim.url, TOKEN, query, { n: 'one' });
    expect(badVariable.body.errors?.[0]?.message).toMatch(/\$n/);
    const invalid = '{ repository(owner: "acme", name: "api") { issue(number: 1) { titel } } }';
    for (let ask = 0; ask < 2; ask += 1) {
      const reply = await postGraphQL(sim.url, TOKEN, invalid);
      expect(reply.body.errors?.[0]?.message, `ask ${ask}`).toBe(
        "Field 'titel' doesn't exist on type 'Issue'",
      );
    }
  });

  test('every missing required argument of a field is listed in one error', async () => {
    const reply = await postGraphQL(sim.url, TOKEN, '{ repository { id } }');
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors?.[0]?.message).toBe(
      "Field 'repository' is missing required arguments: name, owner",
    );
  });

  test('a variable of the wrong type names the variable, the argument and both types', async () => {
    const reply = await postGraphQL(
      sim.url,
      TOKEN,
      'query ($n: String!) { repository(owner: "acme", name: "api") { issue(number: $n) { title } } }',
      { n: '1' },
    );
    expect(reply.body.errors?.[0]).toMatchObject({
      path: ['query', 'repository', 'issue', 'number'],
      extensions: {
        code: 'variableMismatch',
        variableName: 'n',
        argumentName: 'number',
        typeName: 'String!',
      },
      message: 'Type mismatch on variable $n and argument number (String! / Int!)',
    });
  });

  test('a variable declared with an unknown type, or given a bad value, is refused', async () => {
    const unknownType = await postGraphQL(sim.url, TOKEN, 'query ($n: Number) { viewer { login } }');
    expect(unknownType.body.errors?.map((e) => e.message)).toContain(
      "Number isn't a defined input type (on $n)",
    );
    const badValue = await postGraphQL(
      sim.url,
      TOKEN,
      'query ($n: Int!) { repository(owner: "acme", name: "api") { issue(number: $n) { title } } }',
      { n: 'one' },
    );
    expect(badValue.body.errors?.[0]).toMatchObject({
      message: 'Variable $n of type Int! was provided invalid value',
      extensions: { value: 'one' },
    });
    const missing = await postGraphQL(
      sim.url,
      TOKEN,
      'query ($n: Int!) { repository(owner: "acme", name: "api") { issue(number: $n) { title } } }',
    );
    expect(missing.body.errors?.[0]).toMatchObject({
      message: 'Variable $n of type Int! was provided invalid value',
      extensions: { value: null, problems: [{ path: [], explanation: 'Expected value to not be null' }] },
    });
  });

  test('a syntax error is a parse error naming the token and where it is', async () => {
    const reply = await postGraphQL(sim.url, TOKEN, '{ viewer { login } } }');
    expect(reply.body).toEqual({
      errors: [{ message: 'Parse error on "}" (RCURLY) at [1, 22]', locations: [{ line: 1, column: 22 }] }],
    });
    const truncated = await postGraphQL(sim.url, TOKEN, '{ viewer { login }');
    expect(truncated.body.errors?.[0]?.message).toBe('Unexpected end of document');
  });

  test('a body that is not JSON, or has no query, is a 400', async () => {
    const notJson = await fetch(`${sim.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `bearer ${TOKEN}` },
      body: '{"query": ',
    });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ message: 'Problems parsing JSON' });
    const noQuery = await fetch(`${sim.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `bearer ${TOKEN}` },
      body: JSON.stringify({ variables: {} }),
    });
    expect(noQuery.status).toBe(400);
  });
});

describe('resolving GitHub objects', () => {
  test('repository, issue, pull request and their fields come from the world', async () => {
    const reply = await postGraphQL<{
      repository: Record<string, unknown> & {
        issue: Record<string, unknown>;
        pullRequest: Record<string, unknown>;
        either: { __typename: string; number: number };
      };
    }>(
      sim.url,
      TOKEN,
      `query { repository(owner: "acme", name: "api") {
        id nameWithOwner url defaultBranchRef { name } labels(first: 10) { totalCount nodes { name color } }
        issue(number: 1) { number title body state stateReason url author { login }
          labels(first: 5) { totalCount nodes { name } } assignees(first: 5) { nodes { login } }
          milestone { title number } repository { nameWithOwner }
          comments(last: 1) { totalCount nodes { author { login } body createdAt } }
          closedByPullRequestsReferences(first: 5) { nodes { number } } }
        pullRequest(number: 2) { number isDraft headRefName baseRefName headRefOid mergeable mergeStateStatus
          additions deletions changedFiles merged mergedAt reviewDecision author { __typename login }
          closingIssuesReferences(first: 5) { nodes { number } }
          commits(last: 1) { nodes { commit { oid statusCheckRollup { state } } } } }
        either: issueOrPullRequest(number: 2) { __typename ... on PullRequest { number } }
      } }`,
    );
    expect(reply.body.errors).toBeUndefined();
    const repo = reply.body.data!.repository;
    expect(repo).toMatchObject({
      nameWithOwner: 'acme/api',
      url: 'https://github.com/acme/api',
      defaultBranchRef: { name: 'trunk' },
      labels: {
        totalCount: 2,
        nodes: [
          { name: 'agent-ready', color: '0e8a16' },
          { name: 'bug', color: 'ededed' },
        ],
      },
    });
    expect(repo.issue).toMatchObject({
      number: 1,
      title: 'Crash on start',
      body: 'It crashes.',
      state: 'OPEN',
      stateReason: null,
      url: 'https://github.com/acme/api/issues/1',
      author: { login: 'bob' },
      labels: { totalCount: 2, nodes: [{ name: 'agent-ready' }, { name: 'bug' }] },
      assignees: { nodes: [{ login: 'alice' }] },
      milestone: { title: 'v1', number: 1 },
      repository: { nameWithOwner: 'acme/api' },
      comments: { totalCount: 2, nodes: [{ author: { login: 'octocat' }, body: 'Me too' }] },
      closedByPullRequestsReferences: { nodes: [{ number: 2 }] },
    });
    expect(repo.pullRequest).toMatchObject({
      number: 2,
      isDraft: false,
      headRefName: 'dependabot/npm/lodash',
      baseRefName: 'trunk',
      mergeable: 'MERGEABLE',
      mergeStateStatus: 'CLEAN',
      additions: 10,
      deletions: 2,
      changedFiles: 1,
      merged: false,
      mergedAt: null,
      reviewDecision: 'REVIEW_REQUIRED',
      author: { __typename: 'Bot', login: 'dependabot' },
      closingIssuesReferences: { nodes: [{ number: 1 }] },
      commits: { nodes: [{ commit: { statusCheckRollup: { state: 'FAILURE' } } }] },
    });
    expect(repo.pullRequest.headRefOid).toMatch(/^[0-9a-f]{40}$/);
    expect(repo.either).toEqual({ __typename: 'PullRequest', number: 2 });
  });

  test('what does not exist is null with a NOT_FOUND error, and the rest still resolves', async () => {
    const reply = await postGraphQL(
      sim.url,
      TOKEN,
      '{ a: repository(owner: "acme", name: "api") { issue(number: 2) { id } nameWithOwner } b: repository(owner: "acme", name: "gone") { id } }',
    );
    expect(reply.body.data).toEqual({ a: { issue: null, nameWithOwner: 'acme/api' }, b: null });
    expect(reply.body.errors).toEqual([
      expect.objectContaining({
        type: 'NOT_FOUND',
        path: ['a', 'issue'],
        message: 'Could not resolve to an Issue with the number of 2.',
      }),
      expect.objectContaining({
        type: 'NOT_FOUND',
        path: ['b'],
        message: "Could not resolve to a Repository with the name 'acme/gone'.",
      }),
    ]);
  });

  test('node and nodes find issues and pull requests by global id', async () => {
    const issue = sim.world.issue('acme/api', 1)!;
    const pr = sim.world.pullRequest('acme/api', 2)!;
    const reply = await postGraphQL<{ node: unknown; nodes: unknown[] }>(
      sim.url,
      TOKEN,
      'query ($id: ID!, $ids: [ID!]!) { node(id: $id) { ... on Issue { title } } nodes(ids: $ids) { __typename ... on PullRequest { number } } }',
      { id: issue.id, ids: [pr.id, 'I_nonsense'] },
    );
    expect(reply.body.data).toEqual({
      node: { title: 'Crash on start' },
      nodes: [{ __typename: 'PullRequest', number: 2 }, null],
    });
    expect(reply.body.errors?.[0]).toMatchObject({ type: 'NOT_FOUND', path: ['nodes', 1] });
  });

  test('a field the simulator does not model fails loudly instead of answering null', async () => {
    const reply = await postGraphQL(
      sim.url,
      TOKEN,
      '{ repository(owner: "acme", name: "api") { issue(number: 1) { title reactionGroups { content } } } }',
    );
    expect(reply.body.errors?.[0]).toMatchObject({
      type: 'SIMULATOR_UNSUPPORTED',
      path: ['repository', 'issue', 'reactionGroups'],
    });
  });
});

describe('connections', () => {
  const SEARCH = `query ($q: String!, $first: Int, $after: String, $last: Int, $before: String) {
    search(type: ISSUE, query: $q, first: $first, after: $after, last: $last, before: $before) {
      issueCount pageInfo { hasNextPage endCursor hasPreviousPage startCursor }
      edges { cursor node { ... on Issue { number } } } } }`;
  type Page = {
    search: {
      issueCount: number;
      pageInfo: {
        hasNextPage: boolean;
        endCursor: string | null;
        hasPreviousPage: boolean;
        startCursor: string | null;
      };
      edges: { cursor: string; node: { number: number } }[];
    };
  };

  test('more than 100 records on a connection is refused with GitHub message', async () => {
    const reply = await postGraphQL(sim.url, TOKEN, SEARCH, { q: 'repo:acme/many', first: 101 });
    expect(reply.body).toEqual({
      errors: [
        expect.objectContaining({
          type: 'EXCESSIVE_PAGINATION',
          path: ['search'],
          message:
            'Requesting 101 records on the `search` connection exceeds the `first` limit of 100 records.',
        }),
      ],
    });
  });

  test('a connection that lists nodes needs first or last; counting it does not', async () => {
    const listing = await postGraphQL(
      sim.url,
      TOKEN,
      '{ repository(owner: "acme", name: "api") { issue(number: 1) { labels { nodes { name } } } } }',
    );
    expect(listing.body.errors?.[0]).toMatchObject({
      type: 'MISSING_PAGINATION_BOUNDARIES',
      path: ['repository', 'issue', 'labels'],
      message: 'You must provide a `first` or `last` value to properly paginate the `labels` connection.',
    });
    const counting = await postGraphQL(
      sim.url,
      TOKEN,
      '{ repository(owner: "acme", name: "api") { issue(number: 1) { labels { totalCount } } } }',
    );
    expect(counting.body).toEqual({ data: { repository: { issue: { labels: { totalCount: 2 } } } } });
  });

  test('cursors page through more than 100 results, forwards and backwards, without gaps', async () => {
    const seen: number[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const reply: { body: { data?: Page | null } } = await postGraphQL<Page>(sim.url, TOKEN, SEARCH, {
        q: 'repo:acme/many sort:created-asc',
        first: 100,
        after,
      });
      const page = reply.body.data!.search;
      seen.push(...page.edges.map((e) => e.node.number));
      pages += 1;
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor);
      if (pages === 3) break;
      expect(page.pageInfo.hasNextPage).toBe(true);
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    // `after` is still the end of page two: the two records before it are 198 and 199.
    const back = await postGraphQL<Page>(sim.url, TOKEN, SEARCH, {
      q: 'repo:acme/many sort:created-asc',
      last: 2,
      before: after,
    });
    expect(back.body.data!.search.edges.map((e) => e.node.number)).toEqual([198, 199]);
    expect(back.body.data!.search.pageInfo.hasPreviousPage).toBe(true);
  });

  test('a search serves at most 1,000 results while issueCount reports them all', async () => {
    let after: string | null = null;
    let served = 0;
    let last: Page['search'] | undefined;
    for (let i = 0; i < 10; i += 1) {
      const reply: { body: { data?: Page | null } } = await postGraphQL<Page>(sim.url, TOKEN, SEARCH, {
        q: 'repo:acme/many',
        first: 100,
        after,
      });
      last = reply.body.data!.search;
      served += last.edges.length;
      after = last.pageInfo.endCursor;
    }
    expect(last?.issueCount).toBe(1050);
    expect(served).toBe(1000);
    expect(last?.pageInfo.hasNextPage).toBe(false);
    const beyond = await postGraphQL<Page>(sim.url, TOKEN, SEARCH, {
      q: 'repo:acme/many',
      first: 100,
      after,
    });
    expect(beyond.body.data!.search.edges).toEqual([]);
  });

  test('a cursor the server never issued is refused', async () => {
    const reply = await postGraphQL(sim.url, TOKEN, SEARCH, {
      q: 'repo:acme/many',
      first: 5,
      after: 'bm9wZQ==',
    });
    expect(reply.body.errors?.[0]).toMatchObject({
      type: 'INVALID_CURSOR_ARGUMENTS',
      message: '`bm9wZQ==` does not appear to be a valid cursor.',
    });
  });
});
