/**
 * The pool of PostgreSQL connections every part of the PostgreSQL store shares (store.ts): its
 * clock, how one statement is run and its failure said in words without the password (errors.ts),
 * the closed and read-only checks, and the store's `exclusive` and `close`.
 *
 * Several processes on several hosts share the database, so every read-modify-write of a part is
 * one statement (an upsert, an `UPDATE … RETURNING`) or one transaction.
 */
import type pg from 'pg';
import { StateError } from '../../core/errors.js';
import { type ConnectionInfo, useError } from './errors.js';

export type Param = string | number | boolean | null | readonly (string | boolean | null)[];

export interface PostgresStoreOptions {
  readonly: boolean;
  now: () => number;
}

/** Collects parameters: `add(value)` gives its placeholder (`$1`, `$2`…). */
export function parameters(): { params: Param[]; add(value: Param): string } {
  const params: Param[] = [];
  return {
    params,
    add(value) {
      params.push(value);
      return `$${params.length}`;
    },
  };
}

/** A JSON column's value: null for none. */
export function json(value: unknown): string | null {
  return value ? JSON.stringify(value) : null;
}

export class PgConnection {
  readonly pool: pg.Pool;
  readonly info: ConnectionInfo;
  /** The URL without its password. */
  readonly path: string;
  readonly readonly: boolean;
  readonly now: () => number;
  #closed = false;

  constructor(pool: pg.Pool, info: ConnectionInfo, options: PostgresStoreOptions) {
    this.pool = pool;
    this.info = info;
    this.path = info.redacted;
    this.readonly = options.readonly;
    this.now = options.now;
  }

  iso(): string {
    return new Date(this.now()).toISOString();
  }

  check(write: boolean): void {
    if (this.#closed) throw new StateError(`state database ${this.path} is closed`);
    if (write && this.readonly) throw new StateError(`state database ${this.path} was opened read-only`);
  }

  /** One statement; any failure becomes a `StateError`. */
  async query<R extends pg.QueryResultRow>(
    write: boolean,
    text: string,
    params: readonly Param[] = [],
  ): Promise<pg.QueryResult<R>> {
    this.check(write);
    try {
      return await this.pool.query<R>(text, params as Param[]);
    } catch (error) {
      throw useError(error, this.info);
    }
  }

  async rows<R extends pg.QueryResultRow>(
    write: boolean,
    text: string,
    params?: readonly Param[],
  ): Promise<R[]> {
    return (await this.query<R>(write, text, params)).rows;
  }

  async row<R extends pg.QueryResultRow>(
    write: boolean,
    text: string,
    params?: readonly Param[],
  ): Promise<R | undefined> {
    return (await this.query<R>(write, text, params)).rows[0];
  }

  /**
   * Runs `action` (a part that checks read-only itself and throws pg's errors as they are, such as
   * `PgQueues`) on an open store, its failure said as `query` says it.
   */
  async guard<T>(action: () => Promise<T>): Promise<T> {
    try {
      this.check(false);
      return await action();
    } catch (error) {
      throw useError(error, this.info);
    }
  }

  async exclusive<T>(name: string, action: () => Promise<T>): Promise<T> {
    // A session advisory lock on a connection of its own, held while the action runs (its
    // statements use other connections of the pool). One key per schema and name. A connection
    // whose lock or unlock failed is destroyed, which frees the lock with its session.
    const client = await this.pool.connect().catch((error: unknown) => {
      throw useError(error, this.info);
    });
    const key = `curupira:${this.info.schema}:exclusive:${name}`;
    let healthy = true;
    try {
      try {
        await client.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
      } catch (error) {
        healthy = false;
        throw useError(error, this.info);
      }
      try {
        return await action();
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch(() => {
          healthy = false;
        });
      }
    } finally {
      client.release(!healthy);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.pool.end();
    } catch (error) {
      throw useError(error, this.info);
    }
  }
}
