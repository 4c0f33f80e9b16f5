/** `state_db_url` helpers that need no driver: which locations are PostgreSQL, and a printable URL. */

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
