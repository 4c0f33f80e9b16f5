/**
 * Starts a coding agent and watches it to the end. The agent gets an argument vector (never a
 * shell), stdin from /dev/null, exactly the environment it is handed, and its own process group:
 * on timeout or cancel the whole group gets SIGTERM, then SIGKILL after a grace period, and once
 * the agent exits anything it left running in its group is stopped the same way, so nothing
 * outlives a run. Output is streamed line by line to callbacks and to transcript files (secrets
 * redacted), and only a bounded tail is kept in memory.
 *
 * `node:child_process` rather than execa here: the group handling (spawn detached, signal the
 * negative pid, reap the group after the leader exits) is the point of this module, and execa's
 * kill helpers only address the leader.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { AgentNotFoundError, CurupiraError } from '../core/errors.js';
import { redact } from '../log.js';
import { findExecutable } from './env.js';
import { BoundedTail, LineSplitter } from './output.js';
import { terminateGroup } from './process-group.js';

export const DEFAULT_KILL_GRACE_MS = 10_000;
/** A single line longer than this is cut into pieces, so one runaway line cannot exhaust memory. */
export const DEFAULT_MAX_LINE_LENGTH = 16 * 1024 * 1024;
/** How long to wait for the output pipes to close once the whole group is gone. */
const PIPE_DRAIN_MS = 2_000;

export interface SpawnAgentOptions {
  /** A name looked up on `env.PATH`, or a path (relative to `cwd`). */
  executable: string;
  args: readonly string[];
  cwd: string;
  /** The complete environment of the agent; nothing is inherited beyond it. */
  env: Readonly<Record<string, string>>;
  /** Stop the agent (and its group) after this long. No limit when absent. */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL (default 10 s). */
  killGraceMs?: number;
  /** How much of each stream's end is kept in memory for the result. */
  maxOutputBytes: number;
  /** Longest line passed on whole (default 16 Mi characters); longer ones arrive in pieces. */
  maxLineLength?: number;
  /** The transcript: the whole stdout stream is appended here as it arrives. */
  stdoutFile?: string;
  stderrFile?: string;
  /**
   * Called for each stdout line (without its `\n`, secrets redacted). An exception stops the agent
   * as a cancel would, and `spawnAgent` then rejects with it.
   */
  onStdoutLine?(line: string): void;
  onStderrLine?(line: string): void;
  /** Called once the process has started. */
  onSpawn?(pid: number): void;
  /** Aborting stops the agent and its group. */
  signal?: AbortSignal;
}

export interface AgentProcessResult {
  /** Null when the agent was ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the agent (`SIGTERM`, `SIGKILL`…), or null. */
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  stdoutTail: string;
  stderrTail: string;
  durationMs: number;
  pid: number;
}

interface StreamSink {
  splitter: LineSplitter;
  tail: BoundedTail;
  fd: number | undefined;
  pending: string[];
}

function openTranscript(path: string | undefined, executable: string): number | undefined {
  if (!path) return undefined;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return openSync(path, 'a', 0o600);
  } catch (error) {
    throw new CurupiraError(
      'agent_start',
      `could not start ${executable}: cannot write transcript ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

function createSink(
  options: SpawnAgentOptions,
  fd: number | undefined,
  onLine: ((line: string) => void) | undefined,
  onCallbackError: (error: unknown) => void,
): StreamSink {
  const sink: StreamSink = {
    fd,
    tail: new BoundedTail(options.maxOutputBytes),
    pending: [],
    splitter: new LineSplitter(options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH, (line, terminated) => {
      const clean = redact(line);
      sink.pending.push(terminated ? `${clean}\n` : clean);
      if (!onLine) return;
      try {
        onLine(clean);
      } catch (error) {
        onCallbackError(error);
      }
    }),
  };
  return sink;
}

/** Writes what the splitter produced since the last flush to the file and the tail. */
function flushSink(sink: StreamSink): void {
  if (sink.pending.length === 0) return;
  const text = sink.pending.join('');
  sink.pending = [];
  sink.tail.append(text);
  if (sink.fd !== undefined) writeSync(sink.fd, text);
}

function pump(stream: Readable, sink: StreamSink): Promise<void> {
  stream.setEncoding('utf8');
  stream.on('data', (text: string) => {
    sink.splitter.push(text);
    flushSink(sink);
  });
  return new Promise((resolveClosed) => {
    stream.once('close', resolveClosed);
  });
}

function checkCwd(executable: string, cwd: string): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) {
    throw new CurupiraError(
      'agent_start',
      `could not start ${executable}: working directory does not exist: ${cwd}`,
    );
  }
}

export async function spawnAgent(options: SpawnAgentOptions): Promise<AgentProcessResult> {
  const { executable, cwd } = options;
  checkCwd(executable, cwd);
  const resolved = findExecutable(executable, options.env.PATH, cwd);
  if (!resolved) throw new AgentNotFoundError(executable);

  const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const stdoutFd = openTranscript(options.stdoutFile, executable);
  let stderrFd: number | undefined;
  try {
    stderrFd = openTranscript(options.stderrFile, executable);
  } catch (error) {
    if (stdoutFd !== undefined) closeSync(stdoutFd);
    throw error;
  }
  const closeFiles = (): void => {
    if (stdoutFd !== undefined) closeSync(stdoutFd);
    if (stderrFd !== undefined) closeSync(stderrFd);
  };

  const startedAt = performance.now();
  const child = spawn(resolved, [...options.args], {
    cwd,
    env: { ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    shell: false,
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });

  try {
    await once(child, 'spawn');
  } catch (error) {
    closeFiles();
    const cause = error as NodeJS.ErrnoException;
    if (cause.code === 'ENOENT') throw new AgentNotFoundError(executable);
    throw new CurupiraError('agent_start', `could not start ${executable}: ${cause.message}`, { cause });
  }
  // Later errors (a failed kill, say) must not crash the process; the exit event still follows.
  child.on('error', () => {});

  const pid = child.pid!;
  let exitedYet = false;
  let timedOut = false;
  let cancelled = false;
  let callbackError: unknown;
  let termination: Promise<void> | undefined;
  const terminate = (): Promise<void> => {
    termination ??= terminateGroup(pid, graceMs);
    return termination;
  };
  const onCallbackError = (error: unknown): void => {
    if (callbackError !== undefined) return;
    callbackError = error;
    void terminate();
  };

  const out = createSink(options, stdoutFd, options.onStdoutLine, onCallbackError);
  const err = createSink(options, stderrFd, options.onStderrLine, onCallbackError);
  const pipesClosed = Promise.all([pump(child.stdout!, out), pump(child.stderr!, err)]);

  const timer =
    options.timeoutMs !== undefined
      ? setTimeout(() => {
          if (exitedYet) return;
          timedOut = true;
          void terminate();
        }, options.timeoutMs)
      : undefined;
  const onAbort = (): void => {
    if (exitedYet) return;
    cancelled = true;
    void terminate();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();

  try {
    options.onSpawn?.(pid);
  } catch (error) {
    onCallbackError(error);
  }

  const exit = await exited;
  exitedYet = true;
  if (timer) clearTimeout(timer);
  options.signal?.removeEventListener('abort', onAbort);

  // Whatever the agent left running in its group (a dev server, a watcher) is stopped too.
  await (termination ?? terminate());
  const drainTimer = new AbortController();
  const drained = await Promise.race([
    pipesClosed.then(() => true),
    delay(PIPE_DRAIN_MS, false, { signal: drainTimer.signal }).catch(() => false),
  ]);
  drainTimer.abort();
  if (!drained) {
    // Something outside the group still holds the pipes; stop reading rather than wait forever.
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
  out.splitter.end();
  flushSink(out);
  err.splitter.end();
  flushSink(err);
  closeFiles();

  if (callbackError !== undefined) throw callbackError;
  return {
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    cancelled,
    stdoutTail: out.tail.toString(),
    stderrTail: err.tail.toString(),
    durationMs: Math.round(performance.now() - startedAt),
    pid,
  };
}
