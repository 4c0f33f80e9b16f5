/**
 * The relay a sandboxed run's agent CLI starts as its curupira MCP server (docs/mcp.md): the
 * server itself needs curupira's settings and state, which the sandbox keeps out of reach, so
 * inside there is only this script, run by the Node.js binary the sandbox already binds. It
 * connects to the run's tools socket in the run's folder (served by the engine outside,
 * src/mcp/socket.ts), names the run on a first line, then passes stdin to the socket and the
 * socket to stdout until either ends.
 *
 *   node mcp-relay.cjs SOCKET RUN_ID
 *
 * Written into the run's folder at each run (CommonJS, no dependencies, no secret: the socket's
 * path and the run id, which the agent's environment carries anyway, are its arguments).
 */

/** The script's file and the socket's, in the run's folder. */
export const RELAY_FILE = 'mcp-relay.cjs';
export const TOOLS_SOCKET = 'tools.sock';

export const RELAY_SOURCE = String.raw`'use strict';
const net = require('node:net');
const [socketPath, runId] = process.argv.slice(2);
if (!socketPath || !runId) {
  process.stderr.write('usage: mcp-relay.cjs SOCKET RUN_ID\n');
  process.exit(2);
}
const socket = net.connect({ path: socketPath, allowHalfOpen: true });
const finish = (code) => process.stdout.write('', () => process.exit(code));
socket.on('connect', () => {
  socket.write('curupira-run ' + runId + '\n');
  process.stdin.pipe(socket);
  socket.pipe(process.stdout, { end: false });
});
socket.on('error', (error) => {
  process.stderr.write('curupira relay: ' + error.message + '\n');
  finish(1);
});
socket.on('end', () => finish(0));
`;

/** The relay's command inside a sandbox whose run folder is mounted at `insideRunDir`. */
export function relayCommand(
  nodeBinary: string,
  insideRunDir: string,
  runId: string,
): { command: string; args: string[] } {
  return {
    command: nodeBinary,
    args: [`${insideRunDir}/${RELAY_FILE}`, `${insideRunDir}/${TOOLS_SOCKET}`, runId],
  };
}
