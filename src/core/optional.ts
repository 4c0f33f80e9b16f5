/**
 * Parts of curupira that need an optional dependency (OpenTelemetry export, the GitHub simulator
 * behind `simulator` and `demo`) import it on first use through `importOptional`. An install made
 * with `--omit=optional` lacks those packages: the part that needs one then stops with a usage
 * error that names the package and the command that installs it, never silently.
 */
import { UsageError } from './errors.js';

/** The optional dependencies the GitHub simulator (`curupira simulator`, `curupira demo`) needs. */
export const SIMULATOR_PACKAGES = ['graphql', '@octokit/graphql-schema'] as const;

/** How an install gets its optional dependencies back. */
export const OPTIONAL_INSTALL_HINT =
  'Install curupira with its optional dependencies: `npm install -g curupira` (without --omit=optional), or from a checkout `npm install --include=optional`.';

/**
 * The package of `packages` that `error` says could not be found, else undefined. An entry ending
 * in `/` is a scope (`@opentelemetry/`), any other a package name.
 */
export function missingOptionalPackage(error: unknown, packages: readonly string[]): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const named = /Cannot find (?:package|module) '([^']+)'/.exec((error as Error).message)?.[1];
  if (!named) return undefined;
  // `@scope/name/sub/path` or `name/sub/path` → the package's name.
  const parts = named.split('/');
  const name = named.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return packages.some((p) => (p.endsWith('/') ? name.startsWith(p) : name === p)) ? name : undefined;
}

/** `load()`, with a missing package of `packages` turned into a usage error saying what needs it. */
export async function importOptional<T>(
  load: () => Promise<T>,
  what: string,
  packages: readonly string[],
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const missing = missingOptionalPackage(error, packages);
    if (missing === undefined) throw error;
    throw new UsageError(
      `${what} needs ${missing}, an optional dependency this install left out (--omit=optional). ${OPTIONAL_INSTALL_HINT}`,
    );
  }
}
