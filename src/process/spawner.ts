/**
 * Short commands started from a small long-lived helper process instead of from this one.
 *
 * Node forks on the main thread, and a fork costs time in proportion to the forking process's
 * memory (about 1 ms at 48 MiB, 13 ms at 350 MiB), so a daemon that runs ~10 git commands per run
 * spends most of its main-thread time in `spawn`. The helper is a bare Node process (about a tenth
 * of a daemon's heap) that reads one JSON request a line on stdin — executable, argv array, cwd,
 * the complete environment — spawns it without a shell and writes its exit and output back as one
 * JSON line. This process only writes and parses lines.
 *
 * Safety: argv arrays only (`shell: false` in the helper), the environment is passed explicitly
 * for every command and the helper itself runs with an empty one. When the helper cannot start or
 * exits, commands it had not yet started fall back to a direct spawn, and the next command starts
 * a new helper (after three failed starts in a row, this process stops trying). A command the
 * helper had started when it exited is reported as failed, never run twice. When this process dies
 * the helper sees its stdin close, lets its running commands finish and exits; it also exits after
 * a while without work, and starts again on the next command.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { jsonLineReader } from './output.js';

/** What runs in the helper (`node -e`): CommonJS, no dependencies, no file of its own. */
const HELPER_SOURCE = String.raw`'use strict';
const { spawn } = require('node:child_process');
const children = new Map();
const send = (message) => { try { process.stdout.write(JSON.stringify(message) + '\n'); } catch {} };
process.stdout.on('error', () => {});
function start(request) {
  let child;
  try {
    child = spawn(request.file, request.args, {
      cwd: request.cwd, env: request.env, shell: false, windowsHide: true,
      stdio: [request.input == null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
  } catch (error) {
    send({ id: request.id, t: 'error', code: error.code, message: String(error.message) });
    return;
  }
  children.set(request.id, child);
  let done = false;
  const out = [], err = [];
  child.stdout.on('data', (chunk) => out.push(chunk));
  child.stderr.on('data', (chunk) => err.push(chunk));
  child.once('spawn', () => send({ id: request.id, t: 'started' }));
  child.once('error', (error) => {
    if (done) return;
    done = true;
    children.delete(request.id);
    send({ id: request.id, t: 'error', code: error.code, message: String(error.message) });
  });
  child.once('close', (code) => {
    if (done) return;
    done = true;
    children.delete(request.id);
    send({ id: request.id, t: 'exit', code: code == null ? -1 : code,
      stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
  });
  if (request.input != null) {
    child.stdin.on('error', () => {});
    child.stdin.end(request.input);
  }
}
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (text) => {
  buffer += text;
  let newline;
  while ((newline = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    let message;
    try { message = JSON.parse(line); } catch { continue; }
    if (message.t === 'run') start(message);
    else if (message.t === 'kill') { try { children.get(message.id)?.kill(message.signal); } catch {} }
  }
});
`;

export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd?: string;
  env: Record<string, string | undefined>;
  input?: string;
}

export type SpawnOutcome =
  | { exitCode: number; stdout: string; stderr: string }
  | { error: NodeJS.ErrnoException };

/** A command handed to the helper: call `kill` to signal it, await `done` for its outcome. */
export interface HelperCommand {
  kill(signal: NodeJS.Signals): void;
  done: Promise<SpawnOutcome>;
}

interface Pending {
  started: boolean;
  request: SpawnRequest;
  settle: (outcome: SpawnOutcome | 'fallback') => void;
}

/** The helper closes after this long without a command (its next command starts a new one). */
const IDLE_MS = 30_000;
const MAX_FAILED_STARTS = 3;

class Spawner {
  private child: ChildProcess | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failedStarts = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  /** The helper's process id while it runs (for tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** False once the helper failed to start too often: callers spawn directly. */
  get usable(): boolean {
    return this.failedStarts < MAX_FAILED_STARTS;
  }

  /** Sends `request` to the helper; `'fallback'` from `done` means it never started there. */
  run(request: SpawnRequest): {
    kill(signal: NodeJS.Signals): void;
    done: Promise<SpawnOutcome | 'fallback'>;
  } {
    const child = this.ensure();
    const id = this.nextId++;
    const done = new Promise<SpawnOutcome | 'fallback'>((settle) => {
      this.pending.set(id, { started: false, request, settle });
    });
    clearTimeout(this.idleTimer);
    this.hold(true);
    const message = {
      t: 'run',
      id,
      file: request.file,
      args: request.args,
      cwd: request.cwd,
      env: request.env,
    };
    child.stdin?.write(
      `${JSON.stringify(request.input === undefined ? message : { ...message, input: request.input })}\n`,
    );
    return {
      kill: (signal) => {
        if (this.child === child && this.pending.has(id))
          child.stdin?.write(`${JSON.stringify({ t: 'kill', id, signal })}\n`);
      },
      done,
    };
  }

  private ensure(): ChildProcess {
    if (this.child) return this.child;
    const child = spawn(process.execPath, ['-e', HELPER_SOURCE], {
      env: {},
      stdio: ['pipe', 'pipe', 'ignore'],
      shell: false,
      windowsHide: true,
    });
    this.child = child;
    child.stdout?.setEncoding('utf8');
    child.stdout?.on(
      'data',
      jsonLineReader<HelperMessage>((message) => this.answer(message)),
    );
    child.stdin?.on('error', () => {});
    child.once('spawn', () => {
      this.failedStarts = 0;
    });
    child.once('error', () => this.lost(child, true));
    child.once('close', () => this.lost(child, false));
    return child;
  }

  private answer(message: HelperMessage): void {
    const entry = this.pending.get(message.id);
    if (!entry) return;
    if (message.t === 'started') {
      entry.started = true;
      return;
    }
    this.pending.delete(message.id);
    if (message.t === 'exit') {
      entry.settle({ exitCode: message.code, stdout: message.stdout, stderr: message.stderr });
    } else {
      const error: NodeJS.ErrnoException = new Error(message.message);
      if (message.code) error.code = message.code;
      entry.settle({ error });
    }
    if (this.pending.size === 0) this.idle();
  }

  /** The helper is gone: unstarted commands fall back, started ones fail, the next command restarts it. */
  private lost(child: ChildProcess, failedToStart: boolean): void {
    if (this.child !== child) return;
    this.child = null;
    clearTimeout(this.idleTimer);
    if (failedToStart) this.failedStarts++;
    for (const [id, entry] of this.pending) {
      this.pending.delete(id);
      if (!entry.started) entry.settle('fallback');
      else entry.settle({ error: new Error('the command helper exited while the command ran') });
    }
  }

  /** Keeps this process alive while commands run, and only then. */
  private hold(busy: boolean): void {
    const child = this.child;
    if (!child) return;
    const handles = [child, child.stdout, child.stdin] as Array<{ ref?(): void; unref?(): void } | null>;
    for (const handle of handles) {
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
      // Forgotten first: a command that comes while it exits starts a new helper.
      this.child = null;
      child?.stdin?.end();
    }, IDLE_MS);
    this.idleTimer.unref();
  }
}

type HelperMessage =
  | { id: number; t: 'started' }
  | { id: number; t: 'exit'; code: number; stdout: string; stderr: string }
  | { id: number; t: 'error'; code?: string; message: string };

let shared: Spawner | undefined;
let enabled = true;

/** Turns the helper off (every command spawns from this process) or on again; for bench/dispatch. */
export function useSpawnHelper(on: boolean): void {
  enabled = on;
}

/**
 * Starts `request` through the helper, or directly from this process when the helper is not
 * usable or lost the command before starting it. `done` never rejects.
 */
export function startCommand(request: SpawnRequest): HelperCommand {
  shared ??= new Spawner();
  if (!enabled || !shared.usable) return startDirect(request);
  const command = shared.run(request);
  let fallback: HelperCommand | undefined;
  return {
    kill: (signal) => (fallback ?? command).kill(signal),
    done: command.done.then((outcome) => {
      if (outcome !== 'fallback') return outcome;
      fallback = startDirect(request);
      return fallback.done;
    }),
  };
}

/** The running helper's process id, if one runs (for tests). */
export function helperPid(): number | undefined {
  return shared?.pid;
}

/** `spawn` from this process (the helper does the same on its side). */
export function startDirect(request: SpawnRequest): HelperCommand {
  let child: ChildProcess;
  const done = new Promise<SpawnOutcome>((settle) => {
    child = spawn(request.file, [...request.args], {
      cwd: request.cwd,
      env: request.env,
      stdio: [request.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', (error) => settle({ error }));
    child.once('close', (code) =>
      settle({
        exitCode: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
    if (request.input !== undefined && child.stdin) {
      // A child that exits without reading its input is not an error of ours.
      child.stdin.on('error', () => {});
      child.stdin.end(request.input);
    }
  });
  return { kill: (signal) => child.kill(signal), done };
}
