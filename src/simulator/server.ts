/**
 * The simulator's HTTP server on 127.0.0.1 (a free port by default): GitHub's GraphQL endpoint at
 * `/graphql`, the REST endpoints of `rest.ts` under `/`, and a control API under `/_simulator/` for
 * tests that run the simulator in another process:
 *
 *   POST   /_simulator/faults           a fault (see faults.ts) or an array of faults
 *   GET    /_simulator/faults           faults still queued
 *   DELETE /_simulator/faults           drop every queued fault
 *   GET    /_simulator/requests         the request log
 *   POST   /_simulator/reset-requests   empty the request log
 *   POST   /_simulator/issues           { repo, title, body?, labels?, assignees?, author?, … } → 201
 *   POST   /_simulator/issues/close     { repo, number, stateReason? }
 *   POST   /_simulator/pull-requests    { repo, title, … } → 201
 *   POST   /_simulator/pull-requests/merge  { repo, number, by? } merges it as a person would (closing its issues)
 *   POST   /_simulator/pull-requests/close  { repo, number } closes it unmerged
 *   POST   /_simulator/comments         { repo, number, body, author? } → 201
 *   POST   /_simulator/tokens           { token, login }
 *   POST   /_simulator/rate-limit       { resource: "graphql" | "core", limit?, used? } for the token's user
 *   POST   /_simulator/write-faults     { fraction, status?, applied? } or null (see WriteFaults)
 *   POST   /_simulator/write-pacing     { minIntervalMs, status?, retryAfterSeconds? } or null (see WritePacing)
 *
 * Every API request needs `Authorization: bearer <token>` (or `token <token>`) with a token the world
 * knows. Tokens are never written to the request log or the logger. Every answer carries a `Date`
 * header from the simulator's clock (`now`), as GitHub's answers carry GitHub's.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import { jobLogDownload } from './checks.js';
import { type FaultKind, FaultQueue, type FaultSpec, parseFault } from './faults.js';
import { handleGraphQL } from './graphql.js';
import { mergeByPerson } from './merging.js';
import { RateLimiter, type RateLimitState, rateLimitHeaders } from './rate-limit.js';
import { etagOf, handleRest } from './rest.js';
import { REST_DOCS, type RestResponse, restError } from './rest-json.js';
import {
  type IssueInput,
  type IssueStateReason,
  type PullRequestInput,
  type SimActor,
  SimWorld,
  worldFromFixture,
} from './world.js';

/**
 * A fraction of REST write requests (POST, PATCH, PUT, DELETE) fail with `status` (default 502).
 * `applied: true` makes the write happen first and only the answer fail — the case where a client
 * cannot tell whether its comment was posted.
 */
export interface WriteFaults {
  readonly fraction: number;
  readonly status?: number;
  readonly applied?: boolean;
  /** Random source 0..1 (tests pin it); default Math.random. */
  readonly random?: () => number;
}

/**
 * GitHub's secondary limit on content creation: a user's REST write that comes sooner than
 * `minIntervalMs` after their previous accepted write is refused with `status` (403 by default, or
 * 429) and `Retry-After: retryAfterSeconds` (default 1), and is not applied.
 */
export interface WritePacing {
  readonly minIntervalMs: number;
  readonly status?: 403 | 429;
  readonly retryAfterSeconds?: number;
}

const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

export interface SimulatorOptions {
  world?: SimWorld;
  port?: number;
  host?: string;
  /** Clock for rate-limit windows, `resetAt` and `x-ratelimit-reset` (ms since the epoch). */
  now?: () => number;
  /** Primary budgets per user and hour. Default 5000 GraphQL points and 5000 REST requests. */
  rateLimits?: { graphql?: number; core?: number };
  /** HTTP status of an exhausted GraphQL budget: 200 (default) or 403; the body is the same. */
  graphqlRateLimitedStatus?: 200 | 403;
  /** Receives one debug line per request (method, path, status; never a token). */
  logger?: Logger;
  /** Fault injection for writes (changeable later with `setWriteFaults`). */
  writeFaults?: WriteFaults | null;
  /** The content-creation pacing rule (changeable later with `setWritePacing`). */
  writePacing?: WritePacing | null;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  operationName: string | null;
  readonly query: string | null;
  readonly variables: Record<string, unknown> | null;
  /** GraphQL points charged (0 for REST and for queries that did not run). */
  cost: number;
  /** REST requests charged to the core budget: 1, or 0 for a free one (`/rate_limit`, a 304, a GraphQL call). */
  coreCost: number;
  status: number;
  /** The fault the request met, if any. */
  fault: FaultKind | null;
  /** Login the token belongs to, or null for a missing or unknown token. */
  login: string | null;
}

/**
 * A GET whose `If-None-Match` names the answer's ETag gets 304 with no body (GitHub's conditional
 * requests: https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api).
 */
function notModified(req: IncomingMessage, response: RestResponse): RestResponse {
  const wanted = req.headers['if-none-match'];
  const etag = response.headers?.etag;
  if (typeof wanted !== 'string' || etag === undefined || response.status !== 200) return response;
  const tags = wanted.split(',').map((t) => t.trim());
  if (!tags.includes(etag) && !tags.includes('*')) return response;
  return { status: 304, body: undefined, headers: { etag } };
}

/** `response` with the ETag of its body when it is a 200 with a body and has none yet. */
function withEtag(response: RestResponse): RestResponse {
  if (response.status !== 200 || response.body === undefined || response.headers?.etag !== undefined)
    return response;
  return { ...response, headers: { ...response.headers, etag: etagOf(response.body) } };
}

export interface Simulator {
  /** `http://127.0.0.1:PORT`: the `api_url` to configure. GraphQL is at `${url}/graphql`. */
  readonly url: string;
  readonly world: SimWorld;
  readonly faults: FaultQueue;
  /** Every API request so far, in order (control requests are not recorded). */
  readonly requests: RecordedRequest[];
  readonly rateLimits: { readonly graphql: RateLimiter; readonly core: RateLimiter };
  resetRequests(): void;
  setWriteFaults(faults: WriteFaults | null): void;
  setWritePacing(pacing: WritePacing | null): void;
  close(): Promise<void>;
}

const GRAPHQL_DOCS = 'https://docs.github.com/graphql';
const SECONDARY_DOCS =
  'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits';
const PRIMARY_DOCS = 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api';

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function operationNameOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const record = body as Record<string, unknown>;
  if (typeof record.operationName === 'string' && record.operationName !== '') return record.operationName;
  if (typeof record.query !== 'string') return null;
  return /^\s*(?:query|mutation)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(record.query)?.[1] ?? null;
}

function tokenOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  return /^(?:bearer|token)\s+(\S+)\s*$/i.exec(header)?.[1];
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const now = options.now ?? (() => Date.now());
  const world = options.world ?? new SimWorld();
  const faults = new FaultQueue();
  const requests: RecordedRequest[] = [];
  const rateLimits = {
    graphql: new RateLimiter('graphql', { limit: options.rateLimits?.graphql ?? 5000, now }),
    core: new RateLimiter('core', { limit: options.rateLimits?.core ?? 5000, now }),
  };
  /** GitHub's budget for requests without valid credentials (60 an hour); its headers go on every 401. */
  const anonymous = new RateLimiter('core', { limit: 60, now });
  const host = options.host ?? '127.0.0.1';
  let requestCounter = 0;
  let baseUrl = '';
  let writeFaults = options.writeFaults ?? null;
  let writePacing = options.writePacing ?? null;
  /** When each user's last accepted write was applied (the pacing rule's memory). */
  const lastWriteAt = new Map<string, number>();

  /**
   * Runs a REST write under the pacing rule and the write faults: refused (not applied) when it
   * comes too soon, failed before or after being applied for the chosen fraction, else applied.
   */
  function gatedWrite(
    login: string,
    requestId: string,
    record: RecordedRequest,
    apply: () => RestResponse,
  ): RestResponse {
    const last = lastWriteAt.get(login);
    if (writePacing && last !== undefined && now() - last < writePacing.minIntervalMs) {
      record.fault = 'secondary-rate-limit';
      return {
        status: writePacing.status ?? 403,
        body: {
          message: `You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
          documentation_url: SECONDARY_DOCS,
        },
        headers: { 'retry-after': String(writePacing.retryAfterSeconds ?? 1) },
      };
    }
    const faulted = writeFaults !== null && (writeFaults.random ?? Math.random)() < writeFaults.fraction;
    if (!faulted || writeFaults?.applied) {
      const response = apply();
      if (response.status < 400) lastWriteAt.set(login, now());
      if (!faulted) return response;
    }
    record.fault = 'status';
    const status = writeFaults?.status ?? 502;
    return { status, body: { message: STATUS_CODES[status] ?? 'Server Error' } };
  }

  function send(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
    requestId = '',
  ): void {
    const plain = typeof body === 'string' && headers['content-type']?.startsWith('text/');
    const text = body === undefined ? '' : plain ? (body as string) : JSON.stringify(body);
    res.writeHead(status, {
      date: new Date(now()).toUTCString(),
      'content-type': 'application/json; charset=utf-8',
      'x-github-media-type': 'github.v3; format=json',
      ...(requestId ? { 'x-github-request-id': requestId } : {}),
      ...headers,
    });
    res.end(text);
  }

  function budgets(login: string): Record<string, unknown> {
    const view = (state: RateLimitState) => ({
      limit: state.limit,
      used: state.used,
      remaining: state.remaining,
      reset: Math.ceil(state.resetAt / 1000),
    });
    return { core: view(rateLimits.core.peek(login)), graphql: view(rateLimits.graphql.peek(login)) };
  }

  function applyFault(
    res: ServerResponse,
    fault: FaultSpec,
    isGraphQL: boolean,
    viewer: SimActor | undefined,
    requestId: string,
  ): number | 'destroyed' {
    const resource = isGraphQL ? rateLimits.graphql : rateLimits.core;
    const state = viewer ? resource.peek(viewer.login) : undefined;
    const headers = state ? rateLimitHeaders(state) : {};
    switch (fault.kind) {
      case 'status': {
        const body = isGraphQL
          ? {
              data: null,
              errors: [
                {
                  message: `Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug. Please include \`${requestId}\` when reporting this issue.`,
                },
              ],
            }
          : {
              message: fault.status === 500 ? 'Server Error' : (STATUS_CODES[fault.status] ?? 'Server Error'),
            };
        send(res, fault.status, body, headers, requestId);
        return fault.status;
      }
      case 'secondary-rate-limit': {
        const status = fault.status ?? 403;
        send(
          res,
          status,
          {
            message: `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
            documentation_url: SECONDARY_DOCS,
          },
          { ...headers, 'retry-after': String(fault.retryAfterSeconds ?? 60) },
          requestId,
        );
        return status;
      }
      case 'primary-rate-limit': {
        const resetAt = now() + (fault.resetInSeconds ?? 60) * 1000;
        const limit = resource.limit;
        const exhausted = rateLimitHeaders({
          resource: resource.resource,
          limit,
          used: limit,
          remaining: 0,
          resetAt,
        });
        const userId = viewer?.databaseId ?? 0;
        if (isGraphQL) {
          const status = options.graphqlRateLimitedStatus ?? 200;
          send(
            res,
            status,
            { errors: [{ type: 'RATE_LIMITED', message: `API rate limit exceeded for user ID ${userId}.` }] },
            exhausted,
            requestId,
          );
          return status;
        }
        send(
          res,
          403,
          {
            message: `API rate limit exceeded for user ID ${userId}. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
            documentation_url: PRIMARY_DOCS,
            status: '403',
          },
          exhausted,
          requestId,
        );
        return 403;
      }
      case 'malformed-json':
        res.writeHead(200, {
          date: new Date(now()).toUTCString(),
          'content-type': 'application/json; charset=utf-8',
          ...headers,
        });
        res.end(isGraphQL ? '{"data":{"search":{"issueCount":12,"nodes":[{"number":' : '{"login":"oct');
        return 200;
      case 'reset-connection':
        res.socket?.destroy();
        return 'destroyed';
      case 'slow':
        return 0;
    }
  }

  async function control(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    raw: string,
  ): Promise<void> {
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      send(res, 400, { message: 'Problems parsing JSON' });
      return;
    }
    const record = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const route = `${req.method} ${path}`;
    const download =
      req.method === 'GET'
        ? jobLogDownload(world, path, new URL(req.url ?? '/', 'http://simulator.invalid').searchParams)
        : undefined;
    if (download) {
      send(res, download.status, download.text, { 'content-type': 'text/plain; charset=utf-8' });
      return;
    }
    try {
      switch (route) {
        case 'POST /_simulator/faults': {
          for (const fault of Array.isArray(body) ? body : [body]) faults.add(parseFault(fault));
          send(res, 200, { pending: faults.pending.length });
          return;
        }
        case 'GET /_simulator/faults':
          send(res, 200, faults.pending);
          return;
        case 'DELETE /_simulator/faults':
          faults.clear();
          send(res, 204, undefined);
          return;
        case 'GET /_simulator/requests':
          send(res, 200, requests);
          return;
        case 'POST /_simulator/reset-requests':
          requests.length = 0;
          send(res, 204, undefined);
          return;
        case 'POST /_simulator/issues': {
          const issue = world.addIssue(String(record.repo), record as unknown as IssueInput);
          send(res, 201, { number: issue.number, id: issue.id, title: issue.title, state: issue.state });
          return;
        }
        case 'POST /_simulator/issues/close': {
          const reason =
            typeof record.stateReason === 'string' ? (record.stateReason as IssueStateReason) : undefined;
          const issue = world.closeIssue(String(record.repo), Number(record.number), { stateReason: reason });
          send(res, 200, {
            number: issue.number,
            id: issue.id,
            state: issue.state,
            stateReason: issue.stateReason,
          });
          return;
        }
        case 'POST /_simulator/pull-requests': {
          const pr = world.addPullRequest(String(record.repo), record as unknown as PullRequestInput);
          send(res, 201, { number: pr.number, id: pr.id, title: pr.title, state: pr.state });
          return;
        }
        case 'POST /_simulator/pull-requests/merge': {
          const repoName = String(record.repo);
          const number = Number(record.number);
          const repo = world.repo(repoName);
          const pr = world.pullRequest(repoName, number);
          if (!repo || !pr) throw new Error(`the simulated world has no pull request ${repoName}#${number}`);
          const by = typeof record.by === 'string' ? record.by : repo.owner;
          const merged = mergeByPerson(world, repo, pr, by);
          if (merged.status !== 200) {
            send(res, merged.status, merged.body);
            return;
          }
          const sha = (merged.body as { sha?: string }).sha;
          send(res, 200, { number: pr.number, state: pr.state, mergedAt: pr.mergedAt, sha });
          return;
        }
        case 'POST /_simulator/pull-requests/close': {
          const pr = world.closePullRequest(String(record.repo), Number(record.number));
          send(res, 200, { number: pr.number, state: pr.state, mergedAt: pr.mergedAt });
          return;
        }
        case 'POST /_simulator/comments': {
          const comment = world.addComment(String(record.repo), Number(record.number), {
            body: String(record.body ?? ''),
            author: typeof record.author === 'string' ? record.author : undefined,
          });
          send(res, 201, { id: comment.id, databaseId: comment.databaseId });
          return;
        }
        case 'POST /_simulator/tokens': {
          world.addToken(String(record.token), String(record.login));
          send(res, 204, undefined);
          return;
        }
        case 'POST /_simulator/rate-limit': {
          const limiter = record.resource === 'core' ? rateLimits.core : rateLimits.graphql;
          if (typeof record.limit === 'number') limiter.limit = record.limit;
          const token = tokenOf(req);
          const viewer = token ? world.viewerForToken(token) : undefined;
          const login = typeof record.login === 'string' ? record.login : viewer?.login;
          if (typeof record.used === 'number') {
            if (!login) throw new Error('say whose budget: send the token or a "login"');
            limiter.setUsed(login, record.used);
          }
          send(res, 200, login ? limiter.peek(login) : { limit: limiter.limit });
          return;
        }
        case 'POST /_simulator/write-faults':
          writeFaults = body === null || body === undefined ? null : parseWriteFaults(record);
          send(res, 200, { writeFaults });
          return;
        case 'POST /_simulator/write-pacing':
          writePacing = body === null || body === undefined ? null : parseWritePacing(record);
          send(res, 200, { writePacing });
          return;
        default:
          send(res, 404, { message: `no simulator control route ${route}` });
      }
    } catch (error) {
      send(res, 400, { message: error instanceof Error ? error.message : String(error) });
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    const path = url.pathname;
    const method = (req.method ?? 'GET').toUpperCase();
    const raw = await readBody(req);
    if (path.startsWith('/_simulator/')) {
      await control(req, res, path, raw);
      return;
    }
    requestCounter += 1;
    const requestId = `5151:${requestCounter.toString(16).toUpperCase().padStart(6, '0')}`;
    let body: unknown;
    let badJson = false;
    if (raw.trim() !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        badJson = true;
      }
    }
    const isGraphQL = path === '/graphql';
    const graphqlBody =
      isGraphQL && typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const token = tokenOf(req);
    const viewer = token === undefined ? undefined : world.viewerForToken(token);
    const record: RecordedRequest = {
      method,
      path,
      operationName: isGraphQL ? operationNameOf(body) : null,
      query: typeof graphqlBody.query === 'string' ? graphqlBody.query : null,
      variables:
        typeof graphqlBody.variables === 'object' && graphqlBody.variables !== null
          ? (graphqlBody.variables as Record<string, unknown>)
          : null,
      cost: 0,
      coreCost: 0,
      status: 0,
      fault: null,
      login: viewer?.login ?? null,
    };
    requests.push(record);
    const finish = (status: number) => {
      record.status = status;
      options.logger?.debug(
        { method, path, status, operationName: record.operationName, fault: record.fault },
        'simulator request',
      );
    };

    const fault = faults.take({ method, path, operationName: record.operationName });
    if (fault) {
      record.fault = fault.kind;
      if (fault.kind === 'slow') await delay(fault.delayMs);
      else {
        const status = applyFault(res, fault, isGraphQL, viewer, requestId);
        finish(status === 'destroyed' ? 0 : status);
        return;
      }
    }

    if (token === undefined || !viewer) {
      const body401 =
        token !== undefined
          ? { message: 'Bad credentials', documentation_url: REST_DOCS, status: '401' }
          : isGraphQL
            ? {
                message: 'This endpoint requires you to be authenticated.',
                documentation_url: `${GRAPHQL_DOCS}/guides/forming-calls-with-graphql#authenticating-with-graphql`,
              }
            : { message: 'Requires authentication', documentation_url: REST_DOCS, status: '401' };
      send(res, 401, body401, rateLimitHeaders(anonymous.charge('anonymous', 1)), requestId);
      finish(401);
      return;
    }

    if (isGraphQL) {
      if (method !== 'POST') {
        send(res, 404, { message: 'Not Found', documentation_url: REST_DOCS, status: '404' }, {}, requestId);
        finish(404);
        return;
      }
      if (badJson || body === undefined) {
        const state = rateLimits.graphql.peek(viewer.login);
        send(
          res,
          400,
          { message: 'Problems parsing JSON', documentation_url: GRAPHQL_DOCS, status: '400' },
          rateLimitHeaders(state),
          requestId,
        );
        finish(400);
        return;
      }
      const result = await handleGraphQL({
        world,
        viewer,
        limiter: rateLimits.graphql,
        body,
        rateLimitedStatus: options.graphqlRateLimitedStatus,
      });
      record.cost = result.cost;
      if (result.operationName && !record.operationName) record.operationName = result.operationName;
      send(res, result.status, result.body, result.headers, requestId);
      finish(result.status);
      return;
    }

    const free = path === '/rate_limit';
    const limiter = rateLimits.core;
    let response: RestResponse;
    if (badJson) response = restError(400, 'Problems parsing JSON');
    else if (!free && !limiter.allows(viewer.login, 1)) {
      response = {
        status: 403,
        body: {
          message: `API rate limit exceeded for user ID ${viewer.databaseId}. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
          documentation_url: PRIMARY_DOCS,
          status: '403',
        },
      };
    } else {
      const apply = () =>
        handleRest({
          world,
          viewer,
          method,
          path,
          searchParams: url.searchParams,
          body,
          apiUrl: baseUrl,
          rateLimits: () => budgets(viewer.login),
        });
      if (WRITE_METHODS.has(method)) {
        if (!free) limiter.charge(viewer.login, 1);
        response = gatedWrite(viewer.login, requestId, record, apply);
      } else {
        // Every read answered with a body carries its ETag, as GitHub's do.
        response = notModified(req, withEtag(apply()));
        // GitHub does not count a 304 against the rate limit (a conditional request that matched).
        if (!free && response.status !== 304) limiter.charge(viewer.login, 1);
      }
      if (!free && response.status !== 304) record.coreCost = 1;
    }
    send(
      res,
      response.status,
      response.body,
      { ...rateLimitHeaders(limiter.peek(viewer.login)), ...response.headers },
      requestId,
    );
    finish(response.status);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.logger?.error(
        { err: error instanceof Error ? error.message : String(error) },
        'simulator failed',
      );
      if (!res.headersSent) send(res, 500, { message: 'Server Error' });
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;

  return {
    url: baseUrl,
    world,
    faults,
    requests,
    rateLimits,
    resetRequests() {
      requests.length = 0;
    },
    setWriteFaults(faults) {
      writeFaults = faults;
    },
    setWritePacing(pacing) {
      writePacing = pacing;
      if (!pacing) lastWriteAt.clear();
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

function parseWriteFaults(raw: Record<string, unknown>): WriteFaults {
  const { fraction, status, applied } = raw;
  if (typeof fraction !== 'number' || !(fraction >= 0 && fraction <= 1)) {
    throw new Error('"fraction" must be a number from 0 to 1');
  }
  if (status !== undefined && !(typeof status === 'number' && status >= 400 && status <= 599)) {
    throw new Error('"status" must be an HTTP error status');
  }
  return { fraction, status: status as number | undefined, applied: applied === true };
}

function parseWritePacing(raw: Record<string, unknown>): WritePacing {
  const { minIntervalMs, status, retryAfterSeconds } = raw;
  if (typeof minIntervalMs !== 'number' || minIntervalMs < 0) {
    throw new Error('"minIntervalMs" must be a non-negative number');
  }
  if (status !== undefined && status !== 403 && status !== 429) {
    throw new Error('a secondary rate limit answers 403 or 429');
  }
  if (retryAfterSeconds !== undefined && !(typeof retryAfterSeconds === 'number' && retryAfterSeconds >= 0)) {
    throw new Error('"retryAfterSeconds" must be a non-negative number');
  }
  return { minIntervalMs, status, retryAfterSeconds: retryAfterSeconds as number | undefined };
}

/** Starts a simulator seeded from a JSON fixture file (`curupira simulator --fixture FILE`). */
export async function runSimulatorFromFixture(
  file: string,
  options: Omit<SimulatorOptions, 'world'> = {},
): Promise<Simulator> {
  return startSimulator({ ...options, world: worldFromFixture(await readFixture(file)) });
}

/** A fixture file's JSON (format: docs/simulator.md, schema/simulator-fixture.schema.json). */
export async function readFixture(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(
      `cannot read simulator fixture ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
