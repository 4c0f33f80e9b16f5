/**
 * `Store` over one open better-sqlite3 connection (connection.ts), assembled from parts of one
 * responsibility each (src/store/compose.ts): the run ledger (runs.ts), retries and escalation
 * (retries.ts), the gates' state (gates.ts), what automations remember (automations.ts), the queues
 * and deliveries (queues.ts) and review findings (findings.ts). A new method goes into the part of
 * its responsibility, in both backends.
 */
import type Database from 'better-sqlite3';
import { assemble } from '../compose.js';
import type { Store } from '../types.js';
import { SqliteAutomations } from './automations.js';
import { SqliteConnection, type SqliteStoreOptions } from './connection.js';
import { SqliteFindings } from './findings.js';
import { SqliteGates } from './gates.js';
import { SqliteQueues } from './queues.js';
import { SqliteRetries } from './retries.js';
import { SqliteRuns } from './runs.js';

export type { SqliteStoreOptions } from './connection.js';
export { ATTENTION_SQL } from './runs.js';

/** The SQLite store: `Store`, and whether it was opened read-only. */
export type SqliteStore = Store & { readonly backend: 'sqlite'; readonly readonly: boolean };

/** The store over `db` (opened and migrated by open.ts); closing it closes `db`. */
export function createSqliteStore(
  db: Database.Database,
  path: string,
  options: SqliteStoreOptions,
): SqliteStore {
  const connection = new SqliteConnection(db, path, options);
  const store: SqliteStore = {
    path,
    backend: 'sqlite',
    readonly: options.readonly,
    ...assemble(
      new SqliteRuns(connection),
      new SqliteRetries(connection),
      new SqliteGates(connection),
      new SqliteAutomations(connection),
      new SqliteQueues(connection),
      new SqliteFindings(connection),
    ),
    close: () => connection.close(),
  };
  return store;
}
