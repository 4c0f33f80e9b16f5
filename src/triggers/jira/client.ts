/**
 * Jira Cloud's REST API v3 over the service kit's HTTP, with basic authentication (the account's
 * email and an API token). The `Authorization` value is registered with the logger before it is
 * sent. A 401 becomes an auth error naming where the token came from, a 429 (or a 503 with
 * `Retry-After`) a rate-limit error with the time to come back.
 */
import { SourceAuthError, SourceRateLimitError, SourceRequestError } from '../../core/errors.js';
import { registerSecret } from '../../log.js';
import { packageVersion } from '../../version.js';
import type { ServiceKit } from '../service.js';
import { type JiraAutomation, tokenSource } from './schema.js';

export interface JiraClient {
  get<T>(path: string, signal?: AbortSignal): Promise<T>;
  post<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T>;
}

function retryAt(headers: Headers, now: number): Date | undefined {
  const after = headers.get('retry-after');
  if (after !== null && /^\d+$/.test(after.trim())) return new Date(now + Number(after) * 1000);
  const reset = headers.get('x-ratelimit-reset');
  const at = reset === null ? Number.NaN : Date.parse(reset);
  return Number.isFinite(at) ? new Date(at) : undefined;
}

function messagesOf(body: unknown): string {
  if (body === null || typeof body !== 'object') return '';
  const { errorMessages, errors } = body as { errorMessages?: unknown; errors?: unknown };
  const out = Array.isArray(errorMessages) ? errorMessages.map(String) : [];
  if (errors && typeof errors === 'object')
    for (const [field, message] of Object.entries(errors)) out.push(`${field}: ${String(message)}`);
  return out.join('; ');
}

export function createJiraClient(
  config: JiraAutomation,
  service: ServiceKit,
  now: () => number = Date.now,
): JiraClient {
  let authorization: string | undefined;
  const base = config.site_url.replace(/\/+$/, '');
  async function send<T>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    if (authorization === undefined) {
      const token = service.secret(
        { env: config.api_token_env, file: config.api_token_file },
        'the Jira API token',
      );
      const value = `Basic ${Buffer.from(`${config.email}:${token}`).toString('base64')}`;
      registerSecret(value);
      authorization = value;
    }
    let response: Response;
    try {
      response = await service.fetch(`${base}${path}`, {
        method,
        headers: {
          authorization,
          accept: 'application/json',
          'user-agent': `curupira/${packageVersion()}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      throw new SourceRequestError(`Jira (${base}) did not answer: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text === '' ? null : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.status === 429 || (response.status === 503 && response.headers.has('retry-after'))) {
      const resetAt = retryAt(response.headers, now());
      throw new SourceRateLimitError(
        `Jira's rate limit is reached${resetAt ? ` until ${resetAt.toISOString()}` : ''}`,
        resetAt ? { resetAt } : {},
      );
    }
    if (response.status === 401 || response.status === 403)
      throw new SourceAuthError(
        `Jira refused the API token read from ${tokenSource(config)} for ${config.email} (HTTP ${response.status})`,
      );
    if (!response.ok || json === undefined)
      throw new SourceRequestError(
        `Jira answered HTTP ${response.status} to ${method} ${path}${messagesOf(json) ? `: ${messagesOf(json)}` : ''}`,
        { status: response.status },
      );
    return json as T;
  }
  return {
    get: (path, signal) => send('GET', path, undefined, signal),
    post: (path, body, signal) => send('POST', path, body, signal),
  };
}
