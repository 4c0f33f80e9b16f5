/** What `run`, `doctor` and `demo` share: the logger, the GitHub client, the token. */
import type { Settings } from '../config/types.js';
import { type Clock, systemClock } from '../core/clock.js';
import { logFile } from '../engine/paths.js';
import { createGitHubClient, type GitHubClient } from '../github/client.js';
import { createTokenSource, type TokenSource } from '../github/token.js';
import { createLogger, type Logger, type LogLevel } from '../log.js';
import { packageVersion } from '../version.js';

export function githubHostname(apiUrl: string): string | undefined {
  try {
    const host = new URL(apiUrl).hostname;
    return host === 'api.github.com' ? 'github.com' : host;
  } catch {
    return undefined;
  }
}

export interface GitHubAccess {
  tokens: TokenSource;
  client(): GitHubClient;
}

export function githubAccess(
  settings: Settings,
  env: NodeJS.ProcessEnv,
  log: Logger,
  clock: Clock = systemClock,
  /** Aborting ends the client's waits and requests at once (a stop or a drain was asked). */
  signal?: AbortSignal,
): GitHubAccess {
  const hostname = githubHostname(settings.execution.github.api_url);
  const tokens = createTokenSource({ env, clock, ...(hostname ? { hostname } : {}) });
  let client: GitHubClient | undefined;
  return {
    tokens,
    client() {
      client ??= createGitHubClient({
        apiUrl: settings.execution.github.api_url,
        tokens,
        clock,
        log,
        userAgent: `curupira/${packageVersion()}`,
        ...(signal ? { signal } : {}),
      });
      return client;
    },
  };
}

export interface LoggerChoice {
  settings: Settings;
  console: NodeJS.WritableStream | null;
  format?: 'text' | 'json';
  level?: LogLevel;
  /** Also append to the reference's log file (default true). */
  toFile?: boolean;
}

export function engineLogger(choice: LoggerChoice): Logger {
  return createLogger({
    level: choice.level ?? 'info',
    console: choice.console,
    format: choice.format ?? 'text',
    ...(choice.toFile === false ? {} : { file: logFile(choice.settings) }),
  });
}
