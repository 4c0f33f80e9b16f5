/**
 * The little of `fetch` that the GitHub client uses (and Octokit used), on node:http and node:https. Node's global `fetch`
 * loads undici, which holds about 18 MiB of a daemon's resident memory; these modules are already
 * loaded. What a caller reads: `status`, `statusText`, `url`, iterable `headers` with `get`, and the
 * body as `text()` or `arrayBuffer()`. Redirects are followed (up to 5, as a GET after a 303, or
 * after a 301/302 of a POST, as fetch does; a hop to another origin drops `authorization` and
 * `cookie`, as fetch does, so a token never follows GitHub to a download host such as the signed URL
 * of an Actions log); gzip, deflate and br bodies are decoded.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

export interface MinimalInit {
  method?: string;
  body?: string | null;
  headers?: Record<string, string>;
  signal?: AbortSignal | null;
  redirect?: 'follow' | 'manual' | 'error';
}

export interface MinimalResponse {
  status: number;
  statusText: string;
  url: string;
  ok: boolean;
  headers: { get(name: string): string | null; [Symbol.iterator](): Iterator<[string, string]> };
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
  json(): Promise<unknown>;
}

const MAX_REDIRECTS = 5;
/** Headers fetch drops on a redirect to another origin. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);

export async function httpFetch(url: string, init: MinimalInit = {}): Promise<MinimalResponse> {
  let current = new URL(url);
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body ?? undefined;
  let headers = init.headers ?? {};
  for (let hop = 0; ; hop++) {
    const response = await send(current, method, body, { ...init, headers });
    const location = response.headers.location;
    const redirect = [301, 302, 303, 307, 308].includes(response.statusCode ?? 0) && location;
    if (!redirect || init.redirect === 'manual') return toResponse(response, current.href);
    response.resume();
    if (init.redirect === 'error' || hop >= MAX_REDIRECTS)
      throw new TypeError('fetch failed', { cause: new Error(`redirect refused or too many: ${location}`) });
    const next = new URL(location, current);
    const code = response.statusCode ?? 0;
    if (code === 303 || ((code === 301 || code === 302) && method === 'POST')) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
    }
    if (next.origin !== current.origin) {
      headers = Object.fromEntries(
        Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())),
      );
    }
    current = next;
  }
}

function send(
  url: URL,
  method: string,
  body: string | undefined,
  init: MinimalInit,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'accept-encoding': 'gzip, deflate, br', ...init.headers };
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method,
      headers,
      signal: init.signal ?? undefined,
    });
    request.once('response', resolve);
    request.once('error', (error) => {
      if (error.name === 'AbortError') reject(error);
      else reject(new TypeError('fetch failed', { cause: error }));
    });
    request.end(body);
  });
}

function decoded(response: IncomingMessage): NodeJS.ReadableStream {
  switch (String(response.headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return response.pipe(createGunzip());
    case 'deflate':
      return response.pipe(createInflate());
    case 'br':
      return response.pipe(createBrotliDecompress());
    default:
      return response;
  }
}

function toResponse(response: IncomingMessage, url: string): MinimalResponse {
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) pairs.push([name, Array.isArray(value) ? value.join(', ') : value]);
  }
  pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let bytes: Promise<Buffer> | undefined;
  const read = (): Promise<Buffer> => {
    bytes ??= new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const stream = decoded(response);
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('end', () => resolve(Buffer.concat(chunks)));
      stream.once('error', reject);
      response.once('error', reject);
    });
    return bytes;
  };
  const status = response.statusCode ?? 0;
  return {
    status,
    statusText: response.statusMessage ?? '',
    url,
    ok: status >= 200 && status < 300,
    headers: {
      get: (name) => pairs.find(([key]) => key === name.toLowerCase())?.[1] ?? null,
      [Symbol.iterator]: () => pairs[Symbol.iterator](),
    },
    text: async () => (await read()).toString('utf8'),
    arrayBuffer: async () => {
      const buffer = await read();
      return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
    },
    json: async () => JSON.parse((await read()).toString('utf8')),
  };
}
