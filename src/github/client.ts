/**
 * The only module that talks HTTP to GitHub (over `httpFetch`, node:http and node:https; until
 * issue 31 through `@octokit/core`'s request layer, seven packages in every idle daemon). Retries and
 * waits are ours, on the injected clock, so tests can prove that a `Retry-After: N` waits N seconds
 * without sleeping: transient failures (5xx, network errors, timeouts, malformed JSON) retry with
 * jittered backoff; secondary limits wait for `Retry-After`; an exhausted primary budget waits for
 * `x-ratelimit-reset` (or fails with `GitHubRateLimitError` when that is too far away).
 */
import { type Clock, systemClock } from '../core/clock.js';
import {
  GitHubAuthError,
  GitHubGraphQLError,
  GitHubRateLimitError,
  GitHubRequestError,
  GitHubTransientError,
} from '../core/errors.js';
import { type Logger, redact, silentLogger } from '../log.js';
import { httpFetch } from './http-fetch.js';
import type { TokenSource } from './token.js';

export interface RateLimitInfo {
  limit: number;
  remaining: number;
  used: number;
  /** Epoch milliseconds. */
  resetAt: number;
  resource: string;
}

export interface GitHubClientOptions {
  /** REST base URL: `https://api.github.com`, `https://HOST/api/v3`, or a simulator. */
  apiUrl: string;
  tokens: TokenSource;
  clock?: Clock;
  log?: Logger;
  userAgent?: string;
  /** Attempts for transient failures, including the first (default 4). */
  maxAttempts?: number;
  /** Longest wait for a rate limit before giving up with GitHubRateLimitError (default 15 minutes). */
  maxRateLimitWaitMs?: number;
  /** Per-request deadline (default 30 s). */
  requestTimeoutMs?: number;
  /** Random source for jitter, 0..1 (tests pin it). */
  random?: () => number;
  /** Aborting ends every wait (rate limits, retries) and request at once: curupira is stopping. */
  signal?: AbortSignal;
  /**
   * Repeat REST reads as conditional requests: each GET answered with an ETag is kept (its last
   * `conditionalReads` URLs), the next GET of that URL sends `If-None-Match`, and a 304 (which
   * GitHub does not count against the rate limit) returns the kept answer. For a client that reads
   * the same things over and over (following open pull requests).
   */
  conditionalReads?: number;
}

/** Who hears every rate-limit state GitHub reports (telemetry counts the points, src/telemetry/). */
const rateLimitObservers = new Set<(rate: RateLimitInfo) => void>();

/** Calls `observer` with each rate-limit state any client reads from GitHub's headers; returns the undo. */
export function observeRateLimits(observer: (rate: RateLimitInfo) => void): () => void {
  rateLimitObservers.add(observer);
  return () => rateLimitObservers.delete(observer);
}

export interface GraphQLResult<T> {
  data: T;
  rateLimit: RateLimitInfo | undefined;
}

export interface ClientStats {
  requests: number;
  retries: number;
  waitedMs: number;
}

export interface GitHubClient {
  readonly apiUrl: string;
  readonly graphqlUrl: string;
  graphql<T>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<T>>;
  rest<T>(
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    path: string,
    body?: Record<string, unknown>,
  ): Promise<T>;
  /** `rest` with the answer's status and headers (the leases read GitHub's clock from `date`). */
  restResponse<T>(
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    path: string,
    body?: Record<string, unknown>,
  ): Promise<{ status: number; headers: Record<string, string>; data: T }>;
  /**
   * A GET with `If-None-Match: etag`: `changed: false` when GitHub answers 304 Not Modified, which
   * does not count against the rate limit; otherwise the answer's ETag for the next call.
   */
  conditionalGet(
    path: string,
    etag: string | undefined,
  ): Promise<{ changed: boolean; etag: string | undefined }>;
  /** The rate-limit state GitHub last reported. */
  rateLimit(): RateLimitInfo | undefined;
  readonly stats: ClientStats;
}

/** `https://HOST/api/v3` → `https://HOST/api/graphql`; anything else → `<url>/graphql`. */
export function graphqlUrlFor(apiUrl: string): string {
  const base = apiUrl.replace(/\/+$/, '');
  if (base.endsWith('/api/v3')) return `${base.slice(0, -'/v3'.length)}/graphql`;
  return `${base}/graphql`;
}

interface Attempt {
  status: number;
  headers: Record<string, string>;
  data: unknown;
}

class RetryableError extends Error {
  constructor(
    readonly final: Error,
    readonly waitMs: number | undefined,
  ) {
    super(final.message);
  }
}

function header(headers: Record<string, string>, name: string): string | undefined {
  return headers[name] ?? headers[name.toLowerCase()];
}

function parseRateLimit(headers: Record<string, string>): RateLimitInfo | undefined {
  const limit = header(headers, 'x-ratelimit-limit');
  const remaining = header(headers, 'x-ratelimit-remaining');
  const reset = header(headers, 'x-ratelimit-reset');
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return {
    limit: Number(limit),
    remaining: Number(remaining),
    used: Number(header(headers, 'x-ratelimit-used') ?? Number(limit) - Number(remaining)),
    resetAt: Number(reset) * 1000,
    resource: header(headers, 'x-ratelimit-resource') ?? 'core',
  };
}

/**
 * GitHub answers a rate limit with 429, or with 403 plus `retry-after` or `x-ratelimit-remaining: 0`;
 * a secondary limit may come with neither header, and then its body's `documentation_url` links to
 * the rate-limit documentation (a documented field, unlike the message wording).
 */
function pointsToRateLimits(data: unknown): boolean {
  if (typeof data !== 'object' || data === null || !('documentation_url' in data)) return false;
  const url = data.documentation_url;
  return typeof url === 'string' && /rate-limit/i.test(url);
}

function bodyText(data: unknown): string {
  if (typeof data === 'string') return data.slice(0, 500);
  try {
    return JSON.stringify(data).slice(0, 500);
  } catch {
    return String(data);
  }
}

function lowercased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/**
 * One HTTP exchange, answered whatever its status (the caller classifies it): `body` goes as JSON
 * (a GET or HEAD sends none); a JSON answer is parsed (kept as text when it does not parse), a 204, 205 or 304
 * has no data, anything else is text.
 */
async function exchange(
  method: string,
  url: string,
  json: Record<string, unknown> | undefined,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Attempt> {
  let body: string | undefined;
  if (json !== undefined && method !== 'GET' && method !== 'HEAD') {
    body = JSON.stringify(json);
    headers['content-type'] = 'application/json; charset=utf-8';
  }
  const response = await httpFetch(url, { method, headers, body, signal });
  const answer: Record<string, string> = {};
  for (const [name, value] of response.headers) answer[name] = value;
  const status = response.status;
  let data: unknown;
  if (status !== 204 && status !== 205 && status !== 304 && method !== 'HEAD') {
    const text = await response.text();
    if (/json/i.test(answer['content-type'] ?? '')) {
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
    } else data = text;
  } else {
    // Read even an empty body: an unread answer keeps its connection busy (no reuse, and the
    // process kept alive until the server drops the connection).
    await response.arrayBuffer();
  }
  return { status, headers: answer, data };
}

export function createGitHubClient(options: GitHubClientOptions): GitHubClient {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? silentLogger();
  const maxAttempts = options.maxAttempts ?? 4;
  const maxWait = options.maxRateLimitWaitMs ?? 15 * 60_000;
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const random = options.random ?? Math.random;
  const apiUrl = options.apiUrl.replace(/\/+$/, '');
  const graphqlUrl = graphqlUrlFor(apiUrl);
  const userAgent = options.userAgent ?? 'curupira';
  const stats: ClientStats = { requests: 0, retries: 0, waitedMs: 0 };
  let lastRateLimit: RateLimitInfo | undefined;
  const stoppedError = (): GitHubTransientError =>
    new GitHubTransientError('stopped while talking to GitHub: curupira is shutting down');
  /** A wait that a stop ends at once. */
  const pause = async (ms: number): Promise<void> => {
    try {
      await clock.sleep(ms, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw stoppedError();
      throw error;
    }
  };

  async function send(
    method: string,
    url: string,
    body: Record<string, unknown> | undefined,
    extraHeaders: Record<string, string> = {},
  ): Promise<Attempt> {
    const token = await options.tokens.get();
    stats.requests += 1;
    const signal = options.signal
      ? AbortSignal.any([AbortSignal.timeout(timeoutMs), options.signal])
      : AbortSignal.timeout(timeoutMs);
    try {
      const whole = /^https?:\/\//.test(url) ? url : `${apiUrl}${url}`;
      return await exchange(
        method,
        whole,
        body,
        {
          ...lowercased(extraHeaders),
          authorization: `bearer ${token}`,
          accept: 'application/vnd.github+json',
          'user-agent': userAgent,
        },
        signal,
      );
    } catch (error) {
      if (options.signal?.aborted) throw stoppedError();
      const e = error as { name?: string; message?: string; cause?: { name?: string; message?: string } };
      const timedOut = [e.name, e.cause?.name].some((n) => n === 'TimeoutError' || n === 'AbortError');
      // fetch's `TypeError: fetch failed` says what failed in its cause (`connect ECONNREFUSED …`).
      const message = e.name === 'TypeError' && e.cause?.message ? e.cause.message : e.message;
      const reason = timedOut ? `timed out after ${timeoutMs} ms` : redact(message ?? 'network error');
      throw new RetryableError(
        new GitHubTransientError(`GitHub request failed: ${reason}`, { cause: error }),
        undefined,
      );
    }
  }

  /** Classifies one HTTP answer: returns it, or throws (retryable or final). */
  function check(kind: 'graphql' | 'rest', attempt: Attempt): Attempt {
    const { status, headers, data } = attempt;
    const rate = parseRateLimit(headers);
    if (rate) {
      lastRateLimit = rate;
      for (const observer of rateLimitObservers) observer(rate);
    }
    const label = kind === 'graphql' ? 'GitHub GraphQL' : 'GitHub API';
    if (status === 401) {
      throw new GitHubAuthError(
        `${label} rejected the token (status 401: ${bodyText(data)}); run \`gh auth login\` or set GH_TOKEN to a valid token`,
        { status },
      );
    }
    const retryAfter = header(headers, 'retry-after');
    const isRateLimited =
      status === 429 ||
      (status === 403 && (retryAfter !== undefined || rate?.remaining === 0 || pointsToRateLimits(data)));
    if (isRateLimited) {
      const resetAt = rate && rate.remaining === 0 ? rate.resetAt : undefined;
      const waitMs =
        retryAfter !== undefined
          ? Number(retryAfter) * 1000
          : resetAt !== undefined
            ? Math.max(0, resetAt - clock.now()) + 1000
            : 60_000;
      const error = new GitHubRateLimitError(
        `${label} rate limit hit (status ${status}); ${retryAfter !== undefined ? `retry after ${retryAfter} s` : resetAt ? `resets at ${new Date(resetAt).toISOString()}` : 'waiting a minute'}`,
        {
          status,
          // When the budget comes back: the announced reset, else when GitHub asked us to retry.
          resetAt: new Date(
            retryAfter === undefined && resetAt !== undefined ? resetAt : clock.now() + waitMs,
          ),
        },
      );
      throw new RetryableError(error, waitMs);
    }
    if (status >= 500) {
      throw new RetryableError(
        new GitHubTransientError(`${label} temporarily failed with status ${status}`, { status }),
        undefined,
      );
    }
    if (status >= 400) {
      throw new GitHubRequestError(`${label} failed with status ${status}: ${bodyText(data)}`, { status });
    }
    if (kind === 'graphql' && (typeof data !== 'object' || data === null)) {
      throw new RetryableError(
        new GitHubTransientError('GitHub GraphQL returned non-JSON output', { status }),
        undefined,
      );
    }
    return attempt;
  }

  async function withRetries(
    kind: 'graphql' | 'rest',
    method: string,
    url: string,
    body?: Record<string, unknown>,
    extraHeaders?: Record<string, string>,
  ): Promise<Attempt> {
    let transientFailures = 0;
    let rateLimitWaits = 0;
    for (;;) {
      if (options.signal?.aborted) throw stoppedError();
      // Spend nothing when the budget is known to be empty: wait for the reset first.
      if (
        lastRateLimit &&
        lastRateLimit.remaining === 0 &&
        lastRateLimit.resetAt > clock.now() &&
        // GraphQL points and REST requests are separate budgets: one running out never blocks the other.
        (lastRateLimit.resource === 'graphql') === (kind === 'graphql')
      ) {
        const waitMs = lastRateLimit.resetAt - clock.now() + 1000;
        if (waitMs > maxWait) {
          throw new GitHubRateLimitError(
            `GitHub rate limit exhausted until ${new Date(lastRateLimit.resetAt).toISOString()}`,
            { resetAt: new Date(lastRateLimit.resetAt) },
          );
        }
        log.warn(
          { waitSeconds: Math.ceil(waitMs / 1000) },
          'GitHub rate limit exhausted; waiting for the reset',
        );
        stats.waitedMs += waitMs;
        await pause(waitMs);
        lastRateLimit = { ...lastRateLimit, remaining: lastRateLimit.limit };
      }
      try {
        const attempt = check(kind, await send(method, url, body, extraHeaders));
        if (kind === 'graphql') graphqlErrors(attempt);
        return attempt;
      } catch (error) {
        if (!(error instanceof RetryableError)) throw error;
        if (error.waitMs !== undefined) {
          rateLimitWaits += 1;
          if (error.waitMs > maxWait || rateLimitWaits > maxAttempts) throw error.final;
          log.warn(
            { waitSeconds: Math.ceil(error.waitMs / 1000), url },
            'GitHub rate limit hit; waiting before retrying',
          );
          stats.retries += 1;
          stats.waitedMs += error.waitMs;
          await pause(error.waitMs);
          continue;
        }
        transientFailures += 1;
        if (transientFailures >= maxAttempts) throw error.final;
        const base = Math.min(30_000, 1000 * 2 ** (transientFailures - 1));
        const delay = Math.round(base / 2 + (random() * base) / 2);
        log.warn(
          { attempt: transientFailures, delayMs: delay, error: error.final.message },
          'GitHub request failed; retrying',
        );
        stats.retries += 1;
        stats.waitedMs += delay;
        await pause(delay);
      }
    }
  }

  /** GraphQL-level errors: RATE_LIMITED waits, GitHub's own failures retry, the rest fail with the messages. */
  function graphqlErrors(attempt: Attempt): void {
    const errors = (
      attempt.data as { errors?: { message: string; type?: string; path?: (string | number)[] }[] }
    ).errors;
    if (!errors || errors.length === 0) return;
    if (errors.some((e) => e.type === 'RATE_LIMITED')) {
      const rate = parseRateLimit(attempt.headers);
      const waitMs = rate ? Math.max(0, rate.resetAt - clock.now()) + 1000 : 60_000;
      throw new RetryableError(
        new GitHubRateLimitError(
          `GitHub GraphQL rate limit exhausted: ${errors.map((e) => e.message).join('; ')}`,
          { resetAt: new Date(rate ? rate.resetAt : clock.now() + waitMs) },
        ),
        waitMs,
      );
    }
    // A failure of GitHub's own (a query that timed out, "something went wrong") comes with no data
    // and errors that carry nothing but a message: no type, path, location or extension code, which
    // every error about the query itself has. Decided by that shape, never by the message's words.
    const body = attempt.data as { data?: unknown };
    if ((body.data === null || body.data === undefined) && errors.every(isServerFailure)) {
      throw new RetryableError(new GitHubGraphQLError(errors), undefined);
    }
    throw new GitHubGraphQLError(errors, { data: body.data });
  }

  /** The answers kept for conditional reads (`conditionalReads`), by URL, the least recently used first. */
  const kept = new Map<string, { etag: string; headers: Record<string, string>; data: unknown }>();
  const keptMax = options.conditionalReads ?? 0;

  async function restResponse<T>(
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    path: string,
    body?: Record<string, unknown>,
  ): Promise<{ status: number; headers: Record<string, string>; data: T }> {
    const url = path.startsWith('http') ? path : `${apiUrl}${path.startsWith('/') ? '' : '/'}${path}`;
    if (method !== 'GET' || keptMax <= 0) {
      const attempt = await withRetries('rest', method, url, body);
      return { status: attempt.status, headers: attempt.headers, data: attempt.data as T };
    }
    const before = kept.get(url);
    const attempt = await withRetries(
      'rest',
      'GET',
      url,
      undefined,
      before ? { 'if-none-match': before.etag } : {},
    );
    kept.delete(url);
    if (attempt.status === 304 && before) {
      kept.set(url, before);
      return { status: 200, headers: before.headers, data: before.data as T };
    }
    const etag = header(attempt.headers, 'etag');
    if (attempt.status === 200 && etag !== undefined) {
      kept.set(url, { etag, headers: attempt.headers, data: attempt.data });
      if (kept.size > keptMax) kept.delete(kept.keys().next().value as string);
    }
    return { status: attempt.status, headers: attempt.headers, data: attempt.data as T };
  }

  return {
    apiUrl,
    graphqlUrl,
    stats,
    rateLimit: () => lastRateLimit,
    async graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<GraphQLResult<T>> {
      const attempt = await withRetries('graphql', 'POST', graphqlUrl, { query, variables });
      return { data: (attempt.data as { data: T }).data, rateLimit: lastRateLimit };
    },
    async rest<T>(
      method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
      path: string,
      body?: Record<string, unknown>,
    ): Promise<T> {
      return (await restResponse<T>(method, path, body)).data;
    },
    restResponse,
    async conditionalGet(path: string, etag: string | undefined) {
      const url = `${apiUrl}${path.startsWith('/') ? '' : '/'}${path}`;
      const attempt = await withRetries('rest', 'GET', url, undefined, etag ? { 'if-none-match': etag } : {});
      const next = header(attempt.headers, 'etag');
      return { changed: attempt.status !== 304, etag: next ?? etag };
    },
  };
}

/** A GraphQL error that says only that GitHub failed: a message and nothing that points into the query. */
function isServerFailure(error: {
  message: string;
  type?: string;
  path?: unknown;
  locations?: unknown;
  extensions?: unknown;
}): boolean {
  return (
    error.type === undefined &&
    error.path === undefined &&
    error.locations === undefined &&
    error.extensions === undefined
  );
}
