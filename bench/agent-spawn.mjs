/**
 * Agent spawn benchmark (issue 31): what starting an agent costs the engine's main thread, from
 * the engine's own process (as `spawnAgent` does today) and from a small long-lived helper that
 * starts it and hands it sockets of the engine's as its stdout and stderr (the agent then writes
 * straight into the engine; the helper only reports its pid and its exit).
 *
 * The engine here is this process, made as heavy as a daemon by touched ballast (`--ballast`, MiB,
 * a list); the agent is a `/bin/sh` script printing a few lines to stdout and one to stderr (or
 * `--bytes` of stdout). Per mode and concurrency: wall time per run, this process's CPU time per
 * run (user + system: a fork's page-table copy is counted here), and the event loop's longest
 * stall. Every run's output is checked byte for byte, so the socket path is shown not to lose any.
 *
 *   node bench/run.mjs agent-spawn, or
 *   node bench/agent-spawn.mjs [--runs N] [--ballast 0,150,350] [--concurrency 1,4] [--bytes N] [--rounds R]
 */

import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

export const name = 'agent-spawn';

const HELPER_SOURCE = String.raw`'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
const send = (m) => { try { process.stdout.write(JSON.stringify(m) + '\n'); } catch {} };
function connect(path, header) {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(path);
    socket.once('error', reject);
    socket.once('connect', () => socket.write(header + '\n', () => resolve(socket)));
  });
}
async function start(r) {
  let out, err;
  try {
    [out, err] = await Promise.all([connect(r.socket, r.id + ':1'), connect(r.socket, r.id + ':2')]);
  } catch (error) {
    send({ id: r.id, t: 'error', message: String(error.message) });
    return;
  }
  let child;
  try {
    child = spawn(r.file, r.args, { cwd: r.cwd, env: r.env, detached: true, shell: false,
      stdio: ['ignore', out, err] });
  } catch (error) {
    out.destroy(); err.destroy();
    send({ id: r.id, t: 'error', message: String(error.message) });
    return;
  }
  // The agent holds its own copies: ours are closed so that the engine sees the end when it ends.
  out.destroy(); err.destroy();
  child.once('error', (error) => send({ id: r.id, t: 'error', message: String(error.message) }));
  child.once('spawn', () => send({ id: r.id, t: 'started', pid: child.pid }));
  child.once('exit', (code, signal) => send({ id: r.id, t: 'exit', code, signal }));
}
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text) => {
  buffer += text;
  let n;
  while ((n = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, n);
    buffer = buffer.slice(n + 1);
    try { start(JSON.parse(line)); } catch {}
  }
});
`;

function argValue(flag, fallback) {
  const at = process.argv.indexOf(flag);
  return at === -1 ? fallback : process.argv[at + 1];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function makeAgent(dir, bytes) {
  const path = join(dir, 'agent');
  const body =
    bytes > 0
      ? `head -c ${bytes} /dev/zero | tr '\\0' 'a'\necho\necho done >&2\n`
      : `echo '{"type":"system","subtype":"init","session_id":"0"}'\necho '{"type":"result","subtype":"success","result":"nothing to do"}'\necho 'a warning' >&2\n`;
  writeFileSync(path, `#!/bin/sh\n${body}`);
  chmodSync(path, 0o755);
  return path;
}

/** What the agent prints, to check every run's output against. */
async function expectedOutput(agent) {
  const child = spawn(agent, [], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = [];
  const err = [];
  child.stdout.on('data', (c) => out.push(c));
  child.stderr.on('data', (c) => err.push(c));
  await new Promise((r) => child.once('close', r));
  return { out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() };
}

function directRun(agent, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(agent, [], { cwd: tmpdir(), env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.once('error', reject);
    child.once('close', (code, signal) =>
      resolve({ code, signal, pid: child.pid, out: Buffer.concat(out), err: Buffer.concat(err) }),
    );
  });
}

class Helper {
  constructor(dir) {
    this.runs = new Map();
    this.nextId = 1;
    this.socketPath = join(dir, 'engine.sock');
    this.server = createServer((socket) => this.accept(socket));
    this.child = spawn(process.execPath, ['-e', HELPER_SOURCE], {
      env: {},
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let buffer = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text) => {
      buffer += text;
      for (let n = buffer.indexOf('\n'); n !== -1; n = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, n));
        buffer = buffer.slice(n + 1);
        const run = this.runs.get(message.id);
        if (!run) continue;
        if (message.t === 'started') run.pid = message.pid;
        else if (message.t === 'exit') run.exit = message;
        else run.reject(new Error(message.message));
        this.settle(run);
      }
    });
  }

  listen() {
    return new Promise((resolve) => this.server.listen(this.socketPath, resolve));
  }

  accept(socket) {
    let head = Buffer.alloc(0);
    let run;
    let fd;
    socket.on('data', (chunk) => {
      if (run) {
        run[fd].push(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const n = head.indexOf(10);
      if (n === -1) return;
      const [id, which] = head.subarray(0, n).toString().split(':');
      run = this.runs.get(Number(id));
      fd = which === '1' ? 'out' : 'err';
      const rest = head.subarray(n + 1);
      if (rest.length) run[fd].push(rest);
    });
    socket.once('close', () => {
      if (!run) return;
      run.closed += 1;
      this.settle(run);
    });
  }

  settle(run) {
    if (run.exit && run.closed === 2) {
      this.runs.delete(run.id);
      run.resolve({
        code: run.exit.code,
        signal: run.exit.signal,
        pid: run.pid,
        out: Buffer.concat(run.out),
        err: Buffer.concat(run.err),
      });
    }
  }

  run(agent, env) {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.runs.set(id, { id, resolve, reject, out: [], err: [], closed: 0, exit: undefined, pid: 0 });
      const request = { id, socket: this.socketPath, file: agent, args: [], cwd: tmpdir(), env };
      this.child.stdin.write(`${JSON.stringify(request)}\n`);
    });
  }

  close() {
    this.child.stdin.end();
    this.server.close();
  }
}

async function measure(start, runs, concurrency, expected) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  const cpu = process.cpuUsage();
  const began = performance.now();
  histogram.enable();
  let next = 0;
  let bad = 0;
  const worker = async () => {
    while (next < runs) {
      next += 1;
      const result = await start();
      if (
        result.code !== 0 ||
        result.out.toString() !== expected.out ||
        result.err.toString() !== expected.err
      )
        bad += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  histogram.disable();
  const wall = performance.now() - began;
  const used = process.cpuUsage(cpu);
  return {
    wallMs: wall / runs,
    cpuMs: (used.user + used.system) / 1000 / runs,
    stallMaxMs: histogram.max / 1e6,
    stallP99Ms: histogram.percentile(99) / 1e6,
    bad,
  };
}

export async function run({ log = console.log } = {}) {
  const runs = Number(argValue('--runs', '100'));
  const rounds = Number(argValue('--rounds', '3'));
  const bytes = Number(argValue('--bytes', '0'));
  const ballasts = argValue('--ballast', '0,150,350').split(',').map(Number);
  const concurrencies = argValue('--concurrency', '1,4').split(',').map(Number);
  const dir = mkdtempSync(join(tmpdir(), 'curupira-agent-spawn-'));
  const agent = makeAgent(dir, bytes);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const expected = await expectedOutput(agent);
  const helper = new Helper(dir);
  await helper.listen();
  await helper.run(agent, env); // warm: the helper has started
  const ballast = [];
  const rows = [];
  try {
    for (const mib of ballasts) {
      while (ballast.length < mib) ballast.push(Buffer.alloc(1024 * 1024, 1));
      ballast.length = mib;
      const rssMiB = Math.round(process.memoryUsage().rss / 2 ** 20);
      for (const concurrency of concurrencies) {
        const figures = { direct: [], helper: [] };
        for (let round = 0; round < rounds; round++) {
          const order = round % 2 ? ['helper', 'direct'] : ['direct', 'helper'];
          for (const mode of order) {
            const start = mode === 'direct' ? () => directRun(agent, env) : () => helper.run(agent, env);
            figures[mode].push(await measure(start, runs, concurrency, expected));
          }
        }
        for (const mode of ['direct', 'helper']) {
          const list = figures[mode];
          const row = {
            rssMiB,
            concurrency,
            mode,
            wallMs: median(list.map((f) => f.wallMs)),
            cpuMs: median(list.map((f) => f.cpuMs)),
            stallMaxMs: median(list.map((f) => f.stallMaxMs)),
            stallP99Ms: median(list.map((f) => f.stallP99Ms)),
            bad: list.reduce((sum, f) => sum + f.bad, 0),
          };
          rows.push(row);
          log(
            `rss ${String(rssMiB).padStart(4)} MiB  c=${concurrency}  ${mode.padEnd(6)}  wall ${row.wallMs.toFixed(2)} ms/run  engine CPU ${row.cpuMs.toFixed(2)} ms/run  stall p99 ${row.stallP99Ms.toFixed(1)} max ${row.stallMaxMs.toFixed(1)} ms  bad ${row.bad}`,
          );
        }
      }
    }
  } finally {
    helper.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
