/** Documented, stable exit codes (README "Exit codes"). */
export const EXIT = {
  ok: 0,
  /** A run failed, a doctor check failed, or a runtime error. */
  failure: 1,
  /** The settings file is invalid, or the command line is. */
  config: 2,
  /** Stopped with Ctrl+C. */
  interrupted: 130,
} as const;

let currentExitCode: number | undefined;

/** Commands call this to set the exit code without throwing (e.g. `run` when a task failed). */
export function setExitCode(code: number): void {
  currentExitCode = code;
}

/** The exit code a command set during this `runCli` call, if any. */
export function exitCodeSet(): number | undefined {
  return currentExitCode;
}

/** `runCli` forgets the code when it returns, so the next call (in-process tests) starts clean. */
export function clearExitCode(): void {
  currentExitCode = undefined;
}
