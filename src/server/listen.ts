/**
 * The listeners of `curupira serve`: HTTP on 127.0.0.1 (another host only when asked), and a unix
 * socket in the state folder (mode 0600) for the CLI. Both serve the same application.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';

export const SOCKET_FILE = 'serve.sock';

export function socketPath(stateDir: string): string {
  return join(stateDir, SOCKET_FILE);
}

/** Unix socket paths longer than this do not fit `sockaddr_un` on Linux. */
const MAX_SOCKET_PATH = 107;

export interface Listening {
  url: string;
  port: number;
  /** The unix socket, unless its path is too long for the system. */
  socket: string | undefined;
  close(): Promise<void>;
}

function listen(server: Server, ...args: [number, string] | [string]): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(...(args as [number, string]), () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startListeners(
  app: Hono,
  options: { host: string; port: number; stateDir: string },
): Promise<Listening> {
  const http = createAdaptorServer({ fetch: app.fetch }) as Server;
  await listen(http, options.port, options.host);
  const port = (http.address() as AddressInfo).port;
  const path = socketPath(options.stateDir);
  let unix: Server | undefined;
  if (path.length <= MAX_SOCKET_PATH) {
    // The caller holds the state lock: a socket file left here belongs to a daemon that died.
    if (existsSync(path)) unlinkSync(path);
    unix = createAdaptorServer({ fetch: app.fetch }) as Server;
    await listen(unix, path);
    chmodSync(path, 0o600);
  }
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${shownHost}:${port}/`,
    port,
    socket: unix ? path : undefined,
    async close() {
      await closeServer(http);
      if (unix) {
        await closeServer(unix);
        if (existsSync(path)) unlinkSync(path);
      }
    },
  };
}
