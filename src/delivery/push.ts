/**
 * Pushing a run's branch with the engine's credentials, never forced.
 *
 * - An `https://` remote gets the token through a credential helper given to that one git process
 *   in its environment (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`): the helper list
 *   is reset first (no helper from any config file runs), and ours answers only for the remote's
 *   host, reading the token from `CURUPIRA_PUSH_TOKEN`, a variable only that git process has. The
 *   token is never in a URL, a file, git's argv, or the agent's environment.
 * - Hooks are off for the push (`core.hooksPath=/dev/null`): a `pre-push` hook the agent planted
 *   would otherwise run with the token in its environment.
 * - The push goes to the remote URL of the settings, not to the checkout's `origin` (whose URL an
 *   agent could change); the remote-tracking ref is then set by hand, so the worktree's commits
 *   count as pushed.
 * - Refspec without `+` and no `--force`: a rewritten history is refused by the remote, and the
 *   push fails instead of overwriting what is there. A push that found the remote's ref locked by
 *   another update (`cannot lock ref`) is tried again twice, after 0.5 s and 2 s.
 */
import type { TokenSource } from '../github/token.js';
import { git, gitResult, revParse } from '../workspace/git.js';

export const PUSH_TOKEN_ENV = 'CURUPIRA_PUSH_TOKEN';
export const PUSH_HOST_ENV = 'CURUPIRA_PUSH_HOST';

/**
 * The helper git runs as `sh -c '<helper> get'`: it reads git's request on stdin and answers only
 * for the expected host. Holds no secret: the token is read from the environment when it runs.
 */
export const CREDENTIAL_HELPER = `!f() { test "$1" = get || exit 0; h=; while IFS= read -r l; do case "$l" in host=*) h="\${l#host=}";; esac; done; test -n "$h" && test "$h" = "$${PUSH_HOST_ENV}" || exit 0; echo username=x-access-token; echo "password=$${PUSH_TOKEN_ENV}"; }; f`;

/** The host of an `https://` remote, or undefined for every other kind (ssh, file, a local path). */
export function httpsHost(remote: string): string | undefined {
  if (!/^https:\/\//i.test(remote)) return undefined;
  try {
    return new URL(remote).host || undefined;
  } catch {
    return undefined;
  }
}

/** Configuration for one git process, as environment variables (nothing in argv). */
export function configEnv(entries: readonly (readonly [string, string])[]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  entries.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** The environment of a push to `remote`: hooks off, and for https the in-memory credential helper. */
export function pushEnv(remote: string, token: string | undefined): Record<string, string> {
  const entries: [string, string][] = [['core.hooksPath', '/dev/null']];
  const host = httpsHost(remote);
  if (host === undefined || token === undefined) return configEnv(entries);
  entries.push(['credential.helper', ''], ['credential.helper', CREDENTIAL_HELPER]);
  return { ...configEnv(entries), [PUSH_TOKEN_ENV]: token, [PUSH_HOST_ENV]: host };
}

export interface PushOptions {
  /** The worktree (or checkout) holding the branch. */
  cwd: string;
  /** The remote URL from the settings. */
  remote: string;
  branch: string;
  /** The branch on the remote (default `branch`): a delivery's readable name, or a pull request's head. */
  remoteBranch?: string;
  tokens?: TokenSource;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** The commit `refs/heads/<branch>` points at in `cwd`, or null. */
export async function branchTip(cwd: string, branch: string): Promise<string | null> {
  return revParse(cwd, `refs/heads/${branch}`);
}

/** Pushes the branch's tip to the remote's branch (`remoteBranch`, fast-forward only); returns the commit. */
export async function pushBranch(options: PushOptions): Promise<string> {
  const { cwd, remote, branch } = options;
  const target = options.remoteBranch ?? branch;
  const sha = await branchTip(cwd, branch);
  if (!sha) throw new Error(`branch ${branch} does not exist in ${cwd}`);
  const token = httpsHost(remote) && options.tokens ? await options.tokens.get() : undefined;
  const push = () =>
    git(['push', '--quiet', '--no-verify', remote, `${sha}:refs/heads/${target}`], {
      cwd,
      env: pushEnv(remote, token),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  for (let attempt = 0; ; attempt += 1) {
    try {
      await push();
      break;
    } catch (error) {
      // The remote's ref was locked by another update of it (a push a killed curupira left
      // running, say): once that one is done, the same push is a no-op or a fast-forward.
      const wait = LOCKED_REF_RETRY_MS[attempt];
      if (wait === undefined || !/cannot lock ref/i.test(String(error)) || options.signal?.aborted)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  await git(['update-ref', `refs/remotes/origin/${target}`, sha], { cwd });
  return sha;
}

/** Waits before pushing again when the remote's ref was locked by another update. */
const LOCKED_REF_RETRY_MS = [500, 2000];

/** True when `sha` is already in `refs/remotes/origin/<base>` (nothing of the branch is new). */
export async function containedIn(cwd: string, sha: string, base: string): Promise<boolean> {
  const baseSha = await revParse(cwd, `refs/remotes/origin/${base}`);
  if (!baseSha) return false;
  if (baseSha === sha) return true;
  const result = await gitResult(['merge-base', '--is-ancestor', sha, baseSha], { cwd });
  return result.exitCode === 0;
}
