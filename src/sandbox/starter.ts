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
