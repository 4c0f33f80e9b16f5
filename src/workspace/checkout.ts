/**
 * The base checkout of a repository alias: cloned once per destination, then left alone. The
 * alias's `setup_script` runs only after a fresh clone made by curupira (as the reference says): a
 * checkout that was already there (a `path` pointing at the user's own clone, or a clone made before
 * `setup_script` was set) is never set up. If the setup fails the fresh clone is removed, so the next
 * run clones and sets up again. A setup that was interrupted (a kill) on a clone that stays runs
 * again before the next agent: the clone carries a "setup pending" marker from before it is moved
 * into place until the setup has succeeded.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { CurupiraError, errorMessage, WorkspaceError } from '../core/errors.js';
import type { Logger } from '../log.js';
import { type CommandResult, runCommand } from '../process/command.js';
import {
  type CheckoutState,
  checkoutState,
  countUnpushedCommits,
  git,
  gitResult,
  isolatedEnv,
  scrub,
} from './git.js';
import { repoLockKey, withLock } from './lock.js';
import { isInside, worktreesRoot } from './paths.js';
import { pathExists, removeTree } from './remove.js';
import { forgetFetch, resolveDefaultBranch } from './worktree.js';

/** `<parent>/.<name>.clone-<random>`: where a clone is made before it is moved into place. */
const CLONE_INFIX = '.clone-';
/**
 * In the git directory of a clone curupira made with a setup script to run: written before the clone
 * is moved into place, removed once the setup has succeeded. Its presence on an existing checkout
 * means a setup that never finished.
 */
const SETUP_PENDING = 'curupira-setup-pending';

/**
 * Checkouts this process has found complete, by path: later runs check them with a file lookup (the
 * index is still there) instead of a git process.
 */
const knownCheckouts = new Map<string, CheckoutState>();

/** How much of a failed setup script's output goes into the error. */
const OUTPUT_TAIL_CHARS = 2000;

export interface EnsureCheckoutOptions {
  /** The repository alias (`[repositories.<alias>]`), for messages and logs. */
  alias: string;
  /** The Git URL to clone from. */
  remote: string;
  /** Absolute destination: the alias's `path`, or `workspace_dir/<alias>`. */
  path: string;
  /**
   * Relative path of an executable inside the checkout, run once after a fresh clone (never on a
   * checkout that this module did not clone).
   */
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
 *
 * A clone is made in a temporary folder beside the destination and moved into place only once it is
 * complete (HEAD resolves, origin's default branch is known), so a kill during the clone never leaves
 * a half clone that later looks like a checkout. The setup script runs only on a clone made here;
 * it counts as done only once it has succeeded (a marker in the clone's git directory says it is
 * pending until then), otherwise it runs again on the next call.
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
    const deadline = Date.now() + options.timeoutMs;
    if (await pathExists(checkout)) {
      const known = knownCheckouts.get(checkout);
      const state =
        known !== undefined && (await incompleteReason(known)) === null
          ? known
          : await checkoutState(checkout);
      if (state === null) {
        if (!(await isUnreadableGitOnly(checkout))) {
          throw new WorkspaceError(`workspace destination exists but is not a Git checkout: ${checkout}`, {
            code: 'workspace_path',
          });
        }
        // Only a `.git` folder git cannot read: a clone killed as it began, before clones were made aside.
        log.warn({ repo: alias, path: checkout }, 'Cloning again over an interrupted clone');
        await removeTree(checkout, dirname(checkout));
      }
      const broken = state === null ? null : await incompleteReason(state);
      if (state !== null && broken === null) {
        knownCheckouts.set(checkout, state);
        if (setupScript !== undefined && (await setupPending(state.gitDir))) {
          // A clone of ours whose setup was interrupted or failed: run it again before any agent works here.
          await runSetupScript({ checkout, script: setupScript, alias, deadline, log, signal });
          await markSetupDone(state.gitDir);
        }
        return { path: checkout, freshClone: false };
      }
      knownCheckouts.delete(checkout);
      if (state !== null && broken !== null) await discardIncomplete(checkout, state, broken, alias, log);
    }
    forgetFetch(checkout);

    const gitDir = await cloneIntoPlace({
      alias,
      remote,
      checkout,
      deadline,
      log,
      signal,
      setupPending: setupScript !== undefined,
    });
    if (setupScript !== undefined) {
      try {
        await runSetupScript({ checkout, script: setupScript, alias, deadline, log, signal });
      } catch (error) {
        await discardClone(checkout, alias, log);
        throw error;
      }
      await markSetupDone(gitDir);
    }
    return { path: checkout, freshClone: true };
  });
}

interface CloneRequest {
  alias: string;
  remote: string;
  checkout: string;
  deadline: number;
  log: Logger;
  signal?: AbortSignal;
  /** Mark the clone's setup as pending before it is moved into place. */
  setupPending: boolean;
}

/**
 * Clones into `<parent>/.<name>.clone-<random>`, checks the result, and renames it to the
 * destination. Temporary clones left by a killed earlier attempt are removed first. Returns the
 * checkout's git directory.
 */
async function cloneIntoPlace(request: CloneRequest): Promise<string> {
  const { alias, remote, checkout, log, signal } = request;
  const parent = dirname(checkout);
  await mkdir(parent, { recursive: true });
  const prefix = `.${basename(checkout)}${CLONE_INFIX}`;
  for (const name of await readdir(parent)) {
    if (!name.startsWith(prefix)) continue;
    log.info(
      { repo: alias, path: join(parent, name) },
      'Removing a clone left unfinished by an earlier attempt',
    );
    await removeTree(join(parent, name), parent);
  }
  const temp = join(parent, `${prefix}${randomBytes(6).toString('hex')}`);
  log.info({ repo: alias, remote: scrub(remote), path: checkout }, 'Cloning repository');
  try {
    await git(['clone', '--', remote, temp], {
      cwd: parent,
      timeoutMs: remaining(request.deadline),
      signal,
    });
    const state = await checkoutState(temp);
    if (state === null) {
      throw new WorkspaceError(`clone reported success, but no Git checkout was created for ${checkout}`);
    }
    if (state.head === null) throw new WorkspaceError(await noCommitReason(temp, alias, scrub(remote)));
    await resolveDefaultBranch(temp, { network: false });
    if (request.setupPending) await writeFile(join(state.gitDir, SETUP_PENDING), '');
    await rename(temp, checkout);
    return join(checkout, '.git');
  } catch (error) {
    await discardClone(temp, alias, log);
    throw error;
  }
}

/**
 * Why an existing checkout cannot be used as it is, or null when it can: no commit at all (a clone
 * killed while fetching, from before clones were made aside), or no index (killed while checking
 * out). One file lookup in the usual case.
 */
async function incompleteReason(state: CheckoutState): Promise<string | null> {
  if (state.head === null) return 'it has no commit (an interrupted clone?)';
  if (!(await pathExists(join(state.gitDir, 'index')))) return 'its checkout never finished (no index)';
  return null;
}

/**
 * Removes an incomplete checkout so it can be cloned again, but only when it holds nothing of its
 * own: no local commits, no worktrees, and (while HEAD is unborn) no files besides `.git`.
 */
async function discardIncomplete(
  checkout: string,
  state: CheckoutState,
  reason: string,
  alias: string,
  log: Logger,
): Promise<void> {
  const local = await countUnpushedCommits(checkout, ['--branches']).catch(() => Number.NaN);
  const worktrees = await readdir(join(state.gitDir, 'worktrees')).catch(() => [] as string[]);
  const files = (await readdir(checkout)).filter((name) => name !== '.git');
  const problems: string[] = [];
  if (!(local === 0))
    problems.push(Number.isNaN(local) ? 'git cannot list its commits' : `${local} local commits`);
  if (worktrees.length > 0) problems.push(`${worktrees.length} worktrees`);
  if (state.head === null && files.length > 0) problems.push(`${files.length} files besides .git`);
  if (problems.length > 0) {
    throw new WorkspaceError(
      `checkout of repository '${alias}' at ${checkout} is incomplete: ${reason}; it holds ${problems.join(', ')}, so it is not replaced. Move it away (curupira clones it again) or repair it with git`,
      { code: 'workspace_path' },
    );
  }
  log.warn({ repo: alias, path: checkout, reason }, 'Cloning again over an incomplete checkout');
  await removeTree(checkout, dirname(checkout));
}

/** True when `path` holds nothing but a `.git` folder (that git does not recognise as a repository). */
async function isUnreadableGitOnly(path: string): Promise<boolean> {
  const names = await readdir(path).catch(() => null);
  if (names?.length !== 1 || names[0] !== '.git') return false;
  return (await stat(join(path, '.git'))).isDirectory();
}

/** True when the checkout is a clone of ours whose setup has not succeeded yet. */
async function setupPending(gitDir: string): Promise<boolean> {
  return pathExists(join(gitDir, SETUP_PENDING));
}

async function markSetupDone(gitDir: string): Promise<void> {
  await rm(join(gitDir, SETUP_PENDING), { force: true });
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

/**
 * Why a fresh clone has no commit: the remote is empty, or its HEAD names a branch that has none
 * while others exist (a bare repository made with another default branch name than the one pushed).
 */
async function noCommitReason(clone: string, alias: string, remote: string): Promise<string> {
  const branches = await gitResult(['for-each-ref', '--format=%(refname:strip=3)', 'refs/remotes/origin/'], {
    cwd: clone,
  });
  const names = branches.exitCode === 0 ? branches.stdout.split('\n').filter((n) => n && n !== 'HEAD') : [];
  if (names.length === 0)
    return `the clone of repository '${alias}' has no commit: is ${remote} empty? Push a first commit, then run again`;
  const head = await gitResult(['symbolic-ref', '--short', 'HEAD'], { cwd: clone });
  const named = head.exitCode === 0 ? `'${head.stdout.trim()}'` : 'a branch';
  const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? ', …' : '');
  return `the clone of repository '${alias}' has no commit: ${remote}'s HEAD names ${named}, which has none, while it has ${shown}. Point its HEAD at the default branch (in a bare repository: git symbolic-ref HEAD refs/heads/${names.includes('main') ? 'main' : names[0]}), then run again`;
}
