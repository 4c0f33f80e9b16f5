/**
 * Runs a short-lived filter program: text in on stdin, an answer out on stdout (the screening
 * classifier command). Like an agent it gets an argument vector (never a shell), exactly the
 * environment it is handed and its own process group, so a timeout or an abort stops everything it
 * started (SIGTERM, then SIGKILL after a grace period). Unlike `runCommand` it writes its input to
 * stdin and kills the whole group; unlike `spawnAgent` it keeps stdout whole (up to a cap) for
 * parsing. The caller decides what a non-zero exit means.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { AgentNotFoundError, CurupiraError } from '../core/errors.js';
import { findExecutable } from './env.js';
import { BoundedTail } from './output.js';
import { terminateGroup } from './process-group.js';

export interface FilterOptions {
  /** A name looked up on `env.PATH`, or a path (relative to the current directory). */
  executable: string;
  args: readonly string[];
  /** Written to stdin, which is then closed. */
  input: string;
  /** The complete environment of the program; nothing is inherited beyond it. */
  env: Readonly<Record<string, string>>;
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL (default 2 s). */
  killGraceMs?: number;
  /** stdout beyond this many bytes is not kept (`stdoutTooLarge` is set and the program is stopped). */
  maxStdoutBytes: number;
  /** How much of stderr's end is kept. */
  maxStderrBytes: number;
  signal?: AbortSignal;
  /** The working directory (default: ours). */
  cwd?: string;
}

export interface FilterResult {
  /** Null when the program was ended by a signal. */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderrTail: string;
  timedOut: boolean;
  cancelled: boolean;
  stdoutTooLarge: boolean;
}

/** Throws `AgentNotFoundError` when the program does not exist; resolves with what it did otherwise. */
export async function runFilter(options: FilterOptions): Promise<FilterResult> {
  const resolved = findExecutable(options.executable, options.env.PATH, options.cwd);
  if (!resolved) throw new AgentNotFoundError(options.executable);
  const child = spawn(resolved, [...options.args], {
    env: { ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    shell: false,
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once('exit', (code, signal) => done({ code, signal }));
  });
  try {
    await once(child, 'spawn');
  } catch (error) {
    const cause = error as NodeJS.ErrnoException;
    if (cause.code === 'ENOENT') throw new AgentNotFoundError(options.executable);
    throw new CurupiraError('dispatch', `could not start ${options.executable}: ${cause.message}`, {
      cause,
    });
  }
  child.on('error', () => {});
  const pid = child.pid!;
  const state = { timedOut: false, cancelled: false, stdoutTooLarge: false, exited: false };
  let termination: Promise<void> | undefined;
  const terminate = (): Promise<void> => {
    termination ??= terminateGroup(pid, options.killGraceMs ?? 2_000);
    return termination;
  };

  // A program that exits without reading all of its input closes the pipe: not our failure.
  child.stdin!.on('error', () => {});
  child.stdin!.end(options.input);
  const output = collect(child, options.maxStdoutBytes, options.maxStderrBytes, () => {
    state.stdoutTooLarge = true;
    void terminate();
  });

  const stopFor = (reason: 'timedOut' | 'cancelled') => (): void => {
    if (state.exited) return;
    state[reason] = true;
    void terminate();
  };
  const timer = setTimeout(stopFor('timedOut'), Math.min(options.timeoutMs, 2 ** 31 - 1));
  const onAbort = stopFor('cancelled');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();

  const exit = await exited;
  state.exited = true;
  clearTimeout(timer);
  options.signal?.removeEventListener('abort', onAbort);
  // Whatever it left running in its group is stopped too.
  await (termination ?? terminate());
  await Promise.race([output.closed, new Promise((done) => setTimeout(done, 2_000).unref())]);
  child.stdout?.destroy();
  child.stderr?.destroy();
  return {
    exitCode: exit.code,
    signal: exit.signal,
    stdout: output.stdout(),
    stderrTail: output.stderr(),
    timedOut: state.timedOut,
    cancelled: state.cancelled,
    stdoutTooLarge: state.stdoutTooLarge,
  };
}

/** Keeps stdout whole up to `maxStdout` bytes (then calls `onTooLarge` once) and stderr's tail. */
function collect(
  child: ChildProcess,
  maxStdout: number,
  maxStderr: number,
  onTooLarge: () => void,
): { closed: Promise<unknown>; stdout(): string; stderr(): string } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let tooLarge = false;
  child.stdout!.on('data', (chunk: Buffer) => {
    if (tooLarge) return;
    bytes += chunk.length;
    if (bytes > maxStdout) {
      tooLarge = true;
      onTooLarge();
      return;
    }
    chunks.push(chunk);
  });
  const tail = new BoundedTail(maxStderr);
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => tail.append(text));
  return {
    closed: Promise.all([once(child.stdout!, 'close'), once(child.stderr!, 'close')]),
    stdout: () => Buffer.concat(chunks).toString('utf8'),
    stderr: () => tail.toString(),
  };
}
