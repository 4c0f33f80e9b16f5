/**
 * The first process inside a sandbox: a forwarder from `127.0.0.1:PORT` (the sandbox's own
 * loopback, where `HTTPS_PROXY` and the providers' base URLs point) to the egress proxy's unix
 * socket (bound in; the sandbox has no other network), then the agent itself, started without a
 * shell with the argv it was given; its exit code (or signal) becomes the starter's. SIGTERM and
 * SIGINT are passed on to the agent.
 *
 *   node starter.cjs PORT SOCKET EXECUTABLE ARGS…
 *
 * Written into the run's folder at each run (CommonJS, no dependencies, no file in the package).
 */
import type { Duplex } from 'node:stream';

export const STARTER_SOURCE = String.raw`'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [port, socketPath, executable, ...args] = process.argv.slice(2);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
server.on('error', (error) => {
  process.stderr.write('sandbox: cannot listen on 127.0.0.1:' + port + ': ' + error.message + '\n');
  process.exit(126);
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(executable, args, { stdio: 'inherit', shell: false });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    process.on(signal, () => { try { child.kill(signal); } catch {} });
  }
  child.on('error', (error) => {
    process.stderr.write('sandbox: cannot start ' + executable + ': ' + error.message + '\n');
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    server.close();
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); return; }
    process.exit(code == null ? 1 : code);
  });
});
`;

/**
 * The same starter without a Node.js start-up (about 40 ms, several times that on a loaded
 * machine): where `socat` is installed, a fixed POSIX shell script starts it as the forwarder,
 * waits on fd 4 (a socket to curupira, which reads socat's log there and answers `go` once it
 * says it listens: no polling, no extra process), then `exec`s the agent with fd 4 closed, which
 * thus gets signals and gives its exit code directly. The script is a constant; the port, the
 * socket and the agent's argv arrive as positional arguments, never as shell text.
 *
 *   sh -c SHELL_STARTER sh PORT SOCKET EXECUTABLE ARGS…
 */
export const SHELL_STARTER = [
  'port="$1"; sock="$2"; shift 2',
  'socat -d -d "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$sock" </dev/null >/dev/null 2>&4 &',
  'read -r answer <&4',
  'if [ "$answer" != go ]; then echo "sandbox: the proxy forwarder did not start" >&2; exit 126; fi',
  'exec "$@" 4<&-',
].join('\n');

/** The fd on which the shell starter waits for curupira's `go`. */
export const STARTER_CHANNEL_FD = 4;

/** How long the forwarder may take to listen before the run fails. */
const FORWARDER_START_MS = 60_000;

/**
 * curupira's side of fd 4: socat's log arrives there (`-d -d`: "N listening on …" once its port
 * listens); the answer is `go`, or the socket is closed when socat reports an error, exits or
 * takes too long (the starter then exits 126). What follows (socat's log of each connection) is
 * read and dropped.
 */
export function answerStarter(socket: Duplex): void {
  let seen = '';
  let answered = false;
  const answer = (ok: boolean): void => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    if (ok) socket.write('go\n');
    else socket.destroy();
  };
  const timer = setTimeout(() => answer(false), FORWARDER_START_MS);
  timer.unref();
  socket.on('data', (chunk: Buffer) => {
    if (answered) return;
    seen = (seen + chunk.toString('utf8')).slice(-8192);
    if (/ N listening on /.test(seen)) answer(true);
    else if (/ [EF] /.test(seen)) answer(false);
  });
  socket.on('error', () => answer(false));
  socket.on('close', () => answer(false));
}
