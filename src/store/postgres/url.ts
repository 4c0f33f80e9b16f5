/** `state_db_url` helpers that need no driver: which locations are PostgreSQL, a printable URL, its schema. */
import { StateError } from '../../core/errors.js';

/** True for a `state_db_url`-style location (`postgres://` or `postgresql://`). */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** The URL without its password (in the user part or a `password` query parameter): safe to print. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '<a state_db_url that is not a valid URL>';
  }
  parsed.password = '';
  for (const key of [...parsed.searchParams.keys()]) {
    if (/password/i.test(key)) parsed.searchParams.delete(key);
  }
  return parsed.toString();
}

export const DEFAULT_SCHEMA = 'curupira';
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface StateUrl {
  /** What `pg` connects with: the URL without our `schema` parameter. */
  connectionString: string;
  schema: string;
  /** Safe to print. */
  redacted: string;
}

/** Splits our own `?schema=NAME` (default `curupira`) off a `state_db_url`. */
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
