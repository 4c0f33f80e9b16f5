import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../core/errors.js';
import { openStore } from './open.js';
import { APPLICATION_ID, SCHEMA_VERSION } from './schema.js';

const PRESERVED =
  /^Cannot safely read state database .+\. The file was preserved; choose a new state_db_path or inspect and back up this file\./;

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-open-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function marks(path: string): { applicationId: number; version: number; journal: string } {
  const db = new Database(path, { readonly: true });
  try {
    return {
      applicationId: db.pragma('application_id', { simple: true }) as number,
      version: db.pragma('user_version', { simple: true }) as number,
      journal: db.pragma('journal_mode', { simple: true }) as string,
    };
  } finally {
    db.close();
  }
}

/** Opens `path` (both for writing and read-only), expects a refusal, and checks nothing changed. */
async function expectPreserved(path: string, reason: RegExp, only?: { readonly: boolean }): Promise<void> {
  const before = readFileSync(path);
  const filesBefore = readdirSync(dir).sort();
  for (const readonly of only ? [only.readonly] : [false, true]) {
    const error = await openStore(path, { readonly }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateError);
    expect((error as StateError).code).toBe('state');
    expect((error as StateError).message).toMatch(PRESERVED);
    expect((error as StateError).message).toContain(path);
    expect((error as StateError).message).toMatch(reason);
  }
  expect(readFileSync(path).equals(before)).toBe(true);
  expect(readdirSync(dir).sort()).toEqual(filesBefore);
}

describe('openStore: a new state file', () => {
  it('creates the folder (0700) and the file, marked as ours at the current schema version in WAL mode', async () => {
    const path = join(dir, 'deep', 'state', 'state.sqlite3');
    const store = await openStore(path);
    await store.setMeta('k', 'v');
    await store.close();

    expect(statSync(join(dir, 'deep', 'state')).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o077).toBe(0);
    expect(marks(path)).toEqual({ applicationId: APPLICATION_ID, version: SCHEMA_VERSION, journal: 'wal' });
  });

  it('initialises an empty 0-byte file', async () => {
    const path = join(dir, 'state.sqlite3');
    writeFileSync(path, '');
    const store = await openStore(path);
    await store.setMeta('k', 'v');
    await store.close();
    expect(marks(path).applicationId).toBe(APPLICATION_ID);
  });

  it('initialises an empty SQLite database that has no tables yet', async () => {
    const path = join(dir, 'state.sqlite3');
    const blank = new Database(path);
    blank.exec('VACUUM');
    blank.close();

    const store = await openStore(path);
    await store.setMeta('k', 'v');
    expect(await store.getMeta('k')).toBe('v');
    await store.close();
  });

  it('lets two processes-worth of opens initialise the same new file at once', async () => {
    const path = join(dir, 'state.sqlite3');
    const [a, b] = await Promise.all([openStore(path), openStore(path)]);
    await a.setMeta('from', 'a');
    expect(await b.getMeta('from')).toBe('a');
    await a.close();
    await b.close();
    expect(marks(path).version).toBe(SCHEMA_VERSION);
  });

  it('reopens its own file without migrating it again', async () => {
    const path = join(dir, 'state.sqlite3');
    const first = await openStore(path);
    await first.setMeta('k', 'v');
    await first.close();
    const second = await openStore(path);
    expect(await second.getMeta('k')).toBe('v');
    await second.close();
  });
});

describe('openStore: a file that is not ours is preserved', () => {
  it("refuses another application's database that has tables and no application id", async () => {
    const path = join(dir, 'state.sqlite3');
    const other = new Database(path);
    other.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')");
    other.close();
    await expectPreserved(path, /another application/);
  });

  it('refuses a database marked with a different application id, even an empty one', async () => {
    const path = join(dir, 'state.sqlite3');
    const other = new Database(path);
    other.pragma('application_id = 1234');
    other.close();
    await expectPreserved(path, /another application \(application_id 0x000004d2\)/);
  });

  it('refuses a file that is not a SQLite database', async () => {
    const path = join(dir, 'state.sqlite3');
    writeFileSync(path, '[settings]\nstate_db_path = "oops"\n');
    await expectPreserved(path, /not a SQLite database/);
  });

  it('refuses a curupira file whose pages are corrupt', async () => {
    const path = join(dir, 'state.sqlite3');
    const store = await openStore(path);
    for (let i = 0; i < 200; i++) await store.setMeta(`key-${i}`, 'x'.repeat(200));
    await store.close();
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    expect(bytes.length).toBeGreaterThan(pageSize * 4);
    bytes.fill(0xa5, pageSize);
    writeFileSync(path, bytes);

    await expectPreserved(path, /corrupt/, { readonly: false });

    // Read-only opens skip the full check to stay fast; the damage is reported when it is read.
    const error = await openStore(path, { readonly: true })
      .then(async (reader) => {
        try {
          return await reader.listRuns();
        } finally {
          await reader.close();
        }
      })
      .catch((e: unknown) => e);
    expect((error as StateError).message).toMatch(PRESERVED);
    expect((error as StateError).message).toMatch(/corrupt/);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it('reads the whole file for damage on every open, after a clean close as after an unclean exit', async () => {
    const path = join(dir, 'state.sqlite3');
    const store = await openStore(path);
    const keys = Array.from({ length: 300 }, (_, i) => ({
      itemKey: `key-${i}-${'x'.repeat(100)}`,
      runId: null,
      skipped: false,
    }));
    await store.recordItemKeys('triage', keys);
    await store.close();
    // Damage only the item memory's root page: opening reads nothing of it.
    const reader = new Database(path, { readonly: true });
    const root = reader
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'item_memory'")
      .pluck()
      .get() as number;
    reader.close();
    // A read-only connection leaves an empty log and index behind; an empty log is no crash.
    for (const extra of [`${path}-wal`, `${path}-shm`]) {
      if (existsSync(extra) && (extra.endsWith('-shm') || statSync(extra).size === 0)) rmSync(extra);
    }
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    bytes.fill(0xa5, (root - 1) * pageSize, root * pageSize);
    writeFileSync(path, bytes);

    // After a clean close too: a command that would never read the damaged page refuses the file.
    await expect(openStore(path)).rejects.toThrow(/corrupt/);
    await expect(openStore(path, { readonly: true })).rejects.toThrow(/corrupt/);
    expect(readFileSync(path).equals(bytes)).toBe(true);
    // Only a caller that turns the check off (tests reopening one file many times) gets past it.
    await (await openStore(path, { integrityCheck: false })).close();

    // A writer killed with SIGKILL leaves its write-ahead log: the next open reads everything.
    const script = `const D = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
      const db = new D(${JSON.stringify(path)}); db.pragma('journal_mode = WAL');
      db.prepare("INSERT INTO meta (key, value) VALUES ('crash', 'yes')").run();
      process.kill(process.pid, 'SIGKILL');`;
    spawnSync(process.execPath, ['-e', script]);
    expect(existsSync(`${path}-wal`)).toBe(true);
    await expect(openStore(path)).rejects.toThrow(/corrupt/);
  });

  it('refuses a curupira file written by a newer schema version', async () => {
    const path = join(dir, 'state.sqlite3');
    const store = await openStore(path);
    await store.close();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.pragma('journal_mode = DELETE');
    db.close();

    await expectPreserved(path, new RegExp(`newer curupira \\(schema version ${SCHEMA_VERSION + 1}`));
  });

  it("refuses another application's WAL-mode database, closed or in use", async () => {
    const path = join(dir, 'state.sqlite3');
    const other = new Database(path);
    other.pragma('journal_mode = WAL');
    other.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me')");
    other.close();
    await expectPreserved(path, /another application/);

    const running = new Database(path);
    try {
      running.exec("INSERT INTO notes VALUES ('still in the log')");
      await expectPreserved(path, /another application/);
    } finally {
      running.close();
    }
  });

  it('refuses a newer schema version that is still in the write-ahead log of a running process', async () => {
    const path = join(dir, 'state.sqlite3');
    const store = await openStore(path);
    const newer = new Database(path);
    try {
      newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      await store.close();
      await expectPreserved(path, /newer curupira/);
    } finally {
      newer.close();
    }
  });

  it('refuses a directory in place of the file', async () => {
    const path = join(dir, 'state.sqlite3');
    await mkdir(path);
    const error = await openStore(path).catch((e: unknown) => e);
    expect((error as StateError).message).toMatch(PRESERVED);
    expect((error as StateError).message).toMatch(/not a regular file/);
  });
});

describe('openStore: read-only', () => {
  it('reads a closed state file without creating or touching anything beside it (no -wal, no -shm)', async () => {
    const path = join(dir, 'state.sqlite3');
    const writer = await openStore(path);
    await writer.setMeta('k', 'v');
    await writer.close();
    const before = readFileSync(path);
    const mtime = statSync(path).mtimeMs;
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['state.sqlite3']);

    const reader = await openStore(path, { readonly: true });
    try {
      expect(await reader.getMeta('k')).toBe('v');
      await expect(reader.setMeta('k', 'changed')).rejects.toBeInstanceOf(StateError);
      expect(readdirSync(dir).sort()).toEqual(files);
    } finally {
      await reader.close();
    }
    expect(readdirSync(dir).sort()).toEqual(files);
    expect(statSync(path).mtimeMs).toBe(mtime);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(marks(path).journal).toBe('wal');
  });

  it('sees what a running writer has only in its write-ahead log', async () => {
    const path = join(dir, 'state.sqlite3');
    const writer = await openStore(path);
    try {
      await writer.setMeta('k', 'in the log');
      const reader = await openStore(path, { readonly: true });
      try {
        expect(await reader.getMeta('k')).toBe('in the log');
      } finally {
        await reader.close();
      }
    } finally {
      await writer.close();
    }
  });
});
