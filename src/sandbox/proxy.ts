/**
 * The egress and key proxy of one sandboxed run, listening on a unix socket that is the sandbox's
 * only way out (its network namespace has nothing but its own loopback; a forwarder inside turns
 * `127.0.0.1:PORT` into this socket).
 *
 * - `CONNECT host:port` (HTTPS through `HTTPS_PROXY`): tunnelled when the host is on the
 *   allow-list, else refused with 403 and reported (`onBlocked`).
 * - A plain request in absolute form (`GET http://host/…` through `HTTP_PROXY`): forwarded when
 *   allowed, else refused the same way.
 * - A request to `/_key/<n>/…` (a provider's base URL pointing here; in origin form, or in
 *   absolute form addressed to the proxy's own loopback address): forwarded to key route
 *   `n`'s real base URL, with the placeholder the agent holds replaced by the real key in every
 *   header and in the query. The real key never enters the sandbox. A WebSocket handshake there
 *   (`Upgrade: websocket`, Codex's Responses WebSocket) goes the same way and, once the API accepts
 *   it, both directions are relayed as they are; a handshake the API refuses gets its answer.
 */
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Server, type Socket } from 'node:net';

export interface KeyForward {
  /** The real API base URL (`https://api.anthropic.com`). */
  baseUrl: string;
  /** Each value the agent holds in place of a key, and the real key put on the request for it. */
  swaps: readonly { placeholder: string; key: string }[];
}

export interface EgressProxyOptions {
  socketPath: string;
  /** `host`, `host:port` or `*.domain` (port 443 unless given). */
  allow: readonly string[];
  keys: readonly KeyForward[];
  /**
   * The port the proxy is reached on inside the sandbox: a CONNECT tunnel to that port on loopback
   * (undici's ProxyAgent opens one even to an http:// base URL) leads back into the proxy itself.
   */
  selfPort?: number;
  onBlocked(target: string): void;
}

export interface EgressProxy {
  close(): Promise<void>;
}

/** True when `host:port` is on the allow-list. */
export function hostAllowed(allow: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  for (const entry of allow) {
    const match = /^(.*?)(?::(\d+))?$/.exec(entry.toLowerCase());
    if (!match) continue;
    const pattern = match[1] ?? '';
    const wanted = match[2] ? Number(match[2]) : 443;
    if (wanted !== port) continue;
    if (pattern.startsWith('*.')) {
      if (name.endsWith(pattern.slice(1))) return true;
    } else if (name === pattern) {
      return true;
    }
  }
  return false;
}

function splitTarget(target: string): { host: string; port: number } | undefined {
  const match = /^\[?([^\]\s]+?)\]?:(\d{1,5})$/.exec(target);
  if (!match) return undefined;
  return { host: match[1]!, port: Number(match[2]) };
}

function refuse(socket: Socket, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}

function swap(value: string, key: KeyForward): string {
  let out = value;
  for (const { placeholder, key: real } of key.swaps) out = out.split(placeholder).join(real);
  return out;
}

/**
 * The request's headers for `url`, each value rewritten, the ones that concern only this hop left
 * out (`connection` too, unless the request is an upgrade, which needs it).
 */
function forwardedHeaders(
  req: IncomingMessage,
  url: URL,
  rewrite: (value: string) => string,
  upgrade = false,
): Record<string, string | string[]> {
  const dropped = ['host', 'proxy-connection', 'proxy-authorization', 'keep-alive'];
  if (!upgrade) dropped.push('connection');
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || dropped.includes(name)) continue;
    headers[name] = Array.isArray(value) ? value.map(rewrite) : rewrite(value);
  }
  headers.host = url.host;
  return headers;
}

/** Forwards one request to `url`, headers passed through (hop-by-hop ones dropped). */
function forward(
  req: IncomingMessage,
  res: import('node:http').ServerResponse,
  url: URL,
  rewrite: (value: string) => string,
): void {
  const headers = forwardedHeaders(req, url, rewrite);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const upstream = send(url, { method: req.method ?? 'GET', headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
}

/**
 * Where a request to a key route goes (`/_key/<n>/…` in origin form, or in absolute form addressed to
 * the proxy's own loopback address, as a client that sends everything through `HTTP_PROXY` writes
 * it): the real URL and the route's key; `missing` for a route that does not exist; undefined for
 * a request that is not to a key route.
 */
function keyTarget(
  raw: string,
  keys: readonly KeyForward[],
): { url: URL; key: KeyForward } | 'missing' | undefined {
  const self = /^http:\/\/(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?(\/_key\/.*)$/i.exec(raw);
  const keyed = /^\/_key\/(\d+)(\/.*)?$/.exec(self?.[1] ?? raw);
  if (!keyed) return undefined;
  const key = keys[Number(keyed[1])];
  if (!key) return 'missing';
  const base = key.baseUrl.replace(/\/+$/, '');
  return { url: new URL(base + swap(keyed[2] ?? '/', key)), key };
}

/** The headers of an answer as `Name: value` lines, in the order and case the server sent them. */
function headerLines(rawHeaders: readonly string[], leaveOut: readonly string[] = []): string {
  let text = '';
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (leaveOut.includes(name.toLowerCase())) continue;
    text += `${name}: ${rawHeaders[i + 1]}\r\n`;
  }
  return text;
}

/**
 * Forwards a connection upgrade (a WebSocket handshake) to `url`, the headers rewritten as for a
 * request; once the server switches protocols, the two connections are relayed both ways. An answer
 * without the switch (401, 404, 426) goes back whole and the connection closes.
 */
function forwardUpgrade(
  req: IncomingMessage,
  client: Socket,
  head: Buffer,
  url: URL,
  rewrite: (value: string) => string,
  track: (socket: Socket) => void,
): void {
  const headers = forwardedHeaders(req, url, rewrite, true);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const upstream = send(url, { method: req.method ?? 'GET', headers });
  upstream.on('upgrade', (answer: IncomingMessage, socket: Socket, upstreamHead: Buffer) => {
    track(socket);
    socket.on('error', () => client.destroy());
    client.on('error', () => socket.destroy());
    socket.once('close', () => client.destroy());
    client.once('close', () => socket.destroy());
    client.write(
      `HTTP/1.1 ${answer.statusCode ?? 101} ${answer.statusMessage ?? ''}\r\n${headerLines(answer.rawHeaders)}\r\n`,
    );
    if (upstreamHead.length > 0) client.write(upstreamHead);
    if (head.length > 0) socket.write(head);
    socket.pipe(client);
    client.pipe(socket);
  });
  upstream.on('response', (answer: IncomingMessage) => {
    const chunks: Buffer[] = [];
    answer.on('data', (chunk: Buffer) => chunks.push(chunk));
    answer.on('end', () => {
      const body = Buffer.concat(chunks);
      const lines = headerLines(answer.rawHeaders, ['content-length', 'transfer-encoding', 'connection']);
      client.end(
        Buffer.concat([
          Buffer.from(
            `HTTP/1.1 ${answer.statusCode ?? 502} ${answer.statusMessage ?? ''}\r\n${lines}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
          ),
          body,
        ]),
      );
    });
    answer.on('error', () => client.destroy());
  });
  upstream.on('error', () => {
    if (client.writable) refuse(client, '502 Bad Gateway');
  });
  upstream.end();
}

export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createHttpServer((req, res) => {
    const raw = req.url ?? '/';
    // A client that sends every request through HTTP_PROXY, NO_PROXY unheeded, in absolute form
    // addresses its base URL (the proxy's own loopback address inside) as `http://127.0.0.1:PORT/…`.
    const keyed = keyTarget(raw, options.keys);
    if (keyed === 'missing') {
      res.writeHead(404).end();
      return;
    }
    if (keyed) {
      forward(req, res, keyed.url, (value) => swap(value, keyed.key));
      return;
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      res.writeHead(400).end();
      return;
    }
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    if (url.protocol !== 'http:' || !hostAllowed(options.allow, url.hostname, port)) {
      options.onBlocked(`${url.hostname}:${port}`);
      res.writeHead(403, { 'content-type': 'text/plain' }).end('blocked by the sandbox\n');
      return;
    }
    forward(req, res, url, (value) => value);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => {});
    const target = splitTarget(req.url ?? '');
    if (
      target &&
      options.selfPort !== undefined &&
      target.port === options.selfPort &&
      ['127.0.0.1', 'localhost', '::1'].includes(target.host.toLowerCase())
    ) {
      // Back into this server: what comes through the tunnel is served as a request here.
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) client.unshift(head);
      server.emit('connection', client);
      return;
    }
    if (!target || !hostAllowed(options.allow, target.host, target.port)) {
      options.onBlocked(target ? `${target.host}:${target.port}` : String(req.url ?? '?'));
      refuse(client, '403 Forbidden');
      return;
    }
    const upstream = connect(target.port, target.host);
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => {
      if (client.writable) refuse(client, '502 Bad Gateway');
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  });
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => {});
    const track = (socket: Socket): void => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    };
    const raw = req.url ?? '/';
    const keyed = keyTarget(raw, options.keys);
    if (keyed === 'missing') {
      refuse(client, '404 Not Found');
      return;
    }
    if (keyed) {
      forwardUpgrade(req, client, head, keyed.url, (value) => swap(value, keyed.key), track);
      return;
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      refuse(client, '400 Bad Request');
      return;
    }
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    if (url.protocol !== 'http:' || !hostAllowed(options.allow, url.hostname, port)) {
      options.onBlocked(`${url.hostname}:${port}`);
      refuse(client, '403 Forbidden');
      return;
    }
    forwardUpgrade(req, client, head, url, (value) => value, track);
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => resolveListen());
  });
  return {
    close: () =>
      new Promise<void>((resolveClose) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolveClose());
      }),
  };
}
