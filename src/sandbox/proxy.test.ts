import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hostAllowed, startEgressProxy } from './proxy.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function viaSocket(
  socketPath: string,
  options: { method?: string; path: string; headers?: Record<string, string> },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, ...options }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('connect', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * `upstream` listening on a free loopback port, and a proxy before it whose key route 0 leads to
 * `basePath` there (the agent's placeholder `PLACEHOLDER`, the real key `sk-real`).
 */
async function proxyBefore(
  upstream: Server,
  basePath: string,
  options: { allow?: string[]; selfPort?: number } = {},
): Promise<{ port: number; socketPath: string; blocked: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'proxy-unit-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
  const port = (upstream.address() as { port: number }).port;
  const blocked: string[] = [];
  const socketPath = join(dir, 'egress.sock');
  const proxy = await startEgressProxy({
    socketPath,
    allow: options.allow ?? [],
    ...(options.selfPort === undefined ? {} : { selfPort: options.selfPort }),
    keys: [
      {
        baseUrl: `http://127.0.0.1:${port}${basePath}`,
        swaps: [{ placeholder: 'PLACEHOLDER', key: 'sk-real' }],
      },
    ],
    onBlocked: (target) => blocked.push(target),
  });
  cleanups.push(() => proxy.close());
  return { port, socketPath, blocked };
}

describe('the egress proxy', () => {
  it('matches hosts, ports and wildcard domains', () => {
    expect(hostAllowed(['api.anthropic.com'], 'api.anthropic.com', 443)).toBe(true);
    expect(hostAllowed(['api.anthropic.com'], 'api.anthropic.com', 80)).toBe(false);
    expect(hostAllowed(['api.anthropic.com'], 'evil.com', 443)).toBe(false);
    expect(hostAllowed(['*.pypi.org'], 'files.pypi.org', 443)).toBe(true);
    expect(hostAllowed(['*.pypi.org'], 'pypi.org.evil.com', 443)).toBe(false);
    expect(hostAllowed(['127.0.0.1:8080'], '127.0.0.1', 8080)).toBe(true);
  });

  it('refuses a tunnel off the list and reports it; swaps the placeholder for the real key', async () => {
    const seen: { url: string; key: string }[] = [];
    const upstream = createServer((req, res) => {
      seen.push({ url: req.url ?? '', key: String(req.headers['x-api-key']) });
      res.end('ok');
    });
    const { port, socketPath, blocked } = await proxyBefore(upstream, '/base', {
      allow: ['api.example.com'],
    });

    const tunnel = await viaSocket(socketPath, { method: 'CONNECT', path: `127.0.0.1:${port}` });
    expect(tunnel.status).toBe(403);
    const plain = await viaSocket(socketPath, { path: `http://127.0.0.1:${port}/x` });
    expect(plain.status).toBe(403);
    expect(blocked).toEqual([`127.0.0.1:${port}`, `127.0.0.1:${port}`]);

    const keyed = await viaSocket(socketPath, {
      path: '/_key/0/v1/messages',
      headers: { 'x-api-key': 'PLACEHOLDER' },
    });
    expect(keyed).toEqual({ status: 200, body: 'ok' });
    expect(seen).toEqual([{ url: '/base/v1/messages', key: 'sk-real' }]);
    expect((await viaSocket(socketPath, { path: '/_key/7/x' })).status).toBe(404);
  });

  // A client that sends even a request to 127.0.0.1 through HTTP_PROXY (NO_PROXY unheeded), in
  // absolute form: its base URL, the proxy's own address inside.
  it('takes a key request that came through the proxy in absolute form, addressed to the proxy itself', async () => {
    const seen: { url: string; key: string }[] = [];
    const upstream = createServer((req, res) => {
      seen.push({ url: req.url ?? '', key: String(req.headers.authorization) });
      res.end('ok');
    });
    const { socketPath, blocked } = await proxyBefore(upstream, '/v1');
    for (const host of ['127.0.0.1:3128', 'localhost:3128']) {
      const keyed = await viaSocket(socketPath, {
        path: `http://${host}/_key/0/chat/completions`,
        headers: { authorization: 'Bearer PLACEHOLDER' },
      });
      expect(keyed).toEqual({ status: 200, body: 'ok' });
    }
    expect(seen).toEqual([
      { url: '/v1/chat/completions', key: 'Bearer sk-real' },
      { url: '/v1/chat/completions', key: 'Bearer sk-real' },
    ]);
    expect(blocked).toEqual([]);
    // Another path on loopback is still refused.
    expect((await viaSocket(socketPath, { path: 'http://127.0.0.1:3128/other' })).status).toBe(403);
  });

  // undici's ProxyAgent (Qwen Code 0.15.10) opens a CONNECT tunnel even to an http:// target, the
  // proxy's own address included: through it comes the key request in origin form.
  it('answers a key request sent through a CONNECT tunnel to the proxy itself', async () => {
    const seen: string[] = [];
    const upstream = createServer((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization}`);
      res.end('ok');
    });
    const { socketPath, blocked } = await proxyBefore(upstream, '/v1', { selfPort: 3128 });
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(socketPath);
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
        if (text.startsWith('HTTP/1.1 200') && !text.includes('/_sent')) {
          text += '/_sent';
          socket.write(
            'POST /_key/0/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nAuthorization: Bearer PLACEHOLDER\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
          );
        }
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.write('CONNECT 127.0.0.1:3128 HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    expect(answer).toMatch(/ok$/);
    expect(seen).toEqual(['/v1/chat/completions Bearer sk-real']);
    expect(blocked).toEqual([]);
    // Any other loopback port stays refused.
    expect((await viaSocket(socketPath, { method: 'CONNECT', path: '127.0.0.1:3129' })).status).toBe(403);
  });

  // Codex opens its Responses WebSocket at its base URL: the handshake carries the placeholder.
  it('relays a WebSocket handshake to a key route with the real key, then both directions; a refusal goes back whole', async () => {
    const seen: { url: string; authorization: string; upgrade: string }[] = [];
    const upgraded: Promise<void>[] = [];
    const upstream = createServer((_req, res) => res.end('not an upgrade'));
    upstream.on('upgrade', (req, socket: Socket) => {
      seen.push({
        url: req.url ?? '',
        authorization: String(req.headers.authorization),
        upgrade: String(req.headers.upgrade),
      });
      if (req.headers.authorization !== 'Bearer sk-real') {
        socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 9\r\n\r\nno access');
        return;
      }
      upgraded.push(new Promise<void>((resolve) => socket.once('close', () => resolve())));
      // As a WebSocket server does: the client gone, it closes too.
      socket.on('end', () => socket.end());
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: test\r\n\r\n',
      );
      // An echo in capitals: each direction relayed as it is.
      socket.on('data', (chunk: Buffer) => socket.write(chunk.toString().toUpperCase()));
    });
    const { port, socketPath, blocked } = await proxyBefore(upstream, '/v1');

    /** A raw handshake through the proxy's socket; resolves with what came back once `until` matches. */
    const handshake = (path: string, authorization: string, after: string[], until: RegExp) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(socketPath);
        let text = '';
        socket.on('error', reject);
        socket.on('close', () => resolve(text));
        socket.on('data', (chunk) => {
          text += chunk.toString();
          const next = after.shift();
          if (next !== undefined && text.includes('\r\n\r\n')) socket.write(next);
          if (until.test(text)) {
            socket.destroy();
            resolve(text);
          }
        });
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGVzdA==\r\nAuthorization: ${authorization}\r\n\r\nfirst`,
        );
      });

    const relayed = await handshake(
      '/_key/0/responses',
      'Bearer PLACEHOLDER',
      ['second'],
      /FIRSTSECOND|SECOND/,
    );
    expect(relayed).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    expect(relayed).toContain('Sec-WebSocket-Accept: test');
    expect(relayed.slice(relayed.indexOf('\r\n\r\n') + 4)).toMatch(/^FIRST(SECOND)?/);
    expect(seen[0]).toEqual({ url: '/v1/responses', authorization: 'Bearer sk-real', upgrade: 'websocket' });
    // The agent's side gone, the API's connection goes too (the test times out otherwise).
    await upgraded[0];

    // The API refusing the handshake: its answer goes back, and the connection ends.
    const refused = await handshake('/_key/0/responses', 'Bearer other', [], /no access/);
    expect(refused).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    expect(refused).toContain('no access');
    // An upgrade anywhere else is refused and reported, as a request would be.
    const elsewhere = await handshake(`http://127.0.0.1:${port}/v1/responses`, 'x', [], /403/);
    expect(elsewhere).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(blocked).toEqual([`127.0.0.1:${port}`]);
    expect((await handshake('/_key/9/responses', 'x', [], /404/)).startsWith('HTTP/1.1 404')).toBe(true);
    expect(seen.map((s) => s.authorization)).toEqual(['Bearer sk-real', 'Bearer other']);
  });
});
