/**
 * The base checkout of a repository alias: cloned once per destination, then left alone. The
 * alias's `setup_script` runs only right after a fresh clone; if it fails the fresh clone is removed,
 * so the next run clones and sets up again instead of working in a half-prepared checkout.
 */
import { mkdir, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { CurupiraError, errorMessage, WorkspaceError } from '../core/errors.js';
import type { Logger } from '../log.js';
import { type CommandResult, runCommand } from '../process/command.js';
import { git, isGitCheckout, isolatedEnv, scrub } from './git.js';
import { repoLockKey, withLock } from './lock.js';
import { isInside, worktreesRoot } from './paths.js';
import { pathExists, removeTree } from './remove.js';

/** How much of a failed setup script's output goes into the error. */
const OUTPUT_TAIL_CHARS = 2000;

export interface EnsureCheckoutOptions {
  /** The repository alias (`[repositories.<alias>]`), for messages and logs. */
  alias: string;
  /** The Git URL to clone from. */
  remote: string;
  /** Absolute destination: the alias's `path`, or `workspace_dir/<alias>`. */
  path: string;
  /** Relative path of an executable inside the checkout, run once after a fresh clone. */
  setupScript?: string;
  /** Deadline for the clone and the setup script together, in milliseconds. */
  timeoutMs: number;
  log: Logger;
  signal?: AbortSignal;
}

export interface CheckoutResult {
  /** The checkout's absolute path. */
  path: string;
  /** True when this call cloned it (and ran the setup script, if any). */
  freshClone: boolean;
}

/**
 * Makes sure a Git checkout of `remote` exists at `path`. Concurrent calls for one destination wait
 * for each other, so a repository is cloned (and set up) exactly once.
 */
export async function ensureCheckout(options: EnsureCheckoutOptions): Promise<CheckoutResult> {
  const { alias, remote, setupScript, log, signal } = options;
  if (!isAbsolute(options.path)) {
    throw new WorkspaceError(`checkout path for repository '${alias}' must be absolute: ${options.path}`, {
      code: 'workspace_path',
    });
  }
  const checkout = resolve(options.path);
  worktreesRoot(checkout); // rejects the filesystem root
  if (setupScript !== undefined) assertRelativeScript(setupScript);

  return withLock(repoLockKey(checkout), async () => {
    if (await pathExists(checkout)) {
      if (await isGitCheckout(checkout)) return { path: checkout, freshClone: false };
      throw new WorkspaceError(`workspace destination exists but is not a Git checkout: ${checkout}`, {
        code: 'workspace_path',
      });
    }

    const deadline = Date.now() + options.timeoutMs;
    const parent = dirname(checkout);
    await mkdir(parent, { recursive: true });
    log.info({ repo: alias, remote: scrub(remote), path: checkout }, 'Cloning repository');
    try {
      await git(['clone', '--', remote, checkout], { cwd: parent, timeoutMs: remaining(deadline), signal });
    } catch (error) {
      // The destination did not exist before this call, so whatever is there now is ours to remove.
      await discardClone(checkout, alias, log);
      throw error;
    }
    if (!(await isGitCheckout(checkout))) {
      throw new WorkspaceError(`clone reported success, but no Git checkout was created at ${checkout}`);
    }

    if (setupScript !== undefined) {
      try {
        await runSetupScript({ checkout, script: setupScript, alias, deadline, log, signal });
      } catch (error) {
        await discardClone(checkout, alias, log);
        throw error;
      }
    }
    return { path: checkout, freshClone: true };
  });
}

function assertRelativeScript(script: string): void {
  if (script.trim() === '') {
    throw new WorkspaceError('setup_script must not be empty', { code: 'setup_script' });
  }
  if (isAbsolute(script) || script.split(/[\\/]/).includes('..')) {
    throw new WorkspaceError(`setup_script must be a relative path without '..': ${script}`, {
      code: 'workspace_path',
    });
  }
}

interface SetupScriptRun {
  checkout: string;
  script: string;
  alias: string;
  deadline: number;
  log: Logger;
  signal?: AbortSignal;
}

/** Runs `<checkout>/<script>` directly (no shell), cwd the checkout, within the deadline. */
async function runSetupScript(run: SetupScriptRun): Promise<void> {
  const { checkout, script, alias, log } = run;
  const candidate = resolve(checkout, script);
  // Real paths on both sides: a symlink in the repository cannot point the script outside it.
  if (!(await isInside(checkout, candidate))) {
    throw new WorkspaceError(`setup script ${script} resolves outside the checkout ${checkout}`, {
      code: 'workspace_path',
    });
  }
  const executable = await realpath(candidate).catch(() => null);
  if (executable === null || !(await stat(executable)).isFile()) {
    throw new WorkspaceError(`setup script ${script} does not exist in ${checkout}`, {
      code: 'setup_script',
    });
  }

  const timeoutMs = remaining(run.deadline);
  log.info({ repo: alias, path: script }, 'Running setup script');
  let result: CommandResult;
  try {
    result = await runCommand(executable, [], {
      cwd: checkout,
      env: isolatedEnv({ PWD: checkout }),
      timeoutMs,
      signal: run.signal,
    });
  } catch (error) {
    const why = run.signal?.aborted
      ? 'was cancelled'
      : `could not start: ${errorMessage(error)}${isPermissionError(error) ? ' (is it executable?)' : ''}`;
    log.warn({ repo: alias, path: script, error: errorMessage(error) }, 'Setup script failed');
    throw new WorkspaceError(`setup script ${script} ${why}`, { code: 'setup_script', cause: error });
  }
  if (result.exitCode === 0 && !result.timedOut) {
    log.info({ repo: alias, path: script }, 'Setup script finished');
    return;
  }
  const tail = outputTail(result);
  log.warn({ repo: alias, path: script, code: result.exitCode, stderr: tail }, 'Setup script failed');
  const what = result.timedOut
    ? `did not finish within ${timeoutMs / 1000} seconds`
    : `failed with status ${result.exitCode}`;
  throw new WorkspaceError(`setup script ${script} ${what}: ${tail || '(no output)'}`, {
    code: 'setup_script',
  });
}

function isPermissionError(error: unknown): boolean {
  const cause = error instanceof CurupiraError ? error.cause : error;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EACCES' || code === 'EPERM' || /EACCES/.test(errorMessage(error));
}

/** The last part of what the script printed (stdout, then stderr), with credentials scrubbed. */
function outputTail(result: CommandResult): string {
  const text = [result.stdout.trim(), result.stderr.trim()].filter(Boolean).join('\n');
  return scrub(text.length > OUTPUT_TAIL_CHARS ? `…${text.slice(-OUTPUT_TAIL_CHARS)}` : text);
}

async function discardClone(checkout: string, alias: string, log: Logger): Promise<void> {
  try {
    await removeTree(checkout, dirname(checkout));
  } catch (error) {
    log.warn(
      { repo: alias, path: checkout, error: errorMessage(error) },
      'Could not remove the failed clone',
    );
  }
}

function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}
