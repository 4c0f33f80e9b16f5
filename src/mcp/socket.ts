/**
 * One run's tools on a unix socket (a sandboxed run: docs/mcp.md). The engine listens in the
 * sandbox's run folder; inside, the agent's CLI starts the relay (src/sandbox/relay.ts), which
 * connects, names the run on a first line (`curupira-run <id>`), then passes the MCP stdio session
 * through. Each connection is one session served by `serveStdio`, with the tools
 * `curupira mcp --run` serves for that run (src/mcp/run-tools.ts). A connection naming another run,
 * or none, is answered with a JSON-RPC error and closed: the socket grants this run's tools and
 * nothing else. The socket file is made mode 0600.
 */
import { chmodSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { type McpTool, RPC, type ServerInfo, serveStdio } from './stdio.js';

/** The first line a relay sends: `curupira-run <run id>`. */
export const RUN_HEADER = 'curupira-run';
/** The longest first line read before the connection is refused. */
const MAX_HEADER = 512;

export interface RunSocketOptions {
  socketPath: string;
  runId: string;
  /** The tools of a new session (read at each connection: the run's record may have moved on). */
  session(): Promise<{ tools: readonly McpTool[]; info: ServerInfo }>;
  onError(error: unknown): void;
}

export interface RunSocket {
  close(): Promise<void>;
}

function refuse(socket: Socket, message: string): void {
  socket.end(
    `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: RPC.invalidRequest, message } })}\n`,
  );
}

/** Reads the first line, then hands the rest of the stream to `then`. */
function afterHeader(socket: Socket, then: (header: string, rest: PassThrough) => void): void {
  let buffered = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf(0x0a);
    if (end < 0) {
      if (buffered.length > MAX_HEADER) {
        socket.off('data', onData);
        refuse(socket, 'this socket expects the run id first');
      }
      return;
    }
    socket.off('data', onData);
    const rest = new PassThrough();
    rest.write(buffered.subarray(end + 1));
    socket.pipe(rest);
    then(buffered.subarray(0, end).toString('utf8').trim(), rest);
  };
  socket.on('data', onData);
}

export async function serveRunSocket(options: RunSocketOptions): Promise<RunSocket> {
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    afterHeader(socket, (header, rest) => {
      if (header !== `${RUN_HEADER} ${options.runId}`) {
        refuse(socket, `this socket serves the tools of run ${options.runId} only`);
        return;
      }
      void (async () => {
        const { tools, info } = await options.session();
        await serveStdio(rest, { write: (text) => socket.write(text) }, tools, info, options.onError);
      })()
        .catch((error: unknown) => {
          options.onError(error);
          refuse(socket, 'the run’s tools cannot be served');
        })
        .finally(() => {
          if (!socket.writableEnded) socket.end();
        });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Only curupira's user (the agent inside its sandbox runs as that user): never the group or others.
  chmodSync(options.socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
