/**
 * Opens the PostgreSQL store (`state_db_url`, issue 17). The URL's own `?schema=NAME` (default
 * `curupira`) names the schema that holds the state: created when missing, then migrated, unless
 * the store is opened read-only. Every connection of the pool uses that schema (`search_path`).
 *
 * Errors say what to fix (the server is down, the login was refused, the database or a privilege
 * is missing) and never hold the password: the store's `path` and every message name the URL
 * without it (`redactUrl`).
 */
import { userInfo } from 'node:os';
import pg from 'pg';
import { StateError } from '../../core/errors.js';
import type { Store } from '../types.js';
import { type ConnectionInfo, openError } from './errors.js';
import { lookUpPassword, type PasswordLookup, type PasswordTarget } from './pgpass.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION, VERSION_TABLE } from './schema.js';
import { createPostgresStore } from './store.js';
import { parseStateUrl } from './url.js';

export { isPostgresUrl, redactUrl } from './url.js';

export interface PostgresOpenOptions {
  /** The store's clock (ms since the epoch) for the times it records; default `Date.now`. */
  now?: () => number;
  /** Refuse every write (the read-only commands: `runs`, `status`, `doctor`). */
  readonly?: boolean;
}

/** First key of our advisory locks: the ASCII bytes `CURU` (as SQLite's `application_id`). */
const LOCK_CLASS = 0x43555255;
/** How long connecting may take before the open (or a query) fails. */
const CONNECT_TIMEOUT_MS = 10_000;
/** The longest a statement may wait for the server's answer (a migration waiting for another's lock included). */
const QUERY_TIMEOUT_MS = 60_000;

/** How to connect to a `state_db_url`, and what messages may say about it. */
export interface Connection {
  /** What `pg` connects with: the URL without our `schema` and without `options`. */
  connectionString: string;
  /** The URL's own `options` (server settings), to which ours are added. */
  options: string | undefined;
  info: ConnectionInfo;
}

/** Where a connection string points (with libpq's environment defaults): what the password file matches. */
function targetOf(parsed: URL): PasswordTarget {
  const user = decodeURIComponent(parsed.username) || process.env.PGUSER || safeUserName();
  return {
    host: parsed.searchParams.get('host') || parsed.hostname || process.env.PGHOST || 'localhost',
    port: parsed.port || process.env.PGPORT || '5432',
    user,
    database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || process.env.PGDATABASE || user,
  };
}

/** Reads a `state_db_url` (its schema checked by `parseStateUrl`) into how to connect. */
export function connectionOf(url: string): Connection {
  const { connectionString, schema, redacted } = parseStateUrl(url);
  const parsed = new URL(connectionString);
  const options = parsed.searchParams.get('options') ?? undefined;
  parsed.searchParams.delete('options');
  const secret = decodeURIComponent(parsed.password) || parsed.searchParams.get('password') || undefined;
  return {
    connectionString: parsed.toString(),
    options,
    info: { redacted, ...(secret ? { secret } : {}), ...targetOf(parsed), schema },
  };
}

/**
 * A connection string with the password PGPASSWORD or the password file gives (pgpass.ts) when it
 * has none, for any pool or client of the state's database (pg-boss's too). The password is read
 * here, not by the driver: node-postgres 8 reads the password file only with a deprecation warning
 * on stderr, and pg 9 not at all; and a password given beside a connection string is overridden
 * by the driver's parsing of the string. Never print the result.
 */
export function connectionStringWithPassword(
  connectionString: string,
): { connectionString: string } & PasswordLookup {
  const url = new URL(connectionString);
  if (url.password !== '' || url.searchParams.has('password')) return { connectionString };
  const found = lookUpPassword(targetOf(url));
  if (found.password === undefined) return { connectionString, ...found };
  url.password = encodeURIComponent(found.password);
  return { connectionString: url.toString(), ...found };
}

function safeUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'postgres';
  }
}

function quote(identifier: string): string {
  return `"${identifier}"`;
}

/** The schema's version: 0 when it (or its version table) does not exist yet. */
async function readVersion(client: pg.ClientBase, schema: string): Promise<number> {
  const table = await client.query<{ table: string | null }>('SELECT to_regclass($1)::text AS table', [
    `${quote(schema)}.${VERSION_TABLE}`,
  ]);
  if (table.rows[0]?.table == null) return 0;
  const result = await client.query<{ version: number }>(
    `SELECT coalesce(max(version), 0)::int AS version FROM ${quote(schema)}.${VERSION_TABLE}`,
  );
  return result.rows[0]?.version ?? 0;
}

function newerError(info: ConnectionInfo, version: number): StateError {
  return new StateError(
    `PostgreSQL state database ${info.redacted} was written by a newer curupira (schema version ${version}; this one knows up to ${PG_SCHEMA_VERSION}); upgrade curupira on this host, or point state_db_url at another schema`,
  );
}

/**
 * Brings the schema up to `PG_SCHEMA_VERSION`: every missing migration in one transaction under an
 * advisory lock of this schema, the version re-read under the lock, so processes that open a new
 * schema at once apply each migration exactly once (the others wait, then find it done).
 */
async function migrate(client: pg.PoolClient, info: ConnectionInfo, now: () => number): Promise<void> {
  const { schema } = info;
  const seen = await readVersion(client, schema);
  if (seen > PG_SCHEMA_VERSION) throw newerError(info, seen);
  if (seen === PG_SCHEMA_VERSION) return;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    // Created only when missing: CREATE SCHEMA IF NOT EXISTS needs the privilege even when it exists.
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${quote(schema)}`);
    let version = await readVersion(client, schema);
    if (version === 0) {
      const foreign = await client.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm') AND c.relname <> $2
         ORDER BY 1 LIMIT 3`,
        [schema, VERSION_TABLE],
      );
      if (foreign.rows.length > 0) {
        throw new StateError(
          `PostgreSQL state database ${info.redacted}: schema '${schema}' holds tables that are not curupira's (${foreign.rows.map((r) => r.name).join(', ')}); it was left as it is: point state_db_url at an empty or new schema (?schema=NAME)`,
        );
      }
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${quote(schema)}.${VERSION_TABLE} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`,
      );
    }
    if (version > PG_SCHEMA_VERSION) throw newerError(info, version);
    const appliedAt = new Date(now()).toISOString();
    for (; version < PG_SCHEMA_VERSION; version++) {
      await client.query(PG_MIGRATIONS[version]!);
      await client.query(
        `INSERT INTO ${quote(schema)}.${VERSION_TABLE} (version, applied_at) VALUES ($1, $2)`,
        [version + 1, appliedAt],
      );
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/**
 * A read-only open changes nothing: the schema must be at this build's version, or hold no state
 * yet (true: then the store is an empty view, as SQLite's read-only open of a missing file).
 */
async function checkReadable(client: pg.PoolClient, info: ConnectionInfo): Promise<boolean> {
  const version = await readVersion(client, info.schema);
  if (version > PG_SCHEMA_VERSION) throw newerError(info, version);
  if (version === 0) return true;
  if (version < PG_SCHEMA_VERSION) {
    throw new StateError(
      `PostgreSQL state database ${info.redacted} was written by an older curupira (schema version ${version}); open it once for writing (curupira run) to upgrade it`,
    );
  }
  return false;
}

function serverOptions(...options: (string | undefined)[]): string {
  return options.filter((o) => o !== undefined && o !== '').join(' ');
}

interface PoolSettings {
  connectionString: string;
  options: string;
  max?: number;
  idleTimeoutMillis?: number;
}

/** What `pg` connects with (`connectionStringWithPassword`); the password kept out of messages. */
function withPassword(connection: Connection): string {
  const { info } = connection;
  const found = connectionStringWithPassword(connection.connectionString);
  if (found.note === undefined) delete info.passwordNote;
  else info.passwordNote = found.note;
  if (found.password !== undefined) info.secret = found.password;
  return found.connectionString;
}

function makePool(settings: PoolSettings): pg.Pool {
  const pool = new pg.Pool({
    ...settings,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A host cut off from the server finds out (a fleet worker must stop its agents in time).
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'curupira',
  });
  // An idle connection that breaks (server restart) must not crash the process: the next query
  // opens another connection, or fails with a StateError.
  pool.on('error', () => {});
  return pool;
}

/**
 * The read-only view of a state that does not exist yet: the schema made as temporary tables of
 * one connection kept open (they go with it), so reads find nothing and the database is not changed.
 */
async function emptyView(parsed: Connection): Promise<pg.Pool> {
  const pool = makePool({
    connectionString: withPassword(parsed),
    options: serverOptions(parsed.options, '-c search_path=pg_temp'),
    max: 1,
    idleTimeoutMillis: 0,
  });
  try {
    const client = await pool.connect();
    try {
      for (const migration of PG_MIGRATIONS) await client.query(migration);
      await client.query('SET default_transaction_read_only = on');
    } finally {
      client.release();
    }
    return pool;
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}

/**
 * The schema version of the state at `url` (0: none yet), read without changing anything; for
 * `curupira doctor`. Connection errors are `StateError`s, as `openPostgresStore` gives them.
 */
export async function postgresStateVersion(url: string): Promise<number> {
  const connection = connectionOf(url);
  const { options, info } = connection;
  const client = new pg.Client({
    connectionString: withPassword(connection),
    ...(options ? { options } : {}),
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'curupira',
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return await readVersion(client, info.schema);
  } catch (error) {
    throw openError(error, info);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Opens (creating the schema and migrating it when needed) the PostgreSQL store at `url`. */
export async function openPostgresStore(url: string, options: PostgresOpenOptions = {}): Promise<Store> {
  const now = options.now ?? Date.now;
  const readonly = options.readonly === true;
  const parsed = connectionOf(url);
  const { info } = parsed;
  let pool = makePool({
    connectionString: withPassword(parsed),
    options: serverOptions(
      parsed.options,
      `-c search_path=${info.schema}`,
      readonly ? '-c default_transaction_read_only=on' : undefined,
    ),
  });
  try {
    const client = await pool.connect();
    let empty = false;
    try {
      if (readonly) empty = await checkReadable(client, info);
      else await migrate(client, info, now);
    } finally {
      client.release();
    }
    if (empty) {
      await pool.end();
      pool = await emptyView(parsed);
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw openError(error, info);
  }
  return createPostgresStore(pool, info, { now, readonly });
}
