/**
 * A synchronous command, argv only, for the few callers that cannot wait: the simulator's REST
 * handlers (synchronous) read their backing bare repositories with it. stdin is closed, stderr is
 * dropped, and the environment is exactly what the caller gives.
 */
import { execFileSync, spawnSync } from 'node:child_process';

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

/**
 * `runCommandSync` that also answers when the command exits non-zero (`git merge-tree` exits 1 on
 * a conflict and still prints what it found): the exit status and stdout (trimmed); status -1 when
 * the command could not start or timed out. Extra environment and the same hygiene.
 */
export function runCommandSyncStatus(
  executable: string,
  args: readonly string[],
  options: SyncCommandOptions,
): { status: number; stdout: string } {
  const result = spawnSync(executable, [...args], {
    cwd: options.cwd,
    env: { ...options.env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: options.timeoutMs ?? 10_000,
  });
  if (result.error || result.status === null) return { status: -1, stdout: '' };
  return { status: result.status, stdout: (result.stdout ?? '').trim() };
}
