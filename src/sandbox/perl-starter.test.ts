/**
 * The Perl starter of a sandbox started early (`PERL_LATE_STARTER`), run here without a sandbox
 * (its own behaviour, not bubblewrap's): it listens, says so on fd 4, waits for `go`, then starts
 * exactly the launch file's program with exactly its environment; its forwarder relays each
 * connection to the egress proxy's unix socket byte for byte, both ways, half-closes included; and
 * a forwarder that cannot listen stops it before anything is started.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { AWKWARD_ARGS } from '../../test/helpers/awkward-argv.js';
import { findExecutable } from '../process/env.js';
import { launchFileContent, PERL_LATE_STARTER } from './starter.js';

const perl = findExecutable('perl', '/usr/bin:/bin');

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'perl-starter-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A free port on the loopback (closed again at once; the starter binds it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The egress proxy's stand-in: a unix socket server that answers each connection with `handle`. */
async function upstream(path: string, handle: (socket: Socket) => void): Promise<Server> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(() => server.close());
  return server;
}

interface Started {
  child: ChildProcess;
  channel: Duplex;
  /** Everything the starter said on fd 4. */
  said: () => string;
  saidLine(line: string): Promise<void>;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(port: number, socket: string, launch: string): Started {
  const child = spawn(perl!, ['-e', PERL_LATE_STARTER, String(port), socket, launch], {
    env: { PATH: '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'pipe', 'ignore', 'pipe'],
  });
  cleanups.push(() => child.kill('SIGKILL'));
  const channel = child.stdio[4] as Duplex;
  let said = '';
  let out = '';
  let err = '';
  const waiters: (() => void)[] = [];
  channel.on('data', (chunk: Buffer) => {
    said += chunk.toString('utf8');
    for (const wake of waiters.splice(0)) wake();
  });
  channel.on('error', () => {});
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    channel,
    said: () => said,
    async saidLine(line) {
      while (!said.split('\n').includes(line)) {
        if (child.exitCode !== null) throw new Error(`the starter exited; it said ${JSON.stringify(said)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    stdout: () => out,
    stderr: () => err,
    exited,
  };
}

/** A Node.js program for the launch file: `node -e SCRIPT ARGS…`. */
function node(script: string, ...args: string[]): { executable: string; args: string[] } {
  return { executable: process.execPath, args: ['-e', script, ...args] };
}

/** Kills the forwarder the agent left (outside a sandbox nothing ends it), from the pids it printed. */
function killPrinted(output: string): void {
  for (const match of output.matchAll(/^children=(.*)$/gm))
    for (const pid of (match[1] ?? '').split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone
      }
    }
}

const PRINT_CHILDREN = `process.stdout.write('children=' + require('fs').readFileSync('/proc/' + process.pid + '/task/' + process.pid + '/children', 'utf8') + '\\n');`;

describe.skipIf(!perl)('the Perl starter', () => {
  it('listens, waits for go, then starts exactly the launch file program with exactly its environment', async () => {
    const dir = scratch();
    const port = await freePort();
    const launch = join(dir, 'launch');
    const program = node(
      `${PRINT_CHILDREN} process.stdout.write(JSON.stringify({ argv: process.argv.slice(1), env: process.env }) + '\\n'); process.exit(7);`,
      ...AWKWARD_ARGS,
    );
    const env = { PATH: '/usr/bin:/bin', ODD: 'a=b c', EMPTY: '', 'WITH.DOT': '1', NEWLINE: 'x\ny' };
    const started = start(port, join(dir, 'egress.sock'), launch);
    await started.saidLine('listening');
    // Nothing is started before go: the launch file does not exist yet.
    expect(existsSync(launch)).toBe(false);
    writeFileSync(launch, launchFileContent(env, program.executable, program.args)!, { mode: 0o400 });
    started.channel.write('go\n');
    const { code } = await started.exited;
    killPrinted(started.stdout());
    expect(code, started.stderr()).toBe(7);
    expect(started.said()).toBe('listening\nlaunched\n');
    const printed = JSON.parse(
      started
        .stdout()
        .split('\n')
        .find((line) => line.startsWith('{'))!,
    );
    expect(printed.argv).toEqual(['two words', "it's $HOME `id` \\", 'line\nbreak', '', 'x=y', '-i']);
    expect(printed.env).toEqual(env);
  });

  it('relays each connection to the unix socket byte for byte, both ways, with half-closes', async () => {
    const dir = scratch();
    const port = await freePort();
    const socket = join(dir, 'egress.sock');
    // The stand-in reads all a connection sends, then answers with its digest and a MiB of its own.
    const reply = randomBytes(1 << 20);
    await upstream(socket, (connection) => {
      const hash = createHash('sha256');
      connection.on('data', (chunk) => hash.update(chunk));
      connection.on('end', () => {
        connection.write(`${hash.digest('hex')}\n`);
        connection.end(reply);
      });
    });
    const launch = join(dir, 'launch');
    // Three connections at once, each sending a MiB in uneven writes, then closing its side only.
    const client = `
      ${PRINT_CHILDREN}
      const net = require('net');
      const crypto = require('crypto');
      const one = (n) => new Promise((resolve, reject) => {
        const sent = crypto.randomBytes(1 << 20);
        const c = net.connect(${port}, '127.0.0.1', () => {
          for (let at = 0; at < sent.length; at += 7919 + n) c.write(sent.subarray(at, at + 7919 + n));
          c.end();
        });
        const got = [];
        c.on('data', (d) => got.push(d));
        c.on('error', reject);
        c.on('end', () => {
          const all = Buffer.concat(got);
          const line = all.indexOf(10);
          resolve({
            digestOk: all.subarray(0, line).toString() === crypto.createHash('sha256').update(sent).digest('hex'),
            reply: crypto.createHash('sha256').update(all.subarray(line + 1)).digest('hex'),
          });
        });
      });
      Promise.all([one(0), one(1), one(2)]).then((r) => { console.log(JSON.stringify(r)); process.exit(0); },
        (e) => { console.error(e.message); process.exit(1); });
    `;
    const program = node(client);
    writeFileSync(launch, launchFileContent({ PATH: '/usr/bin:/bin' }, program.executable, program.args)!);
    const started = start(port, socket, launch);
    await started.saidLine('listening');
    started.channel.write('go\n');
    const { code } = await started.exited;
    killPrinted(started.stdout());
    expect(code, started.stderr()).toBe(0);
    const results = JSON.parse(
      started
        .stdout()
        .split('\n')
        .find((line) => line.startsWith('['))!,
    );
    const expected = createHash('sha256').update(reply).digest('hex');
    expect(results).toEqual([0, 1, 2].map(() => ({ digestOk: true, reply: expected })));
  });

  it('holds none of the agent output pipes: its output ends when the agent exits', async () => {
    const dir = scratch();
    const port = await freePort();
    const launch = join(dir, 'launch');
    const program = node(`${PRINT_CHILDREN}`);
    writeFileSync(launch, launchFileContent({ PATH: '/usr/bin:/bin' }, program.executable, program.args)!);
    const started = start(port, join(dir, 'egress.sock'), launch);
    await started.saidLine('listening');
    started.channel.write('go\n');
    // 'close' waits for stdout and stderr to end: the forwarder, still alive, holds neither.
    const { code } = await started.exited;
    const forwarders = [...started.stdout().matchAll(/^children=(.*)$/gm)].flatMap((m) =>
      (m[1] ?? '').split(/\s+/).filter(Boolean),
    );
    expect(forwarders.length).toBe(1);
    expect(existsSync(`/proc/${forwarders[0]}`)).toBe(true);
    killPrinted(started.stdout());
    expect(code, started.stderr()).toBe(0);
  });

  it('a forwarder that cannot listen stops it with the reason, and nothing is started', async () => {
    const dir = scratch();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => taken.close());
    const { port } = taken.address() as { port: number };
    const marker = join(dir, 'started');
    const launch = join(dir, 'launch');
    const program = node(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`);
    writeFileSync(launch, launchFileContent({ PATH: '/usr/bin:/bin' }, program.executable, program.args)!);
    // As curupira does, no go before the starter says it listens (it never does here).
    const started = start(port, join(dir, 'egress.sock'), launch);
    const { code } = await started.exited;
    expect(code, started.stderr()).toBe(126);
    expect(started.said(), started.stderr()).toMatch(
      /^E the proxy forwarder cannot listen on 127\.0\.0\.1:\d+: /,
    );
    expect(started.stderr()).toMatch(/sandbox: the proxy forwarder cannot listen/);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses an incomplete launch file, and an answer other than go', async () => {
    const dir = scratch();
    const launch = join(dir, 'launch');
    writeFileSync(launch, '3\0A=1\0/bin/true\0');
    const incomplete = start(await freePort(), join(dir, 'egress.sock'), launch);
    await incomplete.saidLine('listening');
    incomplete.channel.write('go\n');
    expect((await incomplete.exited).code).toBe(126);
    expect(incomplete.said()).toContain('E the launch file is incomplete');

    const refused = start(await freePort(), join(dir, 'egress.sock'), launch);
    await refused.saidLine('listening');
    refused.channel.end('stop\n');
    expect((await refused.exited).code).toBe(126);
    expect(refused.stderr()).toContain('the proxy forwarder did not start');
  });
});
