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
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Duplex, Readable, Writable } from 'node:stream';
import { AgentNotFoundError, CurupiraError } from '../core/errors.js';
import { createLineRedactor } from '../security/redact.js';
import { type ProcessExit, spawnThroughHelper } from './agent-spawner.js';
import { findExecutable } from './env.js';
import { BoundedTail, LineSplitter } from './output.js';
import { signalGroup, terminateGroup } from './process-group.js';

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
  /**
   * Longest line passed to the callbacks (default 16 Mi characters). A longer line is written to the
   * transcript but never handed to `onStdoutLine`/`onStderrLine` (the reference drops such a line).
   */
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
  /**
   * Called with the started process's pid before it goes on (a sandbox places it in its control
   * group): the process gets a pipe as fd 3 and waits reading it (bubblewrap's `--block-fd 3`);
   * once this resolves, a byte on that pipe lets it go.
   */
  beforeStart?(pid: number): Promise<void>;
  /**
   * A conversation with the started process on its fd 4 (a socket; a sandbox's starter waits
   * there until its proxy forwarder listens). Called once the process has started; the socket is
   * closed when the agent's run ends.
   */
  channel?(socket: Duplex): void;
  /**
   * The group's other processes end with its leader (a sandbox's PID namespace: its processes
   * die as it goes): once the leader exits they get SIGKILL and are not waited for.
   */
  groupEndsWithLeader?: boolean;
  /**
   * A process started earlier (`prestartProcess`, a sandbox started while the worktree was being
   * filled) that becomes the agent once `launch` resolves: it is adopted instead of spawning
   * `executable`, and its output, exit and group are watched as a spawned agent's would be. When
   * `launch` rejects, the process is stopped and `spawnAgent` rejects.
   */
  prestarted?: { process: PrestartedProcess; launch(): Promise<void> };
}

/** A process started ahead of its run (`prestartProcess`), waiting to be told what to run. */
export interface PrestartedProcess {
  started: StartedProcess;
  pid: number;
  exited: Promise<ProcessExit>;
  /** Stops its whole group (it was never adopted). */
  abandon(): Promise<void>;
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
  /** Writing a transcript failed (a full disk, say): the agent was stopped. */
  writeError?: { path: string; code: string | undefined; message: string };
  /** Output lines longer than `maxLineLength`, dropped rather than parsed. */
  droppedLines: number;
}

interface StreamSink {
  splitter: LineSplitter;
  tail: BoundedTail;
  fd: number | undefined;
  path: string | undefined;
  pending: string[];
  /** Inside a line longer than the limit: its pieces are not parsed. */
  inLongLine: boolean;
  dropped: number;
  flushError?: (error: unknown, path: string) => void;
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
  file: { fd: number | undefined; path: string | undefined },
  onLine: ((line: string) => void) | undefined,
  onCallbackError: (error: unknown) => void,
  onWriteError: (error: unknown, path: string) => void,
): StreamSink {
  const maxLine = options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH;
  // Per stream: a private key block printed over several lines is redacted from BEGIN to END.
  const redact = createLineRedactor();
  const sink: StreamSink = {
    fd: file.fd,
    path: file.path,
    tail: new BoundedTail(options.maxOutputBytes),
    pending: [],
    inLongLine: false,
    dropped: 0,
    splitter: new LineSplitter(maxLine, (line, terminated, cut) => {
      const clean = redact(line);
      sink.pending.push(terminated ? `${clean}\n` : clean);
      // A line longer than the limit comes in pieces: the whole line is dropped, never parsed.
      if (cut) {
        sink.inLongLine = true;
        return;
      }
      if (sink.inLongLine || line.length > maxLine) {
        sink.inLongLine = false;
        sink.dropped += 1;
        return;
      }
      if (!onLine) return;
      try {
        onLine(clean);
      } catch (error) {
        onCallbackError(error);
      }
    }),
  };
  sink.flushError = onWriteError;
  return sink;
}

/** Writes what the splitter produced since the last flush to the file and the tail. */
function flushSink(sink: StreamSink): void {
  if (sink.pending.length === 0) return;
  const text = sink.pending.join('');
  sink.pending = [];
  sink.tail.append(text);
  if (sink.fd === undefined) return;
  try {
    writeSync(sink.fd, text);
  } catch (error) {
    // A full disk (or a vanished folder) fails this run, never the process.
    const fd = sink.fd;
    sink.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // already unusable
    }
    sink.flushError?.(error, sink.path ?? '');
  }
}

function pump(stream: Readable, sink: StreamSink): Promise<void> {
  stream.setEncoding('utf8');
  stream.on('data', (text: string) => {
    sink.splitter.push(text);
    flushSink(sink);
  });
  // A stream from the agent helper arrives paused (it waited for its owner), and may have ended and
  // closed already: an agent that printed nothing and exited before its start was reported.
  stream.resume();
  if (stream.closed) return Promise.resolve();
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

type StartOptions = Pick<SpawnAgentOptions, 'args' | 'cwd' | 'env' | 'beforeStart' | 'channel'>;

/** A started process, spawned from this process or from the agent helper (`agent-spawner.ts`). */
export interface StartedProcess {
  pid: number;
  stdout: Readable;
  stderr: Readable;
  /** fd 4 (`SpawnAgentOptions.channel`). */
  channel: Duplex | null;
  exited: Promise<ProcessExit>;
}

/**
 * Spawns `resolved` in a group of its own with the agent's stdio (and fds 3 and 4 when asked),
 * through the agent helper when it is ready, else from this process; hands fd 4 to `channel`, and
 * lets it go past fd 3 once `beforeStart` resolves.
 */
async function startProcess(
  resolved: string,
  executable: string,
  options: StartOptions,
): Promise<StartedProcess> {
  const viaHelper = await spawnThroughHelper({
    file: resolved,
    args: options.args,
    cwd: options.cwd,
    env: options.env,
    gate: options.beforeStart !== undefined,
    channel: options.channel !== undefined,
  });
  let started: StartedProcess;
  let gate: Writable | null | undefined;
  if (viaHelper === 'direct') ({ started, gate } = await startHere(resolved, executable, options));
  else if ('error' in viaHelper) throw startError(executable, viaHelper.error);
  else {
    const { started: fromHelper } = viaHelper;
    gate = fromHelper.gate;
    started = { ...fromHelper, channel: fromHelper.channel ?? null };
  }
  if (started.channel) {
    started.channel.on('error', () => {});
    options.channel?.(started.channel);
    // One from the agent helper arrives paused (it waited for its owner).
    started.channel.resume();
  }
  if (options.beforeStart) {
    try {
      await options.beforeStart(started.pid);
    } finally {
      gate?.on('error', () => {});
      gate?.end('go');
    }
  }
  return started;
}

function startError(executable: string, cause: NodeJS.ErrnoException): Error {
  if (cause.code === 'ENOENT') return new AgentNotFoundError(executable);
  return new CurupiraError('agent_start', `could not start ${executable}: ${cause.message}`, { cause });
}

/** `startProcess` from this process. */
async function startHere(
  resolved: string,
  executable: string,
  options: StartOptions,
): Promise<{ started: StartedProcess; gate: Writable | null }> {
  const child: ChildProcess = spawn(resolved, [...options.args], {
    cwd: options.cwd,
    env: { ...options.env },
    stdio: [
      'ignore',
      'pipe',
      'pipe',
      ...(options.beforeStart || options.channel ? [options.beforeStart ? 'pipe' : 'ignore'] : []),
      ...(options.channel ? ['pipe'] : []),
    ] as ('ignore' | 'pipe')[],
    detached: true,
    shell: false,
  });
  const exited = new Promise<ProcessExit>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });
  try {
    await once(child, 'spawn');
  } catch (error) {
    throw startError(executable, error as NodeJS.ErrnoException);
  }
  // Later errors (a failed kill, say) must not crash the process; the exit event still follows.
  child.on('error', () => {});
  const channel = options.channel ? ((child.stdio[4] as Duplex | null) ?? null) : null;
  const gate = options.beforeStart ? ((child.stdio[3] as Writable | null) ?? null) : null;
  return {
    started: { pid: child.pid!, stdout: child.stdout!, stderr: child.stderr!, channel, exited },
    gate,
  };
}

/**
 * Starts a process that is to become a run's agent later (`SpawnAgentOptions.prestarted`): a
 * sandbox whose starter waits for its launch. Its output waits in its pipes until it is adopted;
 * `abandon` stops its group when it never is. `executable` is an absolute path.
 */
export async function prestartProcess(
  executable: string,
  options: StartOptions & { killGraceMs?: number },
): Promise<PrestartedProcess> {
  const started = await startProcess(executable, executable, options);
  const { pid, exited } = started;
  let abandoned: Promise<void> | undefined;
  return {
    started,
    pid,
    exited,
    abandon() {
      abandoned ??= (async () => {
        started.channel?.destroy();
        await terminateGroup(pid, options.killGraceMs ?? 1_000);
        await exited;
        started.stdout.destroy();
        started.stderr.destroy();
      })();
      return abandoned;
    },
  };
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
  let filesOpen = true;
  const closeFiles = (): void => {
    if (!filesOpen) return;
    filesOpen = false;
    for (const fd of [out?.fd ?? stdoutFd, err?.fd ?? stderrFd]) {
      if (fd === undefined) continue;
      try {
        closeSync(fd);
      } catch {
        // a transcript that failed is closed already
      }
    }
  };
  let out: StreamSink | undefined;
  let err: StreamSink | undefined;

  let child: StartedProcess;
  if (options.prestarted) {
    child = options.prestarted.process.started;
    try {
      await options.prestarted.launch();
    } catch (error) {
      closeFiles();
      await options.prestarted.process.abandon();
      throw new CurupiraError('agent_start', `could not start ${executable}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  } else {
    try {
      child = await startProcess(resolved, executable, options);
    } catch (error) {
      closeFiles();
      throw error;
    }
  }
  const startedAt = performance.now();
  const { pid, exited } = child;
  const channel = options.channel || options.prestarted ? child.channel : null;
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

  let writeError: AgentProcessResult['writeError'];
  const onWriteError = (error: unknown, path: string): void => {
    if (writeError) return;
    const cause = error as NodeJS.ErrnoException;
    writeError = { path, code: cause.code, message: cause.message };
    void terminate();
  };
  out = createSink(
    options,
    { fd: stdoutFd, path: options.stdoutFile },
    options.onStdoutLine,
    onCallbackError,
    onWriteError,
  );
  err = createSink(
    options,
    { fd: stderrFd, path: options.stderrFile },
    options.onStderrLine,
    onCallbackError,
    onWriteError,
  );
  const stdoutSink = out;
  const stderrSink = err;
  const pipesClosed = Promise.all([pump(child.stdout, stdoutSink), pump(child.stderr, stderrSink)]);

  const timer =
    options.timeoutMs !== undefined
      ? longTimeout(() => {
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
  channel?.destroy();
  timer?.cancel();
  options.signal?.removeEventListener('abort', onAbort);

  // Whatever the agent left running in its group (a dev server, a watcher) is stopped too.
  if (options.groupEndsWithLeader && !termination) signalGroup(pid, 'SIGKILL');
  else await (termination ?? terminate());
  // A plain timer, cleared: an aborted promise timer made an AbortError (and its stack) every run.
  let drainTimer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    pipesClosed.then(() => true),
    new Promise<boolean>((resolveLate) => {
      drainTimer = setTimeout(() => resolveLate(false), PIPE_DRAIN_MS);
    }),
  ]);
  clearTimeout(drainTimer);
  if (!drained) {
    // Something outside the group still holds the pipes; stop reading rather than wait forever.
    child.stdout.destroy();
    child.stderr.destroy();
  }
  stdoutSink.splitter.end();
  flushSink(stdoutSink);
  stderrSink.splitter.end();
  flushSink(stderrSink);
  closeFiles();

  if (callbackError !== undefined) throw callbackError;
  return {
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    cancelled,
    stdoutTail: stdoutSink.tail.toString(),
    stderrTail: stderrSink.tail.toString(),
    durationMs: Math.round(performance.now() - startedAt),
    pid,
    droppedLines: stdoutSink.dropped + stderrSink.dropped,
    ...(writeError ? { writeError } : {}),
  };
}

/** Node's timers hold at most 2^31-1 ms (about 24.8 days): a longer wait is made of several. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function longTimeout(callback: () => void, ms: number): { cancel(): void } {
  let handle: NodeJS.Timeout | undefined;
  let cancelled = false;
  const arm = (left: number): void => {
    if (cancelled) return;
    if (left > MAX_TIMER_MS) {
      handle = setTimeout(() => arm(left - MAX_TIMER_MS), MAX_TIMER_MS);
    } else {
      handle = setTimeout(callback, Math.max(0, left));
    }
  };
  arm(ms);
  return {
    cancel(): void {
      cancelled = true;
      if (handle) clearTimeout(handle);
    },
  };
}

/** Linux's limit for one argument (MAX_ARG_STRLEN: 32 pages of 4 KiB). */
export const MAX_ARG_BYTES = 131_072;
/** What the arguments and the environment may take together; below the usual ARG_MAX of 2 MiB. */
export const MAX_ARGV_ENV_BYTES = 2_000_000;

/**
 * Why these arguments could not be passed to a new process (`spawn E2BIG`), in words a user can act
 * on, or undefined when they fit.
 */
export function argvProblem(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): string | undefined {
  let total = 0;
  for (const arg of args) {
    const bytes = Buffer.byteLength(arg, 'utf8') + 1;
    total += bytes;
    if (bytes > MAX_ARG_BYTES) {
      return `an argument (the prompt) is ${bytes.toLocaleString('en-US')} bytes, over the ${MAX_ARG_BYTES.toLocaleString('en-US')}-byte limit the operating system sets for one command-line argument; shorten the prompt template or the item text it includes`;
    }
  }
  for (const [name, value] of Object.entries(env)) total += Buffer.byteLength(`${name}=${value}`, 'utf8') + 1;
  if (total > MAX_ARGV_ENV_BYTES) {
    return `the command line and environment take ${total.toLocaleString('en-US')} bytes, over the ${MAX_ARGV_ENV_BYTES.toLocaleString('en-US')} bytes a new process can be given; shorten the prompt or the profile's environment`;
  }
  return undefined;
}
