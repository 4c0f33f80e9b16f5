/**
 * The one better-sqlite3 connection every part of the SQLite store shares (store.ts): its prepared
 * statements, its clock, and how a read or a write is run and its failure reported. Every write is
 * a single statement or one transaction, so a process killed at any instant leaves either the old
 * or the new state.
 */
import type Database from 'better-sqlite3';
import { StateError } from '../../core/errors.js';
import type { WriteOptions } from '../types.js';
import { toStateError } from './errors.js';

export interface SqliteStoreOptions {
  readonly: boolean;
  now: () => number;
}

/** A statement by its text, prepared once per connection. */
export type Sql = (source: string) => Database.Statement;

export class SqliteConnection {
  readonly path: string;
  readonly readonly: boolean;
  readonly db: Database.Database;
  readonly now: () => number;
  readonly #statements = new Map<string, Database.Statement>();
  /** `sql` as a function of its own, for the modules that take one (writes.ts, notifications.ts…). */
  readonly sql: Sql = (source) => {
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.db.prepare(source);
      this.#statements.set(source, statement);
    }
    return statement;
  };

  constructor(db: Database.Database, path: string, options: SqliteStoreOptions) {
    this.db = db;
    this.path = path;
    this.readonly = options.readonly;
    this.now = options.now;
  }

  iso(): string {
    return new Date(this.now()).toISOString();
  }

  /** Runs `action` against the open database, reporting any failure as a `StateError`. */
  #use<T>(action: () => T, write: boolean): T {
    if (!this.db.open) throw new StateError(`state database ${this.path} is closed`);
    if (write && this.readonly) throw new StateError(`state database ${this.path} was opened read-only`);
    try {
      return action();
    } catch (error) {
      throw toStateError(error, this.path);
    }
  }

  read<T>(action: () => T): Promise<T> {
    return Promise.resolve().then(() => this.#use(action, false));
  }

  write<T>(action: () => T, options?: WriteOptions): Promise<T> {
    if (options?.durable !== false) return Promise.resolve().then(() => this.#use(action, true));
    // One commit without waiting for fsync (see `WriteOptions`); the connection stays FULL. `exec`
    // rather than `pragma`, which wraps each in a statement object and reads its (empty) result.
    return Promise.resolve().then(() =>
      this.#use(() => {
        this.db.exec('PRAGMA synchronous = NORMAL');
        try {
          return action();
        } finally {
          this.db.exec('PRAGMA synchronous = FULL');
        }
      }, true),
    );
  }

  async close(): Promise<void> {
    if (!this.db.open) return;
    this.#statements.clear();
    try {
      this.db.close();
    } catch (error) {
      throw toStateError(error, this.path);
    }
  }
}

/** SQLite's boolean: 1 or 0. */
export function bool(value: boolean | undefined): number {
  return value ? 1 : 0;
}
