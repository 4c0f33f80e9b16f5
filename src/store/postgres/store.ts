/**
 * `Store` over a pool of PostgreSQL connections (`state_db_url`, issue 17), assembled from parts of
 * one responsibility each (src/store/compose.ts) around one shared pool (connection.ts): the run
 * ledger (runs.ts), retries and escalation (retries.ts), the gates' state (gates.ts), what
 * automations remember (automations.ts), the queues and deliveries (`PgQueues`, queues.ts) and
 * review findings (findings.ts). It gives back the same records as the SQLite store and throws the
 * same errors. A new method goes into the part of its responsibility, in both backends.
 *
 * `WriteOptions.durable` needs nothing here: a committed transaction is durable.
 */
import type pg from 'pg';
import { assemble, type MethodsOf } from '../compose.js';
import type { Store } from '../types.js';
import { PgAutomations } from './automations.js';
import { PgConnection, type PostgresStoreOptions } from './connection.js';
import type { ConnectionInfo } from './errors.js';
import { PgFindings } from './findings.js';
import { PgGates } from './gates.js';
import { PgQueues } from './queues.js';
import { PgRetries } from './retries.js';
import { PgRuns } from './runs.js';

export type { PostgresStoreOptions } from './connection.js';
export { PG_ATTENTION_SQL } from './runs.js';

/** The PostgreSQL store: `Store`, whether it was opened read-only, and `exclusive` for a fleet. */
export type PostgresStore = Store & {
  readonly backend: 'postgres';
  readonly readonly: boolean;
  exclusive<T>(name: string, action: () => Promise<T>): Promise<T>;
};

/** `part`'s methods, each run by `connection.guard`: refused once the store is closed, its failures said in words. */
function guarded<T extends object>(connection: PgConnection, part: T): MethodsOf<T> {
  const methods = Object.entries(assemble(part) as Record<string, (...args: unknown[]) => Promise<unknown>>);
  return Object.fromEntries(
    methods.map(([name, method]) => [name, (...args: unknown[]) => connection.guard(() => method(...args))]),
  ) as MethodsOf<T>;
}

/** The store over `pool` (connected and migrated by open.ts); closing it ends the pool. */
export function createPostgresStore(
  pool: pg.Pool,
  info: ConnectionInfo,
  options: PostgresStoreOptions,
): PostgresStore {
  const connection = new PgConnection(pool, info, options);
  const queues = new PgQueues(pool, {
    now: options.now,
    readonly: options.readonly,
    location: connection.path,
  });
  const store: PostgresStore = {
    path: connection.path,
    backend: 'postgres',
    readonly: options.readonly,
    ...assemble(
      new PgRuns(connection),
      new PgRetries(connection),
      new PgGates(connection),
      new PgAutomations(connection),
      guarded(connection, queues),
      new PgFindings(connection),
    ),
    exclusive: (name, action) => connection.exclusive(name, action),
    close: () => connection.close(),
  };
  return store;
}
