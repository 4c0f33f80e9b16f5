/**
 * A TCP proxy for tests that cut one process off from a server (issue 17: a fleet worker that loses
 * PostgreSQL). It listens on 127.0.0.1 at a free port and forwards every connection to the target.
 * `cut()` destroys every connection and refuses new ones (a peer that resets: errors come at once);
 * `blackhole()` keeps every connection open but forwards nothing, and accepts new ones that never
 * reach the server (a network that drops packets: only timeouts tell). `restore()` forwards again
 * (connections held by a blackhole are closed, as they would have timed out).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections forwarded so far. */
  readonly connections: number;
  /** Local ports of the open connections to the target (a server's `client_port` of each). */
  upstreamPorts(): number[];
  readonly mode: 'open' | 'cut' | 'blackhole';
  cut(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream?: Socket;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let mode: TcpProxy['mode'] = 'open';
  let connections = 0;
  const destroy = (pair: Pair): void => {
    pair.client.destroy();
    pair.upstream?.destroy();
    pairs.delete(pair);
  };
  const server: Server = createServer((client) => {
    const pair: Pair = { client };
    client.on('error', () => destroy(pair));
    client.on('close', () => destroy(pair));
    if (mode === 'cut') {
      client.destroy();
      return;
    }
    pairs.add(pair);
    if (mode === 'blackhole') return; // held, never forwarded
    connections += 1;
    const upstream = connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('error', () => destroy(pair));
    upstream.on('close', () => destroy(pair));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port');
  return {
    port: address.port,
    get connections() {
      return connections;
    },
    get mode() {
      return mode;
    },
    upstreamPorts() {
      return [...pairs].flatMap((pair) => (pair.upstream?.localPort ? [pair.upstream.localPort] : []));
    },
    cut() {
      mode = 'cut';
      for (const pair of [...pairs]) destroy(pair);
    },
    blackhole() {
      mode = 'blackhole';
      for (const { client, upstream } of pairs) {
        if (!upstream) continue;
        client.unpipe(upstream);
        upstream.unpipe(client);
        // Read and drop: nothing gets through either way, and nothing tells either side.
        client.on('data', () => {});
        upstream.on('data', () => {});
      }
    },
    restore() {
      if (mode === 'blackhole') for (const pair of [...pairs]) destroy(pair);
      mode = 'open';
    },
    async close() {
      for (const pair of [...pairs]) destroy(pair);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
