/**
 * Linear's GraphQL API over the service kit's HTTP: one request at a time, the API key in the
 * `Authorization` header (a personal key, as Linear documents it), Linear's rate-limit headers
 * read on every answer. A refused key, a rate limit and any other failure become the typed
 * source errors, whose messages name where the key came from and never the key.
 */
import { SourceAuthError, SourceRateLimitError, SourceRequestError } from '../../core/errors.js';
import { packageVersion } from '../../version.js';
import type { ServiceKit } from '../service.js';
import { keySource, type LinearAutomation } from './schema.js';

/** What Linear's rate-limit headers said at the last answer. */
export interface LinearRateState {
  remaining: number | undefined;
  resetAt: Date | undefined;
}

interface GraphQLErrorBody {
  message?: string;
  extensions?: { code?: string; type?: string; userPresentableMessage?: string };
}

export interface LinearClient {
  request<T>(query: string, variables: Record<string, unknown>, signal?: AbortSignal): Promise<T>;
  /** Linear's request budget after the last answer (`X-RateLimit-Requests-*`). */
  readonly rate: LinearRateState;
}

function headerNumber(headers: Headers, name: string): number | undefined {
  const value = headers.get(name);
  if (value === null || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

/** The reset time of whichever budget (requests, complexity) ran out, else the requests budget's. */
function rateOf(headers: Headers): LinearRateState {
  const requests = headerNumber(headers, 'x-ratelimit-requests-remaining');
  const complexity = headerNumber(headers, 'x-ratelimit-complexity-remaining');
  const requestsReset = headerNumber(headers, 'x-ratelimit-requests-reset');
  const complexityReset = headerNumber(headers, 'x-ratelimit-complexity-reset');
  const complexityOut = complexity !== undefined && complexity <= 0;
  const reset = complexityOut ? complexityReset : requestsReset;
  return {
    remaining: complexityOut ? 0 : requests,
    resetAt: reset === undefined ? undefined : new Date(reset),
  };
}

/** Linear's answer to an unknown or revoked key (`AUTHENTICATION_ERROR`), or a 401/403. */
function isAuthFailure(status: number, errors: readonly GraphQLErrorBody[]): boolean {
  return (
    status === 401 ||
    status === 403 ||
    errors.some((e) => e.extensions?.code === 'AUTHENTICATION_ERROR' || e.extensions?.code === 'FORBIDDEN')
  );
}

function describeErrors(errors: readonly GraphQLErrorBody[]): string {
  return errors.map((e) => e.extensions?.userPresentableMessage ?? e.message ?? 'unknown error').join('; ');
}

export function createLinearClient(config: LinearAutomation, service: ServiceKit): LinearClient {
  const rate: LinearRateState = { remaining: undefined, resetAt: undefined };
  let key: string | undefined;
  return {
    rate,
    async request<T>(query: string, variables: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
      key ??= service.secret({ env: config.api_key_env, file: config.api_key_file }, 'the Linear API key');
      let response: Response;
      try {
        response = await service.fetch(config.api_url, {
          method: 'POST',
          headers: {
            authorization: key,
            'content-type': 'application/json',
            'user-agent': `curupira/${packageVersion()}`,
          },
          body: JSON.stringify({ query, variables }),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        throw new SourceRequestError(
          `Linear (${config.api_url}) did not answer: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      Object.assign(rate, rateOf(response.headers));
      let body: { data?: T | null; errors?: GraphQLErrorBody[] };
      try {
        body = (await response.json()) as typeof body;
      } catch (error) {
        throw new SourceRequestError(`Linear answered HTTP ${response.status} with no JSON`, {
          cause: error,
          status: response.status,
        });
      }
      const errors = body.errors ?? [];
      if (errors.some((e) => e.extensions?.code === 'RATELIMITED') || response.status === 429) {
        const resetAt = rate.resetAt;
        throw new SourceRateLimitError(
          `Linear's rate limit is reached${resetAt ? ` until ${resetAt.toISOString()}` : ''}`,
          resetAt ? { resetAt } : {},
        );
      }
      if (isAuthFailure(response.status, errors))
        throw new SourceAuthError(
          `Linear refused the API key read from ${keySource(config)}: ${describeErrors(errors) || `HTTP ${response.status}`}`,
        );
      if (errors.length > 0 || !response.ok || body.data == null)
        throw new SourceRequestError(
          `Linear answered HTTP ${response.status}${errors.length > 0 ? `: ${describeErrors(errors)}` : ''}`,
          { status: response.status },
        );
      return body.data;
    },
  };
}
