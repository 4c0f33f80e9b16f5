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
