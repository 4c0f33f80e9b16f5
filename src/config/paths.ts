/**
 * Where the settings file is by default and how its paths resolve. Apart from the loader (which
 * re-exports these), so that the CLI's help can name the default file without loading the
 * settings schema.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export function defaultConfigPath(): string {
  return join(homedir(), '.curupira', 'settings.toml');
}

export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/** `~` expands; a relative path resolves against the settings file's folder. */
export function resolvePath(path: string, baseDir: string): string {
  const expanded = expandHome(path);
  return isAbsolute(expanded) ? resolve(expanded) : resolve(baseDir, expanded);
}
