/**
 * `WriteOptions.durable = false`: one commit that does not wait for fsync (`synchronous = NORMAL`
 * for that commit only). The connection stays `synchronous = FULL` for every other write, also
 * when the relaxed write fails, and a relaxed commit survives a kill -9 of the process that made it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunInit } from '../types.js';
import { openStore } from './open.js';
import { createSqliteStore, type SqliteStore } from './store.js';

const FULL = 2;
const init: RunInit = {
  automationId: 'a',
  taskKey: 'k',
  repo: 'acme/api',
  taskType: 'github-issues',
  itemId: '1',
  itemKey: 'acme/api#1',
  itemTitle: 't',
  itemUrl: 'u',
  status: 'preparing',
};

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-durability-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A store over a connection the test can ask for its `synchronous` level. */
async function storeWithConnection(): Promise<{ store: SqliteStore; db: Database.Database }> {
  const path = join(dir, 'state.sqlite3');
  await (await openStore(path)).close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return { store: createSqliteStore(db, path, { readonly: false, now: Date.now }), db };
}

describe('relaxed writes (durable: false)', () => {
  it('write their row and leave the connection at synchronous = FULL', async () => {
    const { store, db } = await storeWithConnection();
    const run = await store.createRun(init, { durable: false });
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    const updated = await store.updateRun(run.id, { status: 'running' }, { durable: false });
    expect(updated.status).toBe('running');
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    await store.deleteSession('k', { durable: false });
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    expect((await store.getRun(run.id))?.status).toBe('running');
    await store.close();
  });

  it('run at synchronous = NORMAL, and a durable write at FULL', async () => {
    const { store, db } = await storeWithConnection();
    // Each statement is prepared the first time a write runs it: the level seen then is the write's.
    const levels: Array<[string, unknown]> = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((source: string) => {
      levels.push([source.trim().split(/\s+/)[0]!, db.pragma('synchronous', { simple: true })]);
      return prepare(source);
    }) as typeof db.prepare;
    const run = await store.createRun(init, { durable: false });
    await store.updateRun(run.id, { status: 'running' });
    expect(levels).toEqual([
      ['INSERT', 1],
      ['UPDATE', FULL],
    ]);
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    await store.close();
  });

  it('restore synchronous = FULL when the write fails', async () => {
    const { store, db } = await storeWithConnection();
    await expect(store.updateRun('r_missing', { status: 'running' }, { durable: false })).rejects.toThrow(
      /does not exist/,
    );
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    await store.close();
  });

  it('survive a kill -9 of the process that committed them', async () => {
    const { store } = await storeWithConnection();
    await store.close();
    const path = join(dir, 'state.sqlite3');
    // The same statements the store runs: NORMAL for one commit, then SIGKILL before any close or
    // checkpoint could write the log into the database file.
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { default: Database } = await import(process.env.SQLITE_MODULE);
         const db = new Database(process.env.DB_PATH);
         db.pragma('synchronous = NORMAL');
         db.prepare("INSERT INTO meta (key, value) VALUES ('relaxed', 'kept')").run();
         process.kill(process.pid, 'SIGKILL');`,
      ],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: {
          PATH: process.env.PATH,
          SQLITE_MODULE: pathToFileURL(createRequire(import.meta.url).resolve('better-sqlite3')).href,
          DB_PATH: path,
        },
      },
    );
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, sig) => resolve(sig)),
    );
    expect(signal).toBe('SIGKILL');
    const reopened = await openStore(path);
    expect(await reopened.getMeta('relaxed')).toBe('kept');
    await reopened.close();
  });
});
