/**
 * Short-lived helper commands (git, `gh auth token`, version probes): argv only, stdin closed,
 * output captured, a deadline. Agents use `spawnAgent` in `./agent.ts` instead.
 */
import { AgentNotFoundError, CurupiraError } from '../core/errors.js';

/** execa is loaded on first use: commands that never start a process (validate, schema) stay quick. */
let execaModule: Promise<typeof import('execa')> | undefined;
function loadExeca(): Promise<typeof import('execa')> {
  execaModule ??= import('execa');
  return execaModule;
}

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

/** Runs a command and returns its result whatever the exit code; throws only when it cannot start. */
export async function runCommand(
  executable: string,
  args: readonly string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  try {
    const { execa } = await loadExeca();
    const result = await execa(executable, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      extendEnv: false,
      // Node's timers hold at most 2^31-1 ms (about 24.8 days); a longer deadline is no deadline.
      timeout: Math.min(options.timeoutMs ?? 600_000, 2 ** 31 - 1),
      reject: false,
      stripFinalNewline: false,
      ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
      cancelSignal: options.signal,
      shell: false,
    });
    if (result.failed && result.exitCode === undefined && !result.timedOut && result.cause) {
      const cause = result.cause as NodeJS.ErrnoException;
      if (cause.code === 'ENOENT') throw new AgentNotFoundError(executable);
      throw new CurupiraError('dispatch', `could not start ${executable}: ${cause.message}`, { cause });
    }
    return {
      exitCode: result.exitCode ?? -1,
      stdout: String(result.stdout ?? ''),
      stderr: String(result.stderr ?? ''),
      timedOut: Boolean(result.timedOut),
    };
  } catch (error) {
    if (error instanceof CurupiraError) throw error;
    const cause = error as NodeJS.ErrnoException;
    if (cause.code === 'ENOENT') throw new AgentNotFoundError(executable);
    throw new CurupiraError('dispatch', `could not start ${executable}: ${cause.message}`, { cause });
  }
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
