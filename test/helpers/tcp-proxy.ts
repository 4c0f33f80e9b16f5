/**
 * A TCP proxy for tests that cut one process off from a server (issue 17: a fleet worker that loses
 * PostgreSQL). It listens on 127.0.0.1 at a free port and forwards every connection to the target;
 * `cut()` destroys every connection and refuses new ones (as a broken network would), `restore()`
 * forwards again.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections forwarded so far (cut or not). */
  readonly connections: number;
  /** True while connections are refused. */
  readonly isCut: boolean;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let cut = false;
  let connections = 0;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (cut) {
      client.destroy();
      return;
    }
    connections += 1;
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
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
    get isCut() {
      return cut;
    },
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      cut = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
