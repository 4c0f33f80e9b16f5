/**
 * The CLI's side of the control socket: JSON requests and server-sent events over the unix socket
 * in the state folder, with the token from the same folder. `undefined` means no daemon answers.
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { socketPath } from './listen.js';
import { readToken } from './token.js';

export interface DaemonAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface Daemon {
  /** `body`: sent as JSON. */
  call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<DaemonAnswer>;
  /** Server-sent events of `path`, until the stream ends. */
  events(path: string, onEvent: (event: string, data: string) => void): Promise<void>;
}

function open(socket: string, token: string, method: string, path: string, body?: unknown) {
  return new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
    const json = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath: socket,
        method,
        path,
        headers: {
          authorization: `Bearer ${token}`,
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      resolve,
    );
    req.on('error', reject);
    req.end(json);
  });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

function daemonAt(socket: string, token: string): Daemon {
  return {
    async call(method, path, body) {
      const response = await open(socket, token, method, `/api/v1${path}`, body);
      const text = await readAll(response);
      return { status: response.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> };
    },
    async events(path, onEvent) {
      const response = await open(socket, token, 'GET', `/api/v1${path}`);
      let buffer = '';
      for await (const chunk of response) {
        buffer += chunk.toString();
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
          const data = [...block.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join('\n');
          onEvent(event, data);
          end = buffer.indexOf('\n\n');
        }
      }
    },
  };
}

/** The running daemon of this state folder, or undefined when none answers its socket. */
export async function connectDaemon(stateDir: string): Promise<Daemon | undefined> {
  const socket = socketPath(stateDir);
  const token = readToken(stateDir);
  if (!existsSync(socket) || !token) return undefined;
  const daemon = daemonAt(socket, token);
  try {
    const health = await daemon.call('GET', '/health');
    return health.status === 200 ? daemon : undefined;
  } catch {
    return undefined;
  }
}
