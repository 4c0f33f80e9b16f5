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
 * waits until its port listens (the sandbox's own /proc/net/tcp), then `exec`s the agent, which
 * thus gets signals and gives its exit code directly. The script is a constant; the port, the
 * socket and the agent's argv arrive as positional arguments, never as shell text.
 *
 *   sh -c SHELL_STARTER sh PORT_HEX PORT SOCKET EXECUTABLE ARGS…
 */
export const SHELL_STARTER = [
  'hex="$1"; port="$2"; sock="$3"; shift 3',
  'socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork" "UNIX-CONNECT:$sock" </dev/null >/dev/null 2>&1 &',
  'i=0',
  'until grep -q ":$hex 00000000:0000 0A" /proc/net/tcp 2>/dev/null; do',
  '  i=$((i + 1)); if [ "$i" -gt 500 ]; then echo "sandbox: the proxy forwarder did not start" >&2; exit 126; fi',
  '  sleep 0.01',
  'done',
  'exec "$@"',
].join('\n');

/** The port as /proc/net/tcp writes it (upper-case hex, four digits). */
export function procNetPort(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, '0');
}
