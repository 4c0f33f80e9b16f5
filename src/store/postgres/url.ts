/**
 * `state_db_url`: a PostgreSQL connection URL plus our own `schema` query parameter (default
 * `curupira`). The password, if a user put one in, is never printed: `redacted` replaces it.
 */
import { StateError } from '../../core/errors.js';

export const DEFAULT_SCHEMA = 'curupira';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface StateUrl {
  /** What `pg` connects with: the URL without the `schema` parameter. */
  connectionString: string;
  schema: string;
  /** Safe to print: the password replaced by `***`. */
  redacted: string;
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

export function parseStateUrl(url: string): StateUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StateError(
      `state_db_url ${redactUrl(url)} is not a valid URL; write it as postgres://USER@HOST:PORT/DATABASE`,
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new StateError(
      `state_db_url must start with postgres:// or postgresql://, got ${parsed.protocol}//`,
    );
  const schema = parsed.searchParams.get('schema') ?? DEFAULT_SCHEMA;
  if (!SCHEMA_NAME.test(schema))
    throw new StateError(
      `state_db_url's schema '${schema}' must be lowercase letters, digits and _ (starting with a letter or _), at most 63`,
    );
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema, redacted: redactUrl(url) };
}
