/**
 * Both backends of the `Store` interface, for suites that must pass on each (issue 17: "the same
 * test suite of the store runs against both"). Use with `describe.each(STORE_BACKENDS)`; each
 * `open` gives a new, empty store and `cleanup` removes what every store opened by it holds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '../../src/store/types.js';
import { freshSchema, type TestSchema } from './pg.js';

export interface BackendOpenOptions {
  /** The store's clock (ms since the epoch). */
  now?: () => number;
  /** Open for reading only (the state must exist: open it for writing first, with the same `reopen`). */
  readonly?: boolean;
}

export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  /** A new store; a second call with the same `reopen` key opens the same state again. */
  open(options?: BackendOpenOptions & { reopen?: string }): Promise<Store>;
  /** Closes every store it opened and deletes their state. */
  cleanup(): Promise<void>;
}

function sqliteBackend(): StoreBackend {
  const opened: Store[] = [];
  const dirs = new Map<string, string>();
  return {
    name: 'sqlite',
    async open(options = {}) {
      const key = options.reopen ?? `anon-${dirs.size}`;
      let dir = dirs.get(key);
      if (!dir) {
        dir = await mkdtemp(join(tmpdir(), 'curupira-store-'));
        dirs.set(key, dir);
      }
      const { openStore } = await import('../../src/store/sqlite/open.js');
      const store = await openStore(join(dir, 'state.sqlite3'), {
        ...(options.now ? { now: options.now } : {}),
        ...(options.readonly ? { readonly: true } : {}),
      });
      opened.push(store);
      return store;
    },
    async cleanup() {
      for (const store of opened.splice(0)) await store.close().catch(() => {});
      for (const dir of dirs.values()) await rm(dir, { recursive: true, force: true });
      dirs.clear();
    },
  };
}

function postgresBackend(): StoreBackend {
  const opened: Store[] = [];
  const schemas = new Map<string, TestSchema>();
  return {
    name: 'postgres',
    async open(options = {}) {
      const key = options.reopen ?? `anon-${schemas.size}`;
      let schema = schemas.get(key);
      if (!schema) {
        schema = await freshSchema('store');
        schemas.set(key, schema);
      }
      const { openPostgresStore } = await import('../../src/store/postgres/open.js');
      const store = await openPostgresStore(schema.url, {
        ...(options.now ? { now: options.now } : {}),
        ...(options.readonly ? { readonly: true } : {}),
      });
      opened.push(store);
      return store;
    },
    async cleanup() {
      for (const store of opened.splice(0)) await store.close().catch(() => {});
      for (const schema of schemas.values()) await schema.drop();
      schemas.clear();
    },
  };
}

/** `describe.each(STORE_BACKENDS)('… ($name)', (backend) => …)`: call `backend()` in `beforeEach`. */
export const STORE_BACKENDS: { name: 'sqlite' | 'postgres'; backend: () => StoreBackend }[] = [
  { name: 'sqlite', backend: sqliteBackend },
  { name: 'postgres', backend: postgresBackend },
];
