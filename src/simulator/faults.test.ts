import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

const TOKEN = 'fault-token';
const VIEWER = 'query Viewer { viewer { login } }';
const SEARCH = 'query Search { search(type: ISSUE, query: "repo:acme/api", first: 5) { issueCount } }';
let sim: Simulator;

beforeAll(async () => {
  const world = new SimWorld();
  world.addRepo('acme/api');
  world.addToken(TOKEN, 'alice');
  world.addIssue('acme/api', { title: 'One' });
  sim = await startSimulator({ world });
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  sim.faults.clear();
  sim.resetRequests();
});

async function control(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${sim.url}/_simulator/${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe('fault kinds', () => {
  test('a 502 hits once, with GitHub "something went wrong" body, then service resumes', async () => {
    sim.faults.add({ kind: 'status', status: 502 });
    const failed = await postGraphQL(sim.url, TOKEN, VIEWER);
    expect(failed.status).toBe(502);
    expect(failed.body.errors?.[0]?.message).toMatch(/^Something went wrong while executing your query/);
    const ok = await postGraphQL(sim.url, TOKEN, VIEWER);
    expect(ok.body.data).toEqual({ viewer: { login: 'alice' } });
    expect(sim.requests.map((r) => [r.status, r.fault])).toEqual([
      [502, 'status'],
      [200, null],
    ]);
  });

  test('a secondary rate limit answers 429 or 403 with Retry-After and GitHub message', async () => {
    sim.faults.add({ kind: 'secondary-rate-limit', status: 429, retryAfterSeconds: 7 });
    sim.faults.add({ kind: 'secondary-rate-limit' });
    const first = await fetch(`${sim.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `bearer ${TOKEN}` },
      body: JSON.stringify({ query: VIEWER }),
    });
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('7');
    expect(((await first.json()) as { message: string }).message).toMatch(/exceeded a secondary rate limit/);
    const second = await fetch(`${sim.url}/user`, { headers: { authorization: `token ${TOKEN}` } });
    expect(second.status).toBe(403);
    expect(second.headers.get('retry-after')).toBe('60');
  });

  test('a primary rate limit reports remaining 0 and a reset in the future', async () => {
    const before = Math.floor(Date.now() / 1000);
    sim.faults.add({ kind: 'primary-rate-limit', resetInSeconds: 120 });
    sim.faults.add({ kind: 'primary-rate-limit', match: { path: '/user' } });
    const graphql = await postGraphQL(sim.url, TOKEN, VIEWER);
    expect(graphql.status).toBe(200);
    expect(graphql.body.errors?.[0]?.type).toBe('RATE_LIMITED');
    expect(graphql.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(graphql.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(before + 120);
    const rest = await fetch(`${sim.url}/user`, { headers: { authorization: `token ${TOKEN}` } });
    expect(rest.status).toBe(403);
    expect(rest.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(((await rest.json()) as { message: string }).message).toMatch(
      /^API rate limit exceeded for user ID/,
    );
  });

  test('a slow response arrives late but whole', async () => {
    sim.faults.add({ kind: 'slow', delayMs: 300 });
    const started = Date.now();
    const reply = await postGraphQL(sim.url, TOKEN, VIEWER);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(reply.body.data).toEqual({ viewer: { login: 'alice' } });
  });

  test('malformed JSON is a 200 whose body does not parse', async () => {
    sim.faults.add({ kind: 'malformed-json' });
    const response = await fetch(`${sim.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `bearer ${TOKEN}` },
      body: JSON.stringify({ query: SEARCH }),
    });
    expect(response.status).toBe(200);
    await expect(response.json()).rejects.toThrow();
  });

  test('a reset connection fails the request at the network level', async () => {
    sim.faults.add({ kind: 'reset-connection' });
    await expect(postGraphQL(sim.url, TOKEN, VIEWER)).rejects.toThrow();
    const ok = await postGraphQL(sim.url, TOKEN, VIEWER);
    expect(ok.status).toBe(200);
  });
});

describe('fault matching and counts', () => {
  test('a fault matched by operation name leaves other operations alone', async () => {
    sim.faults.add({ kind: 'status', status: 503, match: { operationName: 'Search' }, times: 2 });
    expect((await postGraphQL(sim.url, TOKEN, VIEWER)).status).toBe(200);
    expect((await postGraphQL(sim.url, TOKEN, SEARCH)).status).toBe(503);
    expect((await postGraphQL(sim.url, TOKEN, SEARCH)).status).toBe(503);
    expect((await postGraphQL(sim.url, TOKEN, SEARCH)).status).toBe(200);
  });

  test('"always" keeps failing until the faults are cleared', async () => {
    sim.faults.add({ kind: 'status', status: 500, times: 'always', match: { path: '/repos/*' } });
    const headers = { authorization: `token ${TOKEN}` };
    for (let i = 0; i < 3; i += 1)
      expect((await fetch(`${sim.url}/repos/acme/api`, { headers })).status).toBe(500);
    expect((await fetch(`${sim.url}/user`, { headers })).status).toBe(200);
    sim.faults.clear();
    expect((await fetch(`${sim.url}/repos/acme/api`, { headers })).status).toBe(200);
  });
});

describe('control API over HTTP', () => {
  test('faults are queued, listed and cleared over HTTP', async () => {
    const queued = await control('POST', 'faults', [
      { kind: 'status', status: 502 },
      { kind: 'slow', delayMs: 10, times: 3 },
    ]);
    expect(await queued.json()).toEqual({ pending: 2 });
    expect((await postGraphQL(sim.url, TOKEN, VIEWER)).status).toBe(502);
    const listed = (await (await control('GET', 'faults')).json()) as { left: number }[];
    expect(listed.map((f) => f.left)).toEqual([3]);
    expect((await control('DELETE', 'faults')).status).toBe(204);
    expect(sim.faults.pending).toEqual([]);
    const refused = await control('POST', 'faults', { kind: 'earthquake' });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(
      /unknown fault kind "earthquake"/,
    );
  });

  test('the request log records operation, query, variables, cost and status, and can be reset', async () => {
    await postGraphQL(
      sim.url,
      TOKEN,
      'query Find($q: String!) { search(type: ISSUE, query: $q, first: 5) { issueCount } }',
      {
        q: 'repo:acme/api',
      },
    );
    const log = (await (await control('GET', 'requests')).json()) as Record<string, unknown>[];
    expect(log).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/graphql',
        operationName: 'Find',
        variables: { q: 'repo:acme/api' },
        cost: 1,
        status: 200,
      }),
    ]);
    expect(String(log[0]?.query)).toContain('query Find');
    expect((await control('POST', 'reset-requests')).status).toBe(204);
    expect(sim.requests).toEqual([]);
  });

  test('issues can be created and closed over HTTP, and search sees it', async () => {
    const created = await control('POST', 'issues', {
      repo: 'acme/api',
      title: 'From e2e',
      labels: ['agent-ready'],
    });
    expect(created.status).toBe(201);
    const { number } = (await created.json()) as { number: number };
    const query =
      '{ search(type: ISSUE, query: "repo:acme/api is:open label:agent-ready", first: 5) { issueCount } }';
    expect((await postGraphQL(sim.url, TOKEN, query)).body.data).toEqual({ search: { issueCount: 1 } });
    const closed = await control('POST', 'issues/close', { repo: 'acme/api', number });
    expect(await closed.json()).toMatchObject({ number, state: 'CLOSED', stateReason: 'COMPLETED' });
    expect((await postGraphQL(sim.url, TOKEN, query)).body.data).toEqual({ search: { issueCount: 0 } });
    const wrong = await control('POST', 'issues/close', { repo: 'acme/api', number: 999 });
    expect(wrong.status).toBe(400);
  });
});
