import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The package version, read from package.json beside src/ or dist/. */
export function packageVersion(): string {
  if (cached) return cached;
  const json = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  cached = json.version;
  return cached;
}
