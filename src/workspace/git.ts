/**
 * The only place that runs git. Every call goes through `runCommand` (argv only, stdin closed, a
 * deadline) with an environment that cannot redirect git to another repository, never waits on a
 * credential prompt, and prints parseable (C locale) output.
 */
import { realpath, stat } from 'node:fs/promises';
import { AgentNotFoundError, CurupiraError, WorkspaceError } from '../core/errors.js';
import { type CommandResult, runCommand } from '../process/command.js';
import { buildToolEnv, GIT_ENV } from '../process/env.js';
import { scrub } from '../security/redact.js';

export { scrub };

/** Variables that would point git at a repository, index or object store other than the cwd's. */
const REDIRECTING_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_CEILING_DIRECTORIES',
  'GIT_DISCOVERY_ACROSS_FILESYSTEM',
] as const;

const DEFAULT_GIT_TIMEOUT_MS = 10 * 60_000;

/**
 * Laid before every command: git's automatic maintenance (`git maintenance run --auto` after a
 * fetch, `gc --auto` after a commit or a ref update) stays out of the per-run path. `curupira gc`
 * runs maintenance instead (`runMaintenance`).
 */
const NO_AUTO_MAINTENANCE = ['-c', 'maintenance.auto=false', '-c', 'gc.auto=0'] as const;

export interface GitOptions {
  cwd: string;
  /** Kill git after this many milliseconds (default 10 minutes). */
  timeoutMs?: number;
  /** Extra variables laid over the sanitised environment. */
  env?: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
  /** Let git run its automatic maintenance after the command (only `runMaintenance` does). */
  autoMaintenance?: boolean;
}

/** A git command that exited non-zero or ran out of time; `stderr` is git's own explanation. */
export class GitCommandError extends WorkspaceError {
  readonly args: readonly string[];
  readonly exitCode: number;
  readonly stderr: string;
  readonly timedOut: boolean;

  constructor(args: readonly string[], result: CommandResult, timeoutMs: number) {
    const detail = scrub(result.stderr.trim() || result.stdout.trim());
    const command = scrub(['git', ...args].join(' '));
    super(
      result.timedOut
        ? `${command} did not finish within ${timeoutMs / 1000} seconds`
        : `${command} failed with status ${result.exitCode}${detail ? `: ${detail}` : ''}`,
    );
    this.args = args;
    this.exitCode = result.exitCode;
    this.stderr = result.stderr;
    this.timedOut = result.timedOut;
  }
}

/** The git subcommands that talk to a remote, and so may need a credential helper. */
const NETWORK_COMMANDS = new Set(['clone', 'fetch', 'ls-remote']);

/**
 * What a helper process of the workspace (git, the setup script) runs with: built from this
 * process's environment through the allowlist (`buildToolEnv`: the base, git's own variables; no
 * provider key, no GitHub token, nothing unknown), minus the variables that redirect git to
 * another repository, plus `GIT_TERMINAL_PROMPT=0` so a missing credential fails fast instead of
 * hanging an unattended run. The setup script runs with this.
 */
export function isolatedEnv(
  extra: Readonly<Record<string, string | undefined>> = {},
  allow: readonly string[] = [],
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = buildToolEnv({
    source: process.env,
    allow: [...GIT_ENV, ...allow],
  });
  for (const name of REDIRECTING_VARIABLES) delete env[name];
  env.GIT_TERMINAL_PROMPT = '0';
  return { ...env, ...extra };
}

/** The git command of an argv: its first word that is not an option (`-c k=v` and `-C dir` skipped). */
function subcommand(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-c' || arg === '-C') i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/**
 * What git itself runs with: `isolatedEnv`, no credential-manager dialogs, and `LC_ALL=C` output.
 * The commands that read a remote (clone, fetch, ls-remote) also keep GH_TOKEN and GITHUB_TOKEN,
 * for a credential helper that reads them (`gh auth git-credential`, set by `gh auth setup-git`);
 * no other git command has them. A push gets the token its own way (src/delivery/push.ts).
 */
export function sanitizedGitEnv(
  extra: Readonly<Record<string, string | undefined>> = {},
  args: readonly string[] = [],
): Record<string, string | undefined> {
  const network = NETWORK_COMMANDS.has(subcommand(args) ?? '');
  return isolatedEnv(
    { GCM_INTERACTIVE: 'never', LC_ALL: 'C', ...extra },
    network ? ['GH_TOKEN', 'GITHUB_TOKEN'] : [],
  );
}

/** Runs git and returns its result whatever the exit code; throws only when git cannot start. */
export async function gitResult(args: readonly string[], options: GitOptions): Promise<CommandResult> {
  try {
    return await runCommand('git', options.autoMaintenance ? args : [...NO_AUTO_MAINTENANCE, ...args], {
      cwd: options.cwd,
      env: sanitizedGitEnv(options.env, args),
      timeoutMs: options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
      signal: options.signal,
    });
  } catch (error) {
    // A missing cwd surfaces from spawn as ENOENT, which would read as "git not found".
    if (!(await isDirectory(options.cwd))) {
      throw new WorkspaceError(`could not start git: working directory does not exist: ${options.cwd}`, {
        cause: error,
      });
    }
    if (error instanceof AgentNotFoundError) {
      throw new WorkspaceError('Required executable not found: git', { cause: error });
    }
    const message = error instanceof CurupiraError ? error.message : String(error);
    throw new WorkspaceError(scrub(message), { cause: error });
  }
}

/** Runs git and returns its stdout; a non-zero exit or a timeout throws `GitCommandError`. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  const result = await gitResult(args, options);
  if (result.exitCode !== 0 || result.timedOut) {
    throw new GitCommandError(args, result, options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS);
  }
  return result.stdout;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The housekeeping git would otherwise start after a fetch or a commit (`git maintenance run
 * --auto`: pack loose objects, pack refs, prune), run at a time of our choosing. Honours the
 * repository's own maintenance settings; a failure is returned, not thrown.
 */
export async function runMaintenance(cwd: string): Promise<CommandResult> {
  return gitResult(['maintenance', 'run', '--auto', '--quiet'], { cwd, autoMaintenance: true });
}

/**
 * True when `path` is the top level of a Git working tree (a clone or a linked worktree). A folder
 * that merely sits inside some other repository is not a checkout.
 */
export async function isGitCheckout(path: string): Promise<boolean> {
  if (!(await isDirectory(path))) return false;
  const result = await gitResult(['rev-parse', '--show-toplevel'], { cwd: path });
  if (result.exitCode !== 0) return false;
  const [top, here] = await Promise.all([realpath(result.stdout.trim()), realpath(path)]);
  return top === here;
}

export interface CheckoutState {
  /** The top level of the working tree (real path). */
  top: string;
  /** The repository's (or linked worktree's) own git directory, absolute. */
  gitDir: string;
  /** The commit HEAD names, or null when HEAD is unborn (no commit yet). */
  head: string | null;
}

/**
 * Where `path`'s working tree and git directory are and what HEAD is, in one git process (two when
 * HEAD is unborn); null when `path` is not the top level of a Git working tree.
 */
export async function checkoutState(path: string): Promise<CheckoutState | null> {
  if (!(await isDirectory(path))) return null;
  const full = await gitResult(['rev-parse', '--show-toplevel', '--absolute-git-dir', 'HEAD'], { cwd: path });
  let lines = full.stdout.trim().split('\n');
  let head: string | null = lines[2] ?? null;
  if (full.exitCode !== 0) {
    const bare = await gitResult(['rev-parse', '--show-toplevel', '--absolute-git-dir'], { cwd: path });
    if (bare.exitCode !== 0) return null;
    lines = bare.stdout.trim().split('\n');
    head = null;
  }
  const [top, gitDir] = lines;
  if (!top || !gitDir) return null;
  const [realTop, here] = await Promise.all([realpath(top), realpath(path)]);
  if (realTop !== here) return null;
  return { top: realTop, gitDir, head: head && /^[0-9a-f]{40,64}$/.test(head) ? head : null };
}

/** The paths of every file in `rev`'s tree (recursively). */
export async function listTreeFiles(cwd: string, rev: string): Promise<string[]> {
  const out = await git(['ls-tree', '-r', '-z', '--name-only', rev], { cwd });
  return out.split('\0').filter((name) => name !== '');
}

/** The branch checked out at `cwd` (`main`), or null when HEAD is detached. */
export async function currentBranch(cwd: string): Promise<string | null> {
  const result = await gitResult(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd });
  if (result.exitCode !== 0) return null;
  return result.stdout.trim() || null;
}

/** The commit a ref names, or null when it does not exist. */
export async function revParse(cwd: string, ref: string): Promise<string | null> {
  const result = await gitResult(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], {
    cwd,
  });
  if (result.exitCode !== 0) return null;
  return result.stdout.trim() || null;
}

/** True when commit `ancestor` is `descendant` or one of its ancestors (false when either is unknown). */
export async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  const result = await gitResult(['merge-base', '--is-ancestor', ancestor, descendant], { cwd });
  return result.exitCode === 0;
}

/**
 * Commits reachable from `to` and not from `from` (all of `to`'s history when `from` is null),
 * newest first, at most `max` of them, first parents only: the commits that reached a branch.
 */
export async function commitsBetween(
  cwd: string,
  from: string | null,
  to: string,
  max: number,
): Promise<string[]> {
  const range = from === null ? [to] : [`${from}..${to}`];
  const out = await git(['rev-list', '--first-parent', `--max-count=${max}`, ...range, '--'], { cwd });
  return out.split('\n').filter((line) => line !== '');
}

/** The commit HEAD names at `cwd`, or null (an unborn branch). */
export async function headCommit(cwd: string): Promise<string | null> {
  return revParse(cwd, 'HEAD');
}

/** True when `cwd` has staged, unstaged or untracked changes (ignored files do not count). */
export async function hasChanges(cwd: string): Promise<boolean> {
  return (await statusPorcelain(cwd)).length > 0;
}

/** True when the local branch `refs/heads/<branch>` exists. */
export async function branchExists(cwd: string, branch: string): Promise<boolean> {
  return (await revParse(cwd, `refs/heads/${branch}`)) !== null;
}

/** How many commits reachable from `refs` are on no remote-tracking ref (i.e. exist only locally). */
export async function countUnpushedCommits(cwd: string, refs: readonly string[]): Promise<number> {
  if (refs.length === 0) return 0;
  const out = await git(['rev-list', '--count', ...refs, '--not', '--remotes', '--'], { cwd });
  return Number.parseInt(out.trim(), 10) || 0;
}

export interface StatusEntry {
  /** The two-letter porcelain code: ` M`, `A `, `??`, `R `… */
  code: string;
  path: string;
  /** For renames and copies, where the file came from. */
  from?: string;
}

/**
 * Uncommitted changes at `cwd`: staged, unstaged and untracked (each untracked file listed, whatever
 * `status.showUntrackedFiles` says). Files matched by `.gitignore` are not changes.
 */
export async function statusPorcelain(cwd: string): Promise<StatusEntry[]> {
  // --no-optional-locks: do not rewrite the index, so looking never changes the worktree's age.
  const out = await git(
    [
      '--no-optional-locks',
      'status',
      '--porcelain=v1',
      '-z',
      '--untracked-files=all',
      '--ignore-submodules=none',
    ],
    { cwd },
  );
  const fields = out.split('\0');
  const entries: StatusEntry[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.length < 4) continue;
    const code = field.slice(0, 2);
    const entry: StatusEntry = { code, path: field.slice(3) };
    if (code.includes('R') || code.includes('C')) {
      i++;
      entry.from = fields[i];
    }
    entries.push(entry);
  }
  return entries;
}

export interface BranchStatus {
  /** The commit HEAD names, or null when HEAD is unborn. */
  head: string | null;
  /** The branch HEAD is on (`curupira/…`), or null when detached. */
  branch: string | null;
  /** Paths with staged, unstaged or untracked changes (ignored files do not count). */
  changedFiles: string[];
  /**
   * Whether the worktree holds files `.gitignore` hides (build output, logs): an ignored folder
   * counts once and git does not walk into it.
   */
  ignored: boolean;
}

/**
 * HEAD, its branch and the uncommitted changes at `cwd`, in one process: `git status
 * --porcelain=v2 --branch`, each untracked file listed (whatever `status.showUntrackedFiles` says).
 */
export async function statusWithBranch(cwd: string): Promise<BranchStatus> {
  const out = await git(
    [
      '--no-optional-locks',
      'status',
      '--porcelain=v2',
      '--branch',
      '-z',
      '--untracked-files=all',
      '--ignore-submodules=none',
      // Ignored paths as `! path`, an ignored folder once without its contents.
      '--ignored=matching',
    ],
    { cwd },
  );
  const status: BranchStatus = { head: null, branch: null, changedFiles: [], ignored: false };
  const fields = out.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!;
    if (field.startsWith('# branch.oid ')) {
      const oid = field.slice('# branch.oid '.length);
      status.head = /^[0-9a-f]{40,64}$/.test(oid) ? oid : null;
    } else if (field.startsWith('# branch.head ')) {
      const name = field.slice('# branch.head '.length);
      status.branch = name === '(detached)' ? null : name;
    } else if (field.startsWith('? ')) status.changedFiles.push(field.slice(2));
    else if (field.startsWith('! ')) status.ignored = true;
    else if (/^[12u] /.test(field)) {
      // Ordinary (1), renamed or copied (2, followed by the original path), unmerged (u).
      const columns = field[0] === '1' ? 8 : field[0] === '2' ? 9 : 10;
      status.changedFiles.push(field.split(' ').slice(columns).join(' '));
      if (field[0] === '2') i++;
    }
  }
  return status;
}

export interface WorktreeEntry {
  /** Absolute path as git recorded it. */
  path: string;
  head: string | null;
  /** Short branch name (`curupira/triage/...`), or null when detached. */
  branch: string | null;
  bare: boolean;
  locked: boolean;
  /** Why it is locked (`initializing` while `git worktree add` runs), or null. */
  lockReason: string | null;
  /** Git's working directory is gone; `git worktree prune` would forget it. */
  prunable: boolean;
}

/**
 * Every worktree git knows for the repository at `cwd`, the main checkout first. (Line-based porcelain
 * rather than `-z`, which needs git 2.36; the paths we create never contain a newline.)
 */
export async function listWorktrees(cwd: string): Promise<WorktreeEntry[]> {
  const out = await git(['worktree', 'list', '--porcelain'], { cwd });
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of out.split('\n')) {
    if (field === '') {
      if (current) entries.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(' ');
    const key = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? '' : field.slice(space + 1);
    if (key === 'worktree') {
      if (current) entries.push(current);
      current = {
        path: value,
        head: null,
        branch: null,
        bare: false,
        locked: false,
        lockReason: null,
        prunable: false,
      };
      continue;
    }
    if (!current) continue;
    if (key === 'HEAD') current.head = value;
    else if (key === 'branch') current.branch = value.replace(/^refs\/heads\//, '');
    else if (key === 'bare') current.bare = true;
    else if (key === 'locked') {
      current.locked = true;
      current.lockReason = value === '' ? null : value;
    } else if (key === 'prunable') current.prunable = true;
  }
  if (current) entries.push(current);
  return entries;
}
