import { parse } from 'graphql';
import { afterEach, describe, expect, test } from 'vitest';
import { analyzeOperation } from './cost.js';
import { githubSchema } from './schema.js';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

const TOKEN = 'rate-token';

function world(): SimWorld {
  const w = new SimWorld();
  w.addRepo('acme/api');
  w.addToken(TOKEN, 'alice');
  w.addIssue('acme/api', { title: 'One', labels: ['bug'] });
  return w;
}

/** A discovery-style search: one connection of 100 with three nested connections. */
const DISCOVERY = `query { rateLimit { cost remaining used limit resetAt nodeCount }
  search(type: ISSUE, query: "repo:acme/api", first: 100) { nodes { ... on Issue {
    labels(first: 10) { nodes { name } } assignees(first: 10) { nodes { login } }
    comments(last: 5) { nodes { body } } } } } }`;

function costOf(query: string): ReturnType<typeof analyzeOperation> {
  const document = parse(query);
  const operation = document.definitions[0];
  if (operation?.kind !== 'OperationDefinition') throw new Error('no operation');
  return analyzeOperation(githubSchema(), document, operation, {});
}

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('query cost', () => {
  test("GitHub's documented example costs 51 points and may return 305,100 nodes", () => {
    const analysis = costOf(`query { viewer { login repositories(first: 100) { edges { node { id
      issues(first: 50) { edges { node { id labels(first: 60) { edges { node { id name } } } } } } } } } } }`);
    expect(analysis.requests).toBe(5101);
    expect(analysis.cost).toBe(51);
    expect(analysis.nodeCount).toBe(305_100);
  });

  test('a query that could return more than 500,000 nodes is refused before it runs', () => {
    const analysis = costOf(`{ search(type: ISSUE, query: "x", first: 100) { nodes { ... on Issue {
      comments(first: 100) { nodes { reactions(first: 100) { nodes { id } } } } } } } }`);
    expect(analysis.errors).toEqual([
      {
        type: 'MAX_NODE_LIMIT_EXCEEDED',
        message:
          'This query requests up to 1,010,100 possible nodes which exceeds the maximum limit of 500,000.',
      },
    ]);
  });

  test('a query without connections still costs one point', () => {
    expect(costOf('{ viewer { login } }').cost).toBe(1);
  });

  test('nested connections under a search of 100 cost 1 + 3 × 100 requests, three points', async () => {
    sim = await startSimulator({ world: world() });
    const reply = await postGraphQL<{ rateLimit: Record<string, unknown> }>(sim.url, TOKEN, DISCOVERY);
    expect(reply.body.data?.rateLimit).toMatchObject({ cost: 3, used: 3, remaining: 4997, limit: 5000 });
    expect(reply.body.data?.rateLimit.nodeCount).toBe(100 + 100 * 10 + 100 * 10 + 100 * 5);
    expect(sim.requests.at(-1)?.cost).toBe(3);
  });

  test('rateLimit(dryRun: true) reports the cost (1 + 100 + 100 × 100 requests) without spending it', async () => {
    sim = await startSimulator({ world: world() });
    const reply = await postGraphQL<{ rateLimit: { cost: number; remaining: number } }>(
      sim.url,
      TOKEN,
      `{ rateLimit(dryRun: true) { cost remaining } search(type: ISSUE, query: "x", first: 100) { nodes { ... on Issue {
        comments(first: 100) { nodes { reactions(first: 10) { totalCount } } } } } } }`,
    );
    expect(reply.body.data?.rateLimit).toEqual({ cost: 101, remaining: 5000 });
    expect(reply.headers.get('x-ratelimit-used')).toBe('0');
  });
});

describe('budget and headers', () => {
  test('every response carries x-ratelimit-* headers, and remaining falls by each query cost', async () => {
    let clock = Date.UTC(2026, 2, 1, 12, 0, 0);
    sim = await startSimulator({ world: world(), now: () => clock });
    const first = await postGraphQL(sim.url, TOKEN, DISCOVERY);
    clock += 60_000;
    const second = await postGraphQL(sim.url, TOKEN, DISCOVERY);
    expect(first.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(first.headers.get('x-ratelimit-resource')).toBe('graphql');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('4997');
    expect(first.headers.get('x-ratelimit-used')).toBe('3');
    expect(second.headers.get('x-ratelimit-remaining')).toBe('4994');
    expect(second.headers.get('x-ratelimit-used')).toBe('6');
    // The window opened with the first request and lasts an hour.
    const reset = String((Date.UTC(2026, 2, 1, 12, 0, 0) + 3_600_000) / 1000);
    expect(first.headers.get('x-ratelimit-reset')).toBe(reset);
    expect(second.headers.get('x-ratelimit-reset')).toBe(reset);
    expect((second.body.data as { rateLimit: { resetAt: string } }).rateLimit.resetAt).toBe(
      '2026-03-01T13:00:00Z',
    );
  });

  test('an exhausted budget answers RATE_LIMITED with remaining 0 until the window resets', async () => {
    let clock = Date.UTC(2026, 2, 1, 12, 0, 0);
    sim = await startSimulator({ world: world(), now: () => clock, rateLimits: { graphql: 2 } });
    await postGraphQL(sim.url, TOKEN, '{ viewer { login } }');
    await postGraphQL(sim.url, TOKEN, '{ viewer { login } }');
    const refused = await postGraphQL(sim.url, TOKEN, '{ viewer { login } }');
    expect(refused.status).toBe(200);
    expect(refused.body).toEqual({
      errors: [
        {
          type: 'RATE_LIMITED',
          message: expect.stringMatching(/^API rate limit exceeded for user ID \d+\.$/),
        },
      ],
    });
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('x-ratelimit-reset')) * 1000).toBeGreaterThan(clock);
    clock += 3_600_000;
    const again = await postGraphQL(sim.url, TOKEN, '{ viewer { login } }');
    expect(again.body.data).toEqual({ viewer: { login: 'alice' } });
    expect(again.headers.get('x-ratelimit-remaining')).toBe('1');
  });

  test('the exhausted GraphQL answer can be a 403, as GitHub sometimes sends', async () => {
    sim = await startSimulator({ world: world(), rateLimits: { graphql: 1 }, graphqlRateLimitedStatus: 403 });
    sim.rateLimits.graphql.setUsed('alice', 1);
    const refused = await postGraphQL(sim.url, TOKEN, '{ viewer { login } }');
    expect(refused.status).toBe(403);
    expect(refused.body.errors?.[0]?.type).toBe('RATE_LIMITED');
  });

  test('REST spends the core budget one request at a time and answers 403 when it is gone', async () => {
    sim = await startSimulator({ world: world(), rateLimits: { core: 2 } });
    const headers = { authorization: `token ${TOKEN}` };
    const one = await fetch(`${sim.url}/user`, { headers });
    const two = await fetch(`${sim.url}/user`, { headers });
    const three = await fetch(`${sim.url}/user`, { headers });
    expect(one.headers.get('x-ratelimit-resource')).toBe('core');
    expect([one, two, three].map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['1', '0', '0']);
    expect(three.status).toBe(403);
    expect(((await three.json()) as { message: string }).message).toMatch(
      /^API rate limit exceeded for user ID/,
    );
    const budget = await fetch(`${sim.url}/rate_limit`, { headers });
    expect(await budget.json()).toMatchObject({
      resources: { core: { limit: 2, used: 2, remaining: 0 }, graphql: { limit: 5000, used: 0 } },
    });
  });
});
