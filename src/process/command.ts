/**
 * Short-lived helper commands (git, `gh auth token`, version probes): argv only, stdin closed,
 * output captured, a deadline. Agents use `spawnAgent` in `./agent.ts` instead.
 */
import { AgentNotFoundError, CurupiraError } from '../core/errors.js';
import { startCommand } from './spawner.js';

export interface CommandOptions {
  cwd?: string;
  /** The complete environment of the child; nothing is inherited beyond it. Defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Kill the command after this many milliseconds (default 10 minutes). */
  timeoutMs?: number;
  /** Text written to the child's stdin; stdin is closed otherwise. */
  input?: string;
  signal?: AbortSignal;
}

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export class CommandError extends CurupiraError {
  readonly result: CommandResult;
  readonly command: string;

  constructor(command: string, result: CommandResult) {
    const detail = result.stderr.trim() || result.stdout.trim();
    super(
      'dispatch',
      result.timedOut
        ? `${command} did not finish in time`
        : `${command} exited with status ${result.exitCode}${detail ? `: ${detail}` : ''}`,
    );
    this.result = result;
    this.command = command;
  }
}

/** After a timeout's or an abort's SIGTERM, SIGKILL follows this much later (as execa did). */
const FORCE_KILL_MS = 5000;

/** Runs a command and returns its result whatever the exit code; throws only when it cannot start. */
export async function runCommand(
  executable: string,
  args: readonly string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  // node:child_process directly: execa cost about 15 MiB of a daemon's resident memory.
  const outcome = await spawnCaptured(executable, args, options);
  if ('error' in outcome) {
    const cause = outcome.error as NodeJS.ErrnoException;
    if (cause.code === 'ENOENT') throw new AgentNotFoundError(executable);
    throw new CurupiraError('dispatch', `could not start ${executable}: ${cause.message}`, { cause });
  }
  return outcome;
}

type Outcome = CommandResult | { error: unknown };

/** The child's captured output and exit, or why it could not start (or was aborted). */
async function spawnCaptured(
  executable: string,
  args: readonly string[],
  options: CommandOptions,
): Promise<Outcome> {
  if (options.signal?.aborted) return { error: abortReason(options.signal) };
  // Started by the helper process (see ./spawner.ts): a fork from this big process blocks its thread.
  const command = startCommand({
    file: executable,
    args,
    // The helper's own working directory is this process's when it started, not necessarily now.
    cwd: options.cwd ?? process.cwd(),
    env: { ...(options.env ?? process.env) },
    ...(options.input === undefined ? {} : { input: options.input }),
  });
  let timedOut = false;
  let aborted: unknown;
  let forceKill: NodeJS.Timeout | undefined;
  const stop = (): void => {
    command.kill('SIGTERM');
    forceKill ??= setTimeout(() => command.kill('SIGKILL'), FORCE_KILL_MS);
    forceKill.unref();
  };
  // Node's timers hold at most 2^31-1 ms (about 24.8 days); a longer deadline is no deadline.
  const deadline = setTimeout(
    () => {
      timedOut = true;
      stop();
    },
    Math.min(options.timeoutMs ?? 600_000, 2 ** 31 - 1),
  );
  const onAbort = (): void => {
    aborted = abortReason(options.signal!);
    stop();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const outcome = await command.done;
    if ('error' in outcome) return outcome;
    if (aborted !== undefined && !timedOut) return { error: aborted };
    return { ...outcome, timedOut };
  } finally {
    clearTimeout(deadline);
    if (forceKill) clearTimeout(forceKill);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new Error('This operation was aborted');
}

/** Like `runCommand`, but a non-zero exit (or timeout) throws `CommandError`. */
export async function runChecked(
  executable: string,
  args: readonly string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  const result = await runCommand(executable, args, options);
  if (result.exitCode !== 0 || result.timedOut)
    throw new CommandError([executable, ...args].join(' '), result);
  return result;
}
