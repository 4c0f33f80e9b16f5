/**
 * Values a settings file names by environment variable (`url_env`, `secret_env`,
 * `github_webhook_secret_env`): read when a command starts, and an unset one reported with the
 * key's line and column in the file, as a load error would be.
 */
import { readFileSync } from 'node:fs';
import type { ConfigIssue } from '../core/errors.js';
import { type KeyPath, locateKeys } from './toml-locations.js';
import type { Settings } from './types.js';

/** A problem at `path` of the settings file, located in it when the file can be read again. */
export function locatedIssue(settings: Settings, path: KeyPath, message: string): ConfigIssue {
  let position: { line: number; column: number } | undefined;
  try {
    position = locateKeys(readFileSync(settings.file, 'utf8')).exact(path);
  } catch {
    position = undefined;
  }
  return { path: path.join('.'), message, file: settings.file, ...(position ?? {}) };
}

/**
 * The value of the variable the key at `path` names; an unset or empty one adds an issue to
 * `issues` (`what` says what it was to hold) and returns undefined.
 */
export function envValue(
  settings: Settings,
  env: NodeJS.ProcessEnv,
  path: KeyPath,
  variable: string,
  what: string,
  issues: ConfigIssue[],
): string | undefined {
  const value = env[variable];
  if (value) return value;
  issues.push(locatedIssue(settings, path, `environment variable ${variable} is not set (${what})`));
  return undefined;
}
