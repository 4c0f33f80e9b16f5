/**
 * A synchronous command, argv only, for the few callers that cannot wait: the simulator's REST
 * handlers (synchronous) read their backing bare repositories with it. stdin is closed, stderr is
 * dropped, and the environment is exactly what the caller gives.
 */
import { execFileSync } from 'node:child_process';

export interface SyncCommandOptions {
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** Default 10 s. */
  timeoutMs?: number;
}

/** stdout (trimmed) when the command exits 0, else undefined. */
export function runCommandSync(
  executable: string,
  args: readonly string[],
  options: SyncCommandOptions,
): string | undefined {
  try {
    return execFileSync(executable, [...args], {
      cwd: options.cwd,
      env: { ...options.env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: options.timeoutMs ?? 10_000,
    }).trim();
  } catch {
    return undefined;
  }
}
