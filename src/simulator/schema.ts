/**
 * GitHub's public GraphQL schema (from `@octokit/graphql-schema`), built once per process: it is
 * large (about 300 ms to build) and every simulator in the process shares it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSchema, type GraphQLSchema } from 'graphql';
import { UsageError } from '../core/errors.js';
import { OPTIONAL_INSTALL_HINT } from '../core/optional.js';

const PACKAGE = '@octokit/graphql-schema';

let cached: GraphQLSchema | undefined;

/**
 * The package's `exports` map hides `schema.graphql` from `require.resolve`, so find the package
 * folder instead: through `import.meta.resolve` when the runtime has it, else along Node's lookup
 * paths.
 */
export function githubSchemaPath(): string {
  const resolve = (import.meta as { resolve?: (specifier: string) => string }).resolve;
  if (typeof resolve === 'function') {
    try {
      const entry = resolve(PACKAGE);
      if (entry.startsWith('file:')) {
        const candidate = join(dirname(fileURLToPath(entry)), 'schema.graphql');
        if (existsSync(candidate)) return candidate;
      }
    } catch {
      // fall through to the lookup paths
    }
  }
  const require = createRequire(import.meta.url);
  for (const folder of require.resolve.paths(PACKAGE) ?? []) {
    const candidate = join(folder, PACKAGE, 'schema.graphql');
    if (existsSync(candidate)) return candidate;
  }
  throw new UsageError(
    `the GitHub simulator needs ${PACKAGE} (its schema.graphql), an optional dependency this install left out (--omit=optional). ${OPTIONAL_INSTALL_HINT}`,
  );
}

/** GitHub's schema. The published SDL repeats a few field definitions, so SDL checks are skipped. */
export function githubSchema(): GraphQLSchema {
  if (!cached) {
    cached = buildSchema(readFileSync(githubSchemaPath(), 'utf8'), { assumeValidSDL: true });
  }
  return cached;
}
