import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../core/clock.js';
import {
  GitHubAuthError,
  GitHubGraphQLError,
  GitHubRateLimitError,
  GitHubRequestError,
  GitHubTransientError,
} from '../core/errors.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { createGitHubClient, type GitHubClient, type GitHubClientOptions, graphqlUrlFor } from './client.js';
import { VIEWER } from './operations.js';
import { staticTokenSource } from './token.js';

const TOKEN = 'client-token';
const START = Date.UTC(2026, 0, 1);
let clock: FakeClock;
let sim: Simulator;

/** The simulator's rate-limit windows and `x-ratelimit-reset` follow the test's fake clock. */
let now = START;

beforeAll(async () => {
  const world = new SimWorld();
  world.addToken(TOKEN, 'alice');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'One' });
  sim = await startSimulator({ world, now: () => now });
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  sim.faults.clear();
  sim.resetRequests();
  sim.rateLimits.graphql.reset();
  sim.rateLimits.core.reset();
  clock = new FakeClock(START);
  now = START;
});

function clientFor(options: Partial<GitHubClientOptions> = {}): GitHubClient {
  return createGitHubClient({
    apiUrl: sim.url,
    tokens: staticTokenSource(TOKEN),
    clock,
    random: () => 0.5,
    ...options,
  });
}

/**
 * Until the simulator has answered every request it received: a request the client abandoned (a
 * slow response) is still charged to the rate-limit window when it is handled, and must not land
 * in the next test's fresh window.
 */
async function simulatorSettled(): Promise<void> {
  const deadline = Date.now() + 5000;
  while (sim.requests.some((r) => r.fault === 'slow' && r.status === 0)) {
    if (Date.now() > deadline) throw new Error('the simulator still handles an abandoned request');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Keeps the simulator's clock on the fake clock while time moves. */
async function advance(ms: number): Promise<void> {
  const target = clock.now() + ms;
  now = target;
  await clock.set(target);
}

/** Waits (in real time, briefly) until the code under test sleeps on the fake clock or settles. */
async function untilSleepingOrDone(done: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && clock.pending === 0 && !done(); i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Runs `promise` to the end, letting every wait on the fake clock finish as soon as it starts. */
async function settle<T>(promise: Promise<T>): Promise<T> {
  let done = false;
  const watched = promise.finally(() => {
    done = true;
  });
  watched.catch(() => undefined);
  while (!done) {
    await untilSleepingOrDone(() => done);
    if (clock.pending > 0) await advance(Math.max(...clock.sleeps.slice(-clock.pending), 0));
  }
  return watched;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await settle(promise);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the request to fail');
}

describe('transient failures', () => {
  it('500, 502 and 503 in a row: retried with growing jittered backoff, then it succeeds', async () => {
    sim.faults.add({ kind: 'status', status: 500 });
    sim.faults.add({ kind: 'status', status: 502 });
    sim.faults.add({ kind: 'status', status: 503 });
    const client = clientFor();
    const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
    expect(result.data.viewer.login).toBe('alice');
    expect(sim.requests.map((r) => r.status)).toEqual([500, 502, 503, 200]);
    expect(client.stats).toMatchObject({ requests: 4, retries: 3 });
    // Backoff bases 1 s, 2 s, 4 s; with the random source pinned at 0.5 each wait is 3/4 of its base.
    expect(clock.sleeps).toEqual([750, 1500, 3000]);
  });

  it('GitHub failing inside a 200 (no data, a bare message) is retried like a 5xx', async () => {
    sim.faults.add({ kind: 'status', status: 200, match: { path: '/graphql' } });
    const client = clientFor();
    const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
    expect(result.data.viewer.login).toBe('alice');
    expect(sim.requests.map((r) => r.status)).toEqual([200, 200]);
    expect(client.stats).toMatchObject({ requests: 2, retries: 1 });
  });

  it('the jitter follows the random source', async () => {
    sim.faults.add({ kind: 'status', status: 502, times: 2 });
    const client = clientFor({ random: () => 0 });
    await settle(client.graphql(VIEWER));
    expect(clock.sleeps).toEqual([500, 1000]);
  });

  it("a 502 that does not go away fails with GitHubTransientError and the seed's message", async () => {
    sim.faults.add({ kind: 'status', status: 502, times: 'always' });
    const client = clientFor();
    const error = await failure(client.graphql(VIEWER));
    expect(error).toBeInstanceOf(GitHubTransientError);
    expect(error.message).toBe('GitHub GraphQL temporarily failed with status 502');
    expect((error as GitHubTransientError).status).toBe(502);
    expect(sim.requests).toHaveLength(4);
    expect(client.stats.retries).toBe(3);
  });

  it('maxAttempts bounds the attempts', async () => {
    sim.faults.add({ kind: 'status', status: 500, times: 'always' });
    const error = await failure(clientFor({ maxAttempts: 2 }).graphql(VIEWER));
    expect(error).toBeInstanceOf(GitHubTransientError);
    expect(sim.requests).toHaveLength(2);
  });

  it('a response slower than requestTimeoutMs is abandoned and retried', async () => {
    // Real time here (the deadline is a real timer), kept well under a second.
    sim.faults.add({ kind: 'slow', delayMs: 800 });
    const client = clientFor({ requestTimeoutMs: 300 });
    const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
    expect(result.data.viewer.login).toBe('alice');
    expect(client.stats.retries).toBe(1);
    expect(sim.requests).toHaveLength(2);
    await simulatorSettled();
  });

  it('responses that stay slow fail with GitHubTransientError', async () => {
    sim.faults.add({ kind: 'slow', delayMs: 300, times: 'always' });
    const client = clientFor({ requestTimeoutMs: 40, maxAttempts: 2 });
    const error = await failure(client.graphql(VIEWER));
    expect(error).toBeInstanceOf(GitHubTransientError);
    expect(error.message).toBe('GitHub request failed: timed out after 40 ms');
    expect(client.stats.requests).toBe(2);
    await simulatorSettled();
  });

  it('a dropped connection is retried', async () => {
    sim.faults.add({ kind: 'reset-connection' });
    const client = clientFor();
    const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
    expect(result.data.viewer.login).toBe('alice');
    expect(client.stats.retries).toBe(1);
  });

  it('malformed JSON is retried, then recovers', async () => {
    sim.faults.add({ kind: 'malformed-json' });
    const client = clientFor();
    const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
    expect(result.data.viewer.login).toBe('alice');
    expect(sim.requests.map((r) => r.fault)).toEqual(['malformed-json', null]);
  });

  it('malformed JSON that persists fails with "GitHub GraphQL returned non-JSON output"', async () => {
    sim.faults.add({ kind: 'malformed-json', times: 'always' });
    const client = clientFor();
    const error = await failure(client.graphql(VIEWER));
    expect(error).toBeInstanceOf(GitHubTransientError);
    expect(error.message).toBe('GitHub GraphQL returned non-JSON output');
    expect(sim.requests).toHaveLength(4);
  });

  it('REST calls are retried the same way', async () => {
    sim.faults.add({ kind: 'status', status: 503, match: { path: '/user' } });
    const client = clientFor();
    const user = await settle(client.rest<{ login: string }>('GET', '/user'));
    expect(user.login).toBe('alice');
    expect(sim.requests.map((r) => [r.path, r.status])).toEqual([
      ['/user', 503],
      ['/user', 200],
    ]);
  });
});

describe('rate limits', () => {
  it('a 429 with Retry-After: 7 waits 7 s on the injected clock before trying again', async () => {
    sim.faults.add({ kind: 'secondary-rate-limit', status: 429, retryAfterSeconds: 7 });
    const client = clientFor();
    let done = false;
    const pending = client.graphql<{ viewer: { login: string } }>(VIEWER).finally(() => {
      done = true;
    });
    await untilSleepingOrDone(() => done);
    expect(clock.sleeps).toEqual([7000]);
    await advance(6999);
    expect(done).toBe(false);
    expect(sim.requests).toHaveLength(1);
    await advance(1);
    const result = await pending;
    expect(result.data.viewer.login).toBe('alice');
    expect(sim.requests.map((r) => r.status)).toEqual([429, 200]);
    expect(client.stats.waitedMs).toBe(7000);
  });

  it('a 403 secondary rate limit waits for its Retry-After too', async () => {
    sim.faults.add({ kind: 'secondary-rate-limit', status: 403, retryAfterSeconds: 30 });
    const client = clientFor();
    const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
    expect(result.data.viewer.login).toBe('alice');
    expect(clock.sleeps).toEqual([30_000]);
    expect(sim.requests.map((r) => r.status)).toEqual([403, 200]);
  });

  it('a secondary limit longer than maxRateLimitWaitMs fails with GitHubRateLimitError', async () => {
    sim.faults.add({ kind: 'secondary-rate-limit', status: 429, retryAfterSeconds: 600 });
    const error = await failure(clientFor({ maxRateLimitWaitMs: 60_000 }).graphql(VIEWER));
    expect(error).toBeInstanceOf(GitHubRateLimitError);
    expect((error as GitHubRateLimitError).resetAt?.getTime()).toBe(START + 600_000);
    expect(clock.sleeps).toEqual([]);
  });

  it('an exhausted primary limit (GraphQL RATE_LIMITED) waits until x-ratelimit-reset', async () => {
    sim.faults.add({ kind: 'primary-rate-limit', resetInSeconds: 120 });
    const client = clientFor();
    const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
    expect(result.data.viewer.login).toBe('alice');
    expect(clock.sleeps).toHaveLength(1);
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(120_000);
    expect(clock.sleeps[0]).toBeLessThanOrEqual(122_000);
    expect(sim.requests).toHaveLength(2);
  });

  it('a budget spent by real use waits for the window to reset, then goes on', async () => {
    const client = clientFor();
    await settle(client.graphql(VIEWER));
    await advance(50 * 60_000);
    sim.rateLimits.graphql.setUsed('alice', 5000);
    const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
    expect(result.data.viewer.login).toBe('alice');
    // The window opened at START and resets an hour later; we were 50 minutes in (+1 s margin).
    expect(clock.sleeps).toEqual([10 * 60_000 + 1000]);
    expect(client.rateLimit()?.remaining).toBe(4999);
  });

  it('the primary limit answered with HTTP 403 waits the same way', async () => {
    const other = await startSimulator({ world: sim.world, now: () => now, graphqlRateLimitedStatus: 403 });
    try {
      other.faults.add({ kind: 'primary-rate-limit', resetInSeconds: 90 });
      const client = clientFor({ apiUrl: other.url });
      const result = await settle(client.graphql<{ viewer: { login: string } }>(VIEWER));
      expect(result.data.viewer.login).toBe('alice');
      expect(other.requests.map((r) => r.status)).toEqual([403, 200]);
      expect(clock.sleeps[0]).toBeGreaterThanOrEqual(90_000);
    } finally {
      await other.close();
    }
  });

  it('a reset beyond maxRateLimitWaitMs fails with GitHubRateLimitError carrying resetAt', async () => {
    sim.faults.add({ kind: 'primary-rate-limit', resetInSeconds: 3600 });
    const client = clientFor({ maxRateLimitWaitMs: 15 * 60_000 });
    const error = await failure(client.graphql(VIEWER));
    expect(error).toBeInstanceOf(GitHubRateLimitError);
    expect((error as GitHubRateLimitError).code).toBe('github_rate_limit');
    expect((error as GitHubRateLimitError).resetAt?.toISOString()).toBe('2026-01-01T01:00:00.000Z');
    expect(clock.sleeps).toEqual([]);
    expect(sim.requests).toHaveLength(1);
    // Known to be empty: the next call fails at once without spending a request.
    const again = await failure(client.graphql(VIEWER));
    expect(again).toBeInstanceOf(GitHubRateLimitError);
    expect(sim.requests).toHaveLength(1);
  });

  it('an exhausted GraphQL budget does not block REST calls, which have their own', async () => {
    sim.faults.add({ kind: 'primary-rate-limit', resetInSeconds: 3600 });
    const client = clientFor();
    expect(await failure(client.graphql(VIEWER))).toBeInstanceOf(GitHubRateLimitError);
    const user = await settle(client.rest<{ login: string }>('GET', '/user'));
    expect(user.login).toBe('alice');
    expect(clock.sleeps).toEqual([]);
  });

  it('reports the budget GitHub last announced', async () => {
    const client = clientFor();
    const result = await settle(client.graphql(VIEWER));
    expect(result.rateLimit).toMatchObject({ limit: 5000, remaining: 4999, used: 1, resource: 'graphql' });
    expect(result.rateLimit?.resetAt).toBe(START + 3_600_000);
  });
});

describe('errors that are not retried', () => {
  it('401: GitHubAuthError after one request', async () => {
    const client = clientFor({ tokens: staticTokenSource('not-a-known-token') });
    const error = await failure(client.graphql(VIEWER));
    expect(error).toBeInstanceOf(GitHubAuthError);
    expect(error.message).toContain('status 401');
    expect(error.message).toContain('Bad credentials');
    expect(error.message).toContain('gh auth login');
    expect(error.message).not.toContain('not-a-known-token');
    expect(sim.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('a misspelt field: GitHubGraphQLError with GitHub message, one request, no wait', async () => {
    const client = clientFor();
    const error = await failure(client.graphql('query Broken { viewer { logn } }'));
    expect(error).toBeInstanceOf(GitHubGraphQLError);
    expect((error as GitHubGraphQLError).errors.map((e) => e.message)).toEqual([
      "Field 'logn' doesn't exist on type 'User'",
    ]);
    expect(error.message).toBe("GitHub GraphQL error: Field 'logn' doesn't exist on type 'User'");
    expect(sim.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('a query error is never retried for its words: a field named timeout fails at once', async () => {
    const client = clientFor();
    const error = await failure(client.graphql('query Broken { viewer { timeout } }'));
    expect(error).toBeInstanceOf(GitHubGraphQLError);
    expect(error.message).toContain("Field 'timeout' doesn't exist");
    expect(sim.requests).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('a missing object (NOT_FOUND) is not retried', async () => {
    const client = clientFor();
    const error = await failure(client.graphql('query { repository(owner: "acme", name: "nope") { id } }'));
    expect(error).toBeInstanceOf(GitHubGraphQLError);
    expect((error as GitHubGraphQLError).errors[0]?.type).toBe('NOT_FOUND');
    expect(sim.requests).toHaveLength(1);
  });
});

describe('endpoints', () => {
  it('GraphQL lives at /graphql, or /api/graphql on GitHub Enterprise', () => {
    expect(graphqlUrlFor('https://api.github.com')).toBe('https://api.github.com/graphql');
    expect(graphqlUrlFor('https://ghe.example.com/api/v3/')).toBe('https://ghe.example.com/api/graphql');
  });

  it('authenticates as the token owner', async () => {
    await settle(clientFor().graphql(VIEWER));
    expect(sim.requests.map((r) => r.login)).toEqual(['alice']);
  });
});

describe('rate limits are told by status, headers and documentation_url, not by message text', () => {
  /** A server answering each request with the next canned answer (the last one repeats). */
  async function cannedServer(
    answers: { status: number; body: unknown; headers?: Record<string, string> }[],
  ): Promise<{ url: string; statuses: number[]; close(): Promise<void> }> {
    const { createServer } = await import('node:http');
    const statuses: number[] = [];
    const server = createServer((req, res) => {
      req.resume();
      const answer = answers[Math.min(statuses.length, answers.length - 1)]!;
      statuses.push(answer.status);
      res.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.headers ?? {}) });
      res.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return {
      url: `http://127.0.0.1:${address.port}`,
      statuses,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }
  const ok = { status: 200, body: { data: { viewer: { login: 'alice' } } } };

  it('a 403 without rate-limit headers whose documentation_url is the rate-limit page waits a minute', async () => {
    const server = await cannedServer([
      {
        status: 403,
        body: {
          message: 'Please slow down.',
          documentation_url:
            'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
        },
      },
      ok,
    ]);
    try {
      const result = await settle(
        clientFor({ apiUrl: server.url }).graphql<{ viewer: { login: string } }>(VIEWER),
      );
      expect(result.data.viewer.login).toBe('alice');
      expect(clock.sleeps).toEqual([60_000]);
      expect(server.statuses).toEqual([403, 200]);
    } finally {
      await server.close();
    }
  });

  it('a 403 that only says “rate limit” in its message is a refused request, not a wait', async () => {
    const server = await cannedServer([
      {
        status: 403,
        body: {
          message: 'rate limit policy forbids this',
          documentation_url: 'https://docs.github.com/rest',
        },
        headers: {
          'x-ratelimit-remaining': '4999',
          'x-ratelimit-limit': '5000',
          'x-ratelimit-reset': '1767229200',
        },
      },
    ]);
    try {
      const error = await failure(clientFor({ apiUrl: server.url }).graphql(VIEWER));
      expect(error).toBeInstanceOf(GitHubRequestError);
      expect(clock.sleeps).toEqual([]);
      expect(server.statuses).toEqual([403]);
    } finally {
      await server.close();
    }
  });
});

describe('connections', () => {
  // A 204's empty body must still be read: an unread answer keeps its connection busy (and the
  // process alive until the server drops it, 5 s and more after `curupira run` finished its work),
  // and the next request opens another connection instead of reusing it.
  it('a 204 answer frees its connection for the next request', async () => {
    const { createServer } = await import('node:http');
    let connections = 0;
    const server = createServer((_request, response) => {
      response.writeHead(204);
      response.end();
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const client = clientFor({ apiUrl: `http://127.0.0.1:${port}` });
      for (let i = 0; i < 3; i += 1) await client.rest('DELETE', '/repos/acme/api/issues/1/labels/x');
      expect(connections).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('conditional reads', () => {
  it('repeats a read with If-None-Match: an unchanged answer is free and the kept one; a change is read', async () => {
    const github = clientFor({ conditionalReads: 10 });
    const path = '/repos/acme/api/issues/1/comments';
    expect(await github.rest('GET', path)).toEqual([]);
    expect(await github.rest('GET', path)).toEqual([]);
    sim.world.addComment('acme/api', 1, { author: 'alice', body: 'a new comment' });
    const changed = await github.rest<{ body: string }[]>('GET', path);
    expect(changed.map((c) => c.body)).toEqual(['a new comment']);
    expect((await github.rest<{ body: string }[]>('GET', path)).map((c) => c.body)).toEqual([
      'a new comment',
    ]);
    const reads = sim.requests.filter((r) => r.path === path);
    expect(reads.map((r) => r.status)).toEqual([200, 304, 200, 304]);
    // GitHub does not count a 304 against the rate limit; neither does the simulator.
    expect(reads.map((r) => r.coreCost)).toEqual([1, 0, 1, 0]);
  });

  it('keeps the last N URLs only, and a client without the option never sends If-None-Match', async () => {
    const github = clientFor({ conditionalReads: 1 });
    await github.rest('GET', '/repos/acme/api/issues/1');
    await github.rest('GET', '/repos/acme/api/issues/1/comments');
    await github.rest('GET', '/repos/acme/api/issues/1');
    const plain = clientFor();
    await plain.rest('GET', '/repos/acme/api/issues/1');
    await plain.rest('GET', '/repos/acme/api/issues/1');
    expect(sim.requests.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });
});
