/**
 * Agents (and a sandbox started ahead of its agent) spawned from a small long-lived helper process
 * instead of from this one.
 *
 * Node forks on the main thread and waits there for the child's `exec`, and a fork costs time in
 * proportion to the forking process's memory (bench/README.md, "The agent's spawn from a helper"):
 * while a daemon forks, every run's event loop stands still. The helper is a bare Node process
 * that forks cheaply. Unlike the command helper (`spawner.ts`), whose short commands hand their
 * whole output back in one line, an agent's output must flow as it is written and must survive the
 * helper: so the agent writes straight into this process. This process listens on a unix socket in
 * a private (0700) folder; for each agent the helper opens one connection per stream, each starting
 * with `token id index\n`, then spawns the agent with the stdout and stderr connections as its
 * fds 1 and 2 and closes its own copies. No round trip through this process's event loop stands
 * before the spawn. The sandbox's gate (fd 3) and control channel (fd 4) are relayed through the
 * helper (they carry a few bytes, and a socket handed over as fd 3 or 4 would stay non-blocking in
 * the child).
 *
 * Safety and never twice: argv arrays only (`shell: false`), the environment passed whole for every
 * agent, the helper itself runs with an empty one and learns the socket and its 128-bit token on
 * its stdin (never its argv). A connection with another token, or for an agent not waiting for it,
 * is closed. Right before it spawns, the helper says so on its stdout (a pipe, written at once), so
 * if the helper is lost before that line the agent was never started and the caller spawns it
 * directly; if it is lost after, the agent is never started again: a start without its pid fails,
 * and an agent whose pid is known is watched by its pid until it is gone (its exit status is then
 * unknown). When this process dies, the helper sees its stdin close and exits without touching the
 * agents, which lead groups of their own; the next process's recovery finds them as before.
 *
 * The first agent after a while without one spawns directly while the helper starts, so the helper
 * never delays an agent; it exits once idle.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex, Readable, Writable } from 'node:stream';
import { jsonLineReader } from './output.js';
import { signalGroup, sweepDeadOwners } from './process-group.js';

/** What runs in the helper (`node -e`): CommonJS, no dependencies, no file of its own. */
const HELPER_SOURCE = String.raw`'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
let where = null, token = null;
const send = (message) => { try { process.stdout.write(JSON.stringify(message) + '\n'); } catch {} };
process.stdout.on('error', () => {});
const noop = () => {};
function connect(id, index, opened) {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(where);
    opened.push(socket);
    let ready = false;
    socket.on('error', (error) => { if (!ready) reject(error); });
    socket.once('close', () => { if (!ready) reject(new Error('closed before the agent started')); });
    socket.once('connect', () => {
      socket.pause();
      socket.write(token + ' ' + id + ' ' + index + '\n', (error) => {
        if (error) return reject(error);
        ready = true;
        resolve(socket);
      });
    });
  });
}
async function start(request) {
  const opened = [];
  const streams = 2 + (request.gate ? 1 : 0) + (request.channel ? 1 : 0);
  let sockets;
  try {
    sockets = await Promise.all(Array.from({ length: streams }, (_, index) => connect(request.id, index, opened)));
  } catch (error) {
    for (const socket of opened) socket.destroy();
    send({ id: request.id, t: 'unstarted', message: String(error && error.message) });
    return;
  }
  // Said before the spawn, on a pipe (written synchronously): were this helper lost from here on,
  // the engine knows the agent may run and never starts it again.
  send({ id: request.id, t: 'spawning' });
  const [out, err, ...relayed] = sockets;
  const gate = request.gate ? relayed.shift() : null;
  const channel = request.channel ? relayed.shift() : null;
  let child;
  try {
    child = spawn(request.file, request.args, {
      cwd: request.cwd, env: request.env, detached: true, shell: false, windowsHide: true,
      stdio: ['ignore', out, err, ...(gate || channel ? [gate ? 'pipe' : 'ignore'] : []), ...(channel ? ['pipe'] : [])],
    });
  } catch (error) {
    for (const socket of sockets) socket.destroy();
    send({ id: request.id, t: 'error', code: error.code, message: String(error.message) });
    return;
  }
  // The agent holds its own copies of fds 1 and 2 now; closing ours never ends its streams.
  out.destroy();
  err.destroy();
  let spawned = false;
  child.once('error', (error) => {
    if (spawned) return;
    for (const socket of sockets) socket.destroy();
    send({ id: request.id, t: 'error', code: error.code, message: String(error.message) });
  });
  child.once('spawn', () => {
    spawned = true;
    send({ id: request.id, t: 'started', pid: child.pid });
  });
  child.once('exit', (code, signal) => send({ id: request.id, t: 'exit', code, signal }));
  for (const [socket, fd] of [[gate, 3], [channel, 4]]) {
    if (!socket) continue;
    const pipe = child.stdio[fd];
    socket.on('error', noop);
    if (!pipe) { socket.destroy(); continue; }
    pipe.on('error', noop);
    socket.pipe(pipe);
    if (fd === 4) pipe.pipe(socket);
    socket.once('close', () => pipe.destroy());
    pipe.once('close', () => socket.destroy());
  }
}
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('end', () => process.exit(0));
process.stdin.on('data', (text) => {
  buffer += text;
  let newline;
  while ((newline = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    let message;
    try { message = JSON.parse(line); } catch { continue; }
    if (message.t === 'hello') { where = message.socket; token = message.token; send({ t: 'ready' }); }
    else if (message.t === 'spawn' && where) start(message);
  }
});
`;

export interface AgentSpawnRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** A pipe as fd 3 that the caller writes to (bubblewrap's `--block-fd`). */
  gate?: boolean;
  /** A socket as fd 4 for a conversation with the process (a sandbox's starter). */
  channel?: boolean;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The helper was lost while the process ran: it was watched by its pid, its status is unknown. */
  unknown?: boolean;
}

/** A process the helper started: its streams are this process's ends of its fds. */
export interface HelperStarted {
  pid: number;
  stdout: Readable;
  stderr: Readable;
  gate?: Writable;
  channel?: Duplex;
  exited: Promise<ProcessExit>;
}

export type HelperSpawnOutcome =
  | { started: HelperStarted }
  | { error: NodeJS.ErrnoException }
  /** The helper is not ready, or lost the request before starting anything: spawn directly. */
  | 'direct';

interface Pending {
  id: number;
  request: AgentSpawnRequest;
  /** The token of the helper it was sent to: only its connections are this agent's. */
  token: Buffer;
  streams: (Socket | undefined)[];
  matched: number;
  /** The helper said it is about to spawn it. */
  spawning: boolean;
  exitSeen: boolean;
  pid?: number;
  settle(outcome: HelperSpawnOutcome): void;
  exit(exit: ProcessExit): void;
  exited: Promise<ProcessExit>;
  settled: boolean;
}

/** The helper exits after this long without an agent (the next agent starts a new one). */
const IDLE_MS = 60_000;
const MAX_FAILED_STARTS = 3;
/** A connection has this long to say whose it is. */
const HEADER_MS = 10_000;
/** How often an agent whose helper was lost is checked for by its pid. */
const ORPHAN_POLL_MS = 100;

const noop = (): void => {};

class AgentSpawner {
  private child: ChildProcess | null = null;
  private server: Server | null = null;
  private dir: string | null = null;
  private token: Buffer = Buffer.alloc(0);
  private ready = false;
  private starting: Promise<boolean> | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failedStarts = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get socketPath(): string | undefined {
    return this.dir ? join(this.dir, 's') : undefined;
  }

  get usable(): boolean {
    return this.failedStarts < MAX_FAILED_STARTS;
  }

  /** Starts the helper when none runs; resolves true once it takes requests. */
  warm(): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    this.starting ??= this.launch().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  spawn(request: AgentSpawnRequest): Promise<HelperSpawnOutcome> {
    const child = this.child;
    if (!this.ready || !child) {
      void this.warm();
      return Promise.resolve('direct');
    }
    clearTimeout(this.idleTimer);
    this.hold(true);
    const id = this.nextId++;
    let settle!: (outcome: HelperSpawnOutcome) => void;
    let exit!: (exit: ProcessExit) => void;
    const outcome = new Promise<HelperSpawnOutcome>((resolve) => {
      settle = resolve;
    });
    const exited = new Promise<ProcessExit>((resolve) => {
      exit = resolve;
    });
    const streams = 2 + (request.gate ? 1 : 0) + (request.channel ? 1 : 0);
    const entry: Pending = {
      id,
      request,
      token: this.token,
      streams: new Array(streams).fill(undefined),
      matched: 0,
      spawning: false,
      exitSeen: false,
      settle: (value) => {
        if (entry.settled) return;
        entry.settled = true;
        settle(value);
      },
      exit,
      exited,
      settled: false,
    };
    this.pending.set(id, entry);
    const message = {
      t: 'spawn',
      id,
      file: request.file,
      args: request.args,
      cwd: request.cwd,
      env: request.env,
      gate: request.gate === true,
      channel: request.channel === true,
    };
    child.stdin?.write(`${JSON.stringify(message)}\n`);
    return outcome;
  }

  private async launch(): Promise<boolean> {
    if (!this.usable) return false;
    sweepDeadOwners(tmpdir(), 'cur-spawn-');
    const dir = mkdtempSync(join(tmpdir(), `cur-spawn-${process.pid}-`));
    const socketPath = join(dir, 's');
    const token = randomBytes(16);
    const server = createServer({ allowHalfOpen: false }, (socket) => this.accept(socket, token));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => resolve());
      });
    } catch {
      rmSync(dir, { recursive: true, force: true });
      this.failedStarts++;
      return false;
    }
    server.on('error', noop);
    server.unref();
    const child = spawn(process.execPath, ['-e', HELPER_SOURCE], {
      env: {},
      stdio: ['pipe', 'pipe', 'ignore'],
      shell: false,
      windowsHide: true,
    });
    this.child = child;
    this.server = server;
    this.dir = dir;
    this.token = token;
    live.add(dir);
    cleanupOnExit();
    const readySeen = new Promise<boolean>((resolve) => {
      this.onReady = resolve;
    });
    child.stdout?.setEncoding('utf8');
    child.stdout?.on(
      'data',
      jsonLineReader<HelperMessage>((message) => {
        if (this.child === child) this.answer(message);
      }),
    );
    child.stdin?.on('error', noop);
    child.once('error', () => this.lost(child, true));
    child.once('close', () => this.lost(child, false));
    child.stdin?.write(
      `${JSON.stringify({ t: 'hello', socket: socketPath, token: token.toString('hex') })}\n`,
    );
    // Held until it is ready (`idle` then lets go): whoever waits for it keeps this process up.
    return readySeen;
  }

  private onReady: ((ready: boolean) => void) | undefined;

  /** A connection from the helper: its header names the agent and stream it is for. */
  private accept(socket: Socket, token: Buffer): void {
    socket.on('error', noop);
    let header: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), HEADER_MS);
    timer.unref();
    const onData = (chunk: Buffer): void => {
      header = header.length === 0 ? chunk : Buffer.concat([header, chunk]);
      const newline = header.indexOf(10);
      if (newline === -1) {
        if (header.length > 128) socket.destroy();
        return;
      }
      socket.off('data', onData);
      socket.pause();
      clearTimeout(timer);
      // What follows the header is already the agent's output: it goes back to be read in order.
      if (newline + 1 < header.length) socket.unshift(header.subarray(newline + 1));
      this.match(socket, header.subarray(0, newline).toString('latin1'), token);
    };
    socket.on('data', onData);
  }

  private match(socket: Socket, header: string, token: Buffer): void {
    const [given = '', id = '', index = ''] = header.split(' ');
    const presented = Buffer.from(given, 'hex');
    const entry = this.pending.get(Number(id));
    const slot = Number(index);
    const ok =
      presented.length === token.length &&
      timingSafeEqual(presented, token) &&
      entry !== undefined &&
      entry.token === token &&
      !entry.settled &&
      Number.isInteger(slot) &&
      slot >= 0 &&
      slot < entry.streams.length &&
      entry.streams[slot] === undefined;
    if (!ok || !entry) {
      socket.destroy();
      return;
    }
    entry.streams[slot] = socket;
    entry.matched++;
    if (entry.pid !== undefined && entry.matched === entry.streams.length) this.deliver(entry);
  }

  private answer(message: HelperMessage): void {
    if (message.t === 'ready') {
      this.ready = true;
      this.failedStarts = 0;
      this.onReady?.(true);
      this.idle();
      return;
    }
    const entry = this.pending.get(message.id);
    if (!entry) return;
    if (message.t === 'spawning') entry.spawning = true;
    else if (message.t === 'started') {
      entry.pid = message.pid;
      // Its streams were connected before the spawn; they may still be on their way.
      if (entry.matched === entry.streams.length) this.deliver(entry);
      else this.awaitStreams(entry);
    } else if (message.t === 'exit') {
      entry.exit({ code: message.code, signal: message.signal });
      entry.exitSeen = true;
      if (entry.settled) this.forget(entry.id);
    } else {
      for (const socket of entry.streams) socket?.destroy();
      this.forget(entry.id);
      if (message.t === 'unstarted') entry.settle('direct');
      else {
        const error: NodeJS.ErrnoException = new Error(message.message);
        if (message.code) error.code = message.code;
        entry.settle({ error });
      }
    }
  }

  /** Hands the started process over once its pid and every stream are in. */
  private deliver(entry: Pending): void {
    const [stdout, stderr, ...relayed] = entry.streams as Socket[];
    const gate = entry.request.gate ? relayed.shift() : undefined;
    const channel = entry.request.channel ? relayed.shift() : undefined;
    entry.settle({
      started: {
        pid: entry.pid!,
        stdout: stdout!,
        stderr: stderr!,
        ...(gate ? { gate } : {}),
        ...(channel ? { channel } : {}),
        exited: entry.exited,
      },
    });
    if (entry.exitSeen) this.forget(entry.id);
  }

  /** A started agent whose streams never came is not left unwatched: it is stopped, and its start fails. */
  private awaitStreams(entry: Pending): void {
    const timer = setTimeout(() => {
      if (entry.settled) return;
      for (const socket of entry.streams) socket?.destroy();
      signalGroup(entry.pid!, 'SIGKILL');
      this.forget(entry.id);
      entry.settle({
        error: new Error('the agent helper started the agent but its output never arrived; it was stopped'),
      });
    }, HEADER_MS);
    timer.unref();
  }

  private forget(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.idle();
  }

  /**
   * The helper is gone. An agent it had not yet said it spawns was never spawned (the caller spawns
   * it directly); one whose spawn it announced but not reported fails, never started again; a
   * started one is watched by its pid. The next agent starts a new helper.
   */
  private lost(child: ChildProcess, failedToStart: boolean): void {
    if (this.child !== child) return;
    // One that exits before it said it is ready (a `node` that does not take `-e`) failed to start.
    if (failedToStart || !this.ready) this.failedStarts++;
    this.child = null;
    this.ready = false;
    this.onReady?.(false);
    this.onReady = undefined;
    clearTimeout(this.idleTimer);
    // Streams of started agents may still wait to be accepted: the server stays a while.
    this.retireServer(HEADER_MS);
    for (const [id, entry] of this.pending) {
      if (entry.pid !== undefined) {
        if (!entry.exitSeen)
          watchOrphan(entry.pid, (exit) => {
            entry.exit(exit);
            entry.exitSeen = true;
            if (entry.settled) this.forget(id);
          });
        continue;
      }
      this.pending.delete(id);
      for (const socket of entry.streams) socket?.destroy();
      if (!entry.spawning) entry.settle('direct');
      else
        entry.settle({
          error: new Error(
            'the agent helper exited while it started the agent; it is not started again in case it runs',
          ),
        });
    }
    if (this.pending.size === 0) this.idle();
  }

  /** Stops taking connections for the current helper, now or after `afterMs`. */
  private retireServer(afterMs = 0): void {
    const { server, dir } = this;
    this.server = null;
    this.dir = null;
    const close = (): void => {
      server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
      live.delete(dir ?? '');
    };
    if (afterMs === 0) close();
    else setTimeout(close, afterMs).unref();
  }

  /** Keeps this process alive while agents start or run through the helper, and only then. */
  private hold(busy: boolean): void {
    const child = this.child;
    if (!child) return;
    for (const handle of [child, child.stdout, child.stdin] as Array<{
      ref?(): void;
      unref?(): void;
    } | null>) {
      if (busy) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  private idle(): void {
    this.hold(false);
    clearTimeout(this.idleTimer);
    const child = this.child;
    this.idleTimer = setTimeout(() => {
      if (this.child !== child || this.pending.size > 0) return;
      this.child = null;
      this.ready = false;
      this.retireServer();
      child?.stdin?.end();
    }, IDLE_MS);
    this.idleTimer.unref();
  }
}

type HelperMessage =
  | { t: 'ready' }
  | { id: number; t: 'spawning' }
  | { id: number; t: 'started'; pid: number }
  | { id: number; t: 'exit'; code: number | null; signal: NodeJS.Signals | null }
  | { id: number; t: 'error'; code?: string; message: string }
  | { id: number; t: 'unstarted'; message: string };

/** Resolves `exit` once `pid` is gone (or a zombie nobody reaps). */
function watchOrphan(pid: number, exit: (exit: ProcessExit) => void): void {
  const timer = setInterval(() => {
    let gone = false;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      gone = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
    } catch {
      gone = true;
    }
    if (!gone) return;
    clearInterval(timer);
    exit({ code: null, signal: null, unknown: true });
  }, ORPHAN_POLL_MS);
}

/** Socket folders of this process, removed when it exits. */
const live = new Set<string>();
let exitHook = false;
function cleanupOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const dir of live) rmSync(dir, { recursive: true, force: true });
  });
}

let shared: AgentSpawner | undefined;
let enabled = process.platform === 'linux';

/** Turns the helper off (every agent spawns from this process) or on again; for benches and tests. */
export function useAgentHelper(on: boolean): void {
  enabled = on && process.platform === 'linux';
}

/**
 * Starts `request` through the helper. `'direct'` means the caller spawns it itself: the helper is
 * off, not ready yet (it starts now, for the next agent), or lost the request before starting it.
 */
export function spawnThroughHelper(request: AgentSpawnRequest): Promise<HelperSpawnOutcome> {
  if (!enabled) return Promise.resolve('direct');
  shared ??= new AgentSpawner();
  if (!shared.usable) return Promise.resolve('direct');
  return shared.spawn(request);
}

/** Starts the helper and waits until it takes agents (tests, and a daemon about to run some). */
export function warmAgentHelper(): Promise<boolean> {
  if (!enabled) return Promise.resolve(false);
  shared ??= new AgentSpawner();
  return shared.warm();
}

/** The running helper's pid, if one runs (for tests). */
export function agentHelperPid(): number | undefined {
  return shared?.pid;
}

/** Where the running helper connects to (for tests). */
export function agentHelperSocket(): string | undefined {
  return shared?.socketPath;
}
