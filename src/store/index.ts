/** The state store: open it with `openStore`, and hold the state folder with `acquireStateLock`. */
export { acquireStateLock, type StateLock } from './lock.js';
export { isPostgresUrl, redactUrl } from './postgres/url.js';
export type { OpenStoreOptions } from './sqlite/open.js';

import { isPostgresUrl, redactUrl } from './postgres/url.js';
import { redactingStore } from './redacting.js';
import { type OpenStoreOptions, openStore as openSqliteStore } from './sqlite/open.js';
import type { Store } from './types.js';

/**
 * Where the state lives: `state_db_url` (PostgreSQL) when it is set, else the SQLite file
 * `state_db_path`. What `openStore` takes.
 */
export function stateLocation(execution: {
  state_db_path: string;
  state_db_url?: string | undefined;
}): string {
  return execution.state_db_url ?? execution.state_db_path;
}

/** `stateLocation` in a form safe to print and log: a URL loses its password. */
export function printableStateLocation(execution: {
  state_db_path: string;
  state_db_url?: string | undefined;
}): string {
  const location = stateLocation(execution);
  return isPostgresUrl(location) ? redactUrl(location) : location;
}

/** The schema version of the PostgreSQL state at `url` (0: none yet), changing nothing (doctor). */
export async function postgresStateVersion(url: string): Promise<number> {
  const { postgresStateVersion: read } = await import('./postgres/open.js');
  return read(url);
}

/**
 * Opens (creating and migrating when needed) the state at `location`: a `postgres://` URL
 * (`state_db_url`) or the path of the SQLite file. Every value written through it is redacted
 * first (`redactingStore`). The SQLite-only options (`busyTimeoutMs`, `integrityCheck`) do nothing
 * for PostgreSQL.
 */
export async function openStore(location: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(location)) {
    const { openPostgresStore } = await import('./postgres/open.js');
    return redactingStore(
      await openPostgresStore(location, {
        ...(options.now ? { now: options.now } : {}),
        ...(options.readonly ? { readonly: true } : {}),
      }),
    );
  }
  return redactingStore(await openSqliteStore(location, options));
}
export type {
  BudgetPark,
  CronState,
  GitHubWrite,
  ItemMemoryEntry,
  RunFilter,
  RunInit,
  RunPatch,
  SessionRecord,
  Store,
  WriteInit,
  WritePatch,
  WriteRecord,
  WriteStatus,
} from './types.js';
