/** At the top of src/, not in cli/, because telemetry reports the version too; `--version` loads this module alone. */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The package version, read from package.json beside src/ or dist/. */
export function packageVersion(): string {
  if (cached) return cached;
  const json = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  cached = json.version;
  return cached;
}

/**
 * `curu` when invoked as `curu` (any folder, `.exe`/`.js` stripped), else `curupira`. Here rather
 * than in io.ts so that `--version` loads this module alone (src/cli/main.ts).
 */
export function programNameFrom(argv1: string | undefined): string {
  const base = (argv1 ?? '').split(/[\\/]/).pop() ?? '';
  const name = base.replace(/\.(exe|js|cmd|mjs)$/i, '');
  return name === 'curu' ? 'curu' : 'curupira';
}
