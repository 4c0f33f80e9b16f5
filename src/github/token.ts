/**
 * Where the GitHub token comes from: `GH_TOKEN`, else `GITHUB_TOKEN`, else `gh auth token`
 * (cached five minutes). The token is registered with the logger so it is never printed.
 */
import type { Clock } from '../core/clock.js';
import { AgentNotFoundError, GitHubAuthError } from '../core/errors.js';
import { registerSecret } from '../log.js';
import { runCommand } from '../process/command.js';
import { buildToolEnv, GH_CLI_ENV } from '../process/env.js';

export const TOKEN_CACHE_MS = 5 * 60_000;

export interface TokenSource {
  /** The token; throws GitHubAuthError with the seed's messages when there is none. */
  get(): Promise<string>;
  /** Where the token came from, for `doctor` (never the token itself). */
  describe(): Promise<string>;
}

export interface TokenSourceOptions {
  env: NodeJS.ProcessEnv;
  clock: Clock;
  /** GitHub host for `gh auth token --hostname`, when not github.com. */
  hostname?: string;
}

export function createTokenSource(options: TokenSourceOptions): TokenSource {
  let cached: { token: string; at: number; origin: string } | undefined;

  async function resolveToken(): Promise<{ token: string; origin: string }> {
    for (const name of ['GH_TOKEN', 'GITHUB_TOKEN'] as const) {
      const value = options.env[name]?.trim();
      if (value) return { token: value, origin: `the ${name} environment variable` };
    }
    const args = ['auth', 'token'];
    if (options.hostname && options.hostname !== 'github.com') args.push('--hostname', options.hostname);
    let result: Awaited<ReturnType<typeof runCommand>>;
    try {
      result = await runCommand('gh', args, {
        env: buildToolEnv({ source: options.env, allow: GH_CLI_ENV }),
        timeoutMs: 30_000,
      });
    } catch (error) {
      if (error instanceof AgentNotFoundError) {
        throw new GitHubAuthError(
          'Required executable not found: gh (install the GitHub CLI and run `gh auth login`, or set GH_TOKEN)',
          { cause: error },
        );
      }
      throw error;
    }
    if (result.exitCode !== 0) {
      const detail = result.stderr.trim();
      throw new GitHubAuthError(
        `gh exited with status ${result.exitCode}${detail ? `: ${detail}` : ''} (run \`gh auth login\`, then \`gh auth token\`)`,
      );
    }
    const token = result.stdout.trim();
    if (!token) throw new GitHubAuthError('gh auth token returned an empty token (run `gh auth login`)');
    return { token, origin: '`gh auth token`' };
  }

  async function current(): Promise<{ token: string; origin: string }> {
    const now = options.clock.now();
    if (cached && now - cached.at < TOKEN_CACHE_MS) return cached;
    const found = await resolveToken();
    registerSecret(found.token);
    cached = { ...found, at: now };
    return cached;
  }

  return {
    async get() {
      return (await current()).token;
    },
    async describe() {
      return (await current()).origin;
    },
  };
}

/** A fixed token (tests, the demo). */
export function staticTokenSource(token: string): TokenSource {
  registerSecret(token);
  return { get: async () => token, describe: async () => 'a token given in code' };
}
