import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch } from './http-fetch.js';

let server: Server;
let base: string;
const seen: { method: string; url: string; body: string; authorization?: string }[] = [];
let other: Server;
let otherBase: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        body,
        ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}),
      });
      if (request.url === '/moved') {
        response.writeHead(307, { location: '/json' }).end();
      } else if (request.url === '/away') {
        response.writeHead(302, { location: `${otherBase}/blob` }).end();
      } else if (request.url === '/here') {
        response.writeHead(307, { location: '/json' }).end();
      } else if (request.url === '/other') {
        response.writeHead(303, { location: '/json' }).end();
      } else if (request.url === '/json') {
        const text = JSON.stringify({ method: request.method, body });
        response.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'x-b': '2',
          'x-a': '1',
        });
        response.end(gzipSync(text));
      } else {
        response.writeHead(404, 'Nope', { 'content-type': 'text/plain' }).end('missing');
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Another origin (a download host): it answers with the authorization header it received.
  other = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' }).end(request.headers.authorization ?? 'none');
  });
  await new Promise<void>((done) => other.listen(0, '127.0.0.1', done));
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
  await new Promise<void>((done) => other.close(() => done()));
});

describe('httpFetch', () => {
  it('sends the body, decodes gzip and lists headers', async () => {
    const response = await httpFetch(`${base}/json`, {
      method: 'POST',
      body: '{"q":1}',
      headers: { 'x-t': 'v' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('X-A')).toBe('1');
    expect([...response.headers].filter(([key]) => key.startsWith('x-'))).toEqual([
      ['x-a', '1'],
      ['x-b', '2'],
    ]);
    expect(await response.json()).toEqual({ method: 'POST', body: '{"q":1}' });
  });

  it('follows a 307 with the same method and body, a 303 as a GET', async () => {
    const kept = await httpFetch(`${base}/moved`, { method: 'POST', body: 'x' });
    expect(kept.url).toBe(`${base}/json`);
    expect(await kept.json()).toEqual({ method: 'POST', body: 'x' });
    const changed = await httpFetch(`${base}/other`, { method: 'POST', body: 'x' });
    expect(await changed.json()).toEqual({ method: 'GET', body: '' });
  });

  it('keeps authorization on a same-origin hop and drops it on a hop to another origin', async () => {
    seen.length = 0;
    const kept = await httpFetch(`${base}/here`, { headers: { authorization: 'bearer t0k' } });
    expect(await kept.json()).toEqual({ method: 'GET', body: '' });
    expect(seen.map((s) => [s.url, s.authorization])).toEqual([
      ['/here', 'bearer t0k'],
      ['/json', 'bearer t0k'],
    ]);
    const away = await httpFetch(`${base}/away`, { headers: { Authorization: 'bearer t0k', 'x-k': 'v' } });
    expect(away.url).toBe(`${otherBase}/blob`);
    expect(await away.text()).toBe('none');
  });

  it('reports a status with its text, and a refused connection as fetch does', async () => {
    const response = await httpFetch(`${base}/nothing`);
    expect([response.status, response.statusText, response.ok, await response.text()]).toEqual([
      404,
      'Nope',
      false,
      'missing',
    ]);
    await expect(httpFetch('http://127.0.0.1:1/')).rejects.toThrow(TypeError);
  });

  it('an abort rejects with an AbortError', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(httpFetch(`${base}/json`, { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
