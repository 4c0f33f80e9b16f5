/**
 * The PostgreSQL password, from where libpq's tools look for it: `PGPASSWORD`, else the password
 * file (`PGPASSFILE`, default `~/.pgpass`). node-postgres 8 reads the file itself only with a
 * deprecation warning on stderr (and pg 9 drops it), so curupira reads it and hands the driver the
 * password as a function, asked only when the server wants one.
 *
 * The file's format is libpq's: `host:port:database:user:password` per line, `*` matching any value,
 * `\` escaping `:` and `\`, `#` starting a comment; the first line that matches wins. As libpq
 * does, a file that others may read (group or world permissions) is ignored, and the login error
 * then says why.
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface PasswordTarget {
  host: string;
  port: string;
  database: string;
  user: string;
}

export interface PasswordLookup {
  password?: string;
  /** Why the password file was not used, when it exists but was passed over (for the login error). */
  note?: string;
}

/** The fields of one line, unescaped; undefined for a blank line, a comment or a malformed line. */
export function parsePgpassLine(line: string): string[] | undefined {
  if (line.trim() === '' || line.startsWith('#')) return undefined;
  const fields: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (char === '\\' && i + 1 < line.length) {
      current += line[++i];
    } else if (char === ':' && fields.length < 4) {
      fields.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  fields.push(current);
  return fields.length === 5 ? fields : undefined;
}

/** The password of the first line of `text` that matches `target`. */
export function findPgpassPassword(text: string, target: PasswordTarget): string | undefined {
  // A Unix socket's directory matches `localhost`, as in libpq.
  const host = target.host.startsWith('/') ? 'localhost' : target.host;
  const wanted = [host, target.port, target.database, target.user];
  for (const line of text.split(/\r?\n/)) {
    const fields = parsePgpassLine(line);
    if (!fields) continue;
    if (wanted.every((value, i) => fields[i] === '*' || fields[i] === value)) return fields[4];
  }
  return undefined;
}

/** The password file's path: `PGPASSFILE`, else `~/.pgpass`. */
export function pgpassPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.PGPASSFILE || join(env.HOME || homedir(), '.pgpass');
}

/** Where the password comes from for `target`: `PGPASSWORD`, else the password file. */
export function lookUpPassword(target: PasswordTarget, env: NodeJS.ProcessEnv = process.env): PasswordLookup {
  if (env.PGPASSWORD !== undefined) return { password: env.PGPASSWORD };
  const path = pgpassPath(env);
  let mode: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) return { note: `the password file ${path} is not a regular file` };
    mode = stats.mode;
  } catch {
    return {};
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    return {
      note: `the password file ${path} was ignored: others may read it (chmod 600 ${path})`,
    };
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { note: `the password file ${path} could not be read (${(error as Error).message})` };
  }
  const password = findPgpassPassword(text, target);
  return password === undefined
    ? { note: `the password file ${path} has no line for this server` }
    : { password };
}
