/**
 * Opening the state file. A file that is not ours (another application's database, not SQLite at
 * all, corrupt, or written by a newer curupira) is inspected read-only and never modified: the user
 * gets a `StateError` saying so. A missing or 0-byte file, or an empty SQLite database, is ours to
 * initialise.
 *
 * Every open runs `PRAGMA quick_check` (a full read of the file, about 60 ms for 50 MB), so a file
 * damaged on disk is refused by every command with the message `curupira doctor` gives, whether or
 * not that command would have read a damaged page (a one-shot `run` with nothing to do reads few).
 * Damage a later query meets is reported with the same message.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { StateError } from '../../core/errors.js';
import type { Store } from '../types.js';
import { diskFullError, isBusyError, toStateError, unsafeFileError } from './errors.js';
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from './schema.js';
import { createSqliteStore, type SqliteStore } from './store.js';

export interface OpenStoreOptions {
  /**
   * Open for reading only (`curupira runs`). A missing, 0-byte or empty file then gives an empty
   * read-only view and creates nothing; writes throw `StateError`.
   */
  readonly?: boolean;
  /** Clock for `createdAt` and run ids; milliseconds since the epoch. */
  now?: () => number;
  /** How long a statement waits for another process's lock before failing; default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * Run `PRAGMA quick_check` (a full read) before handing the store out; default true. Only tests
   * that open the same file many times turn it off.
   */
  integrityCheck?: boolean;
}

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const HEADER_SIZE = 100;
/** The database header plus the b-tree header of page 1 (the schema table). */
const READ_SIZE = HEADER_SIZE + 8;
const LEAF_TABLE_PAGE = 0x0d;
/** Header byte 18 (file format write version): 2 means write-ahead logging. */
const WAL_FORMAT = 2;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;

interface Inspection {
  /** False when there is no file at the path. */
  exists: boolean;
  /** Our schema version in the file; 0 for a file with nothing in it yet. */
  version: number;
}

function hex(id: number): string {
  return `0x${(id >>> 0).toString(16).padStart(8, '0')}`;
}

function newerReason(version: number): string {
  return `It was written by a newer curupira (schema version ${version}; this one knows up to ${SCHEMA_VERSION}).`;
}

function readHeader(path: string): Buffer {
  const header = Buffer.alloc(READ_SIZE);
  const fd = openSync(path, 'r');
  try {
    const read = readSync(fd, header, 0, READ_SIZE, 0);
    return header.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** True when the schema table on page 1 lists anything (a table, index, view or trigger). */
function firstPageListsObjects(header: Buffer): boolean {
  const pageType = header[HEADER_SIZE];
  const cells = header.readUInt16BE(HEADER_SIZE + 3);
  return pageType !== LEAF_TABLE_PAGE || cells > 0;
}

/**
 * Decides, without writing a byte, whether the file at `path` is ours (and at which version) or
 * must be left alone. When nothing waits in a write-ahead log the header and first page are the
 * whole truth; otherwise SQLite is asked through a read-only connection, which sees the log too.
 */
function inspect(path: string, busyTimeoutMs: number): Inspection {
  let size: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) throw unsafeFileError(path, 'It is not a regular file.');
    size = stats.size;
  } catch (error) {
    if (error instanceof StateError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false, version: 0 };
    throw unsafeFileError(path, `It could not be read (${(error as Error).message}).`, error);
  }
  if (size === 0) return { exists: true, version: 0 };

  let header: Buffer;
  try {
    header = readHeader(path);
  } catch (error) {
    throw unsafeFileError(path, `It could not be read (${(error as Error).message}).`, error);
  }
  if (header.length < READ_SIZE || !header.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
    throw unsafeFileError(path, 'It is not a SQLite database.');
  }
  const headerId = header.readInt32BE(68);
  if (headerId !== 0 && headerId !== APPLICATION_ID) {
    throw unsafeFileError(path, `It belongs to another application (application_id ${hex(headerId)}).`);
  }
  const headerVersion = header.readInt32BE(60);
  if (headerId === APPLICATION_ID && headerVersion > SCHEMA_VERSION) {
    throw unsafeFileError(path, newerReason(headerVersion));
  }
  const walMode = header[18] === WAL_FORMAT;
  if (walMode && !existsSync(`${path}-wal`)) {
    if (headerId === APPLICATION_ID) return { exists: true, version: headerVersion };
    if (headerVersion !== 0 || firstPageListsObjects(header)) {
      throw unsafeFileError(path, 'It holds tables of another application.');
    }
    return { exists: true, version: 0 };
  }

  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  } catch (error) {
    const full = diskFullError(error, path);
    if (full) throw full;
    throw unsafeFileError(path, `SQLite could not open it (${(error as Error).message}).`, error);
  }
  try {
    const applicationId = db.pragma('application_id', { simple: true }) as number;
    const version = db.pragma('user_version', { simple: true }) as number;
    const objects = db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get() as number;
    if (applicationId !== APPLICATION_ID) {
      if (applicationId !== 0) {
        throw unsafeFileError(
          path,
          `It belongs to another application (application_id ${hex(applicationId)}).`,
        );
      }
      if (objects > 0 || version !== 0) {
        throw unsafeFileError(path, 'It holds tables of another application.');
      }
      return { exists: true, version: 0 };
    }
    if (version > SCHEMA_VERSION) throw unsafeFileError(path, newerReason(version));
    return { exists: true, version };
  } catch (error) {
    if (error instanceof StateError) throw error;
    if (isBusyError(error)) throw toStateError(error, path);
    const full = diskFullError(error, path);
    if (full) throw full;
    throw unsafeFileError(path, `It is corrupt or unreadable (${(error as Error).message}).`, error);
  } finally {
    db.close();
  }
}

/**
 * Brings the schema up to `SCHEMA_VERSION`, one migration per transaction. Each transaction
 * re-reads the marks under the write lock, so two processes opening a new file at once apply
 * each migration exactly once, and a file that changed hands since `inspect` is still refused.
 */
function migrate(db: Database.Database, path: string): void {
  for (let target = 1; target <= SCHEMA_VERSION; target++) {
    db.transaction(() => {
      const applicationId = db.pragma('application_id', { simple: true }) as number;
      const version = db.pragma('user_version', { simple: true }) as number;
      if (applicationId !== APPLICATION_ID) {
        const objects = db.prepare('SELECT count(*) FROM sqlite_schema').pluck().get() as number;
        if (applicationId !== 0 || objects > 0 || version !== 0) {
          throw unsafeFileError(path, 'It changed while curupira was opening it and is no longer ours.');
        }
      }
      if (version > SCHEMA_VERSION) throw unsafeFileError(path, newerReason(version));
      if (version >= target) return;
      db.exec(MIGRATIONS[target - 1]!);
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${target}`);
    }).immediate();
  }
}

/** A read-only view of a file that holds nothing yet: the schema in memory, no file created. */
function emptyView(path: string, now: () => number): SqliteStore {
  const db = new Database(':memory:');
  migrate(db, path);
  db.pragma('query_only = ON');
  return createSqliteStore(db, path, { readonly: true, now });
}

/**
 * A WAL-format file with no write-ahead log beside it is complete on its own. SQLite would still
 * create `-wal` and `-shm` files to read it (and cannot at all on a read-only mount), so it is read
 * into memory instead, marked as a rollback-journal file in that copy only, and queried read-only:
 * nothing is created or written beside the state file. With a log present (a writer is running, or
 * crashed) SQLite must read the log too, so a normal read-only connection is used.
 */
function quietSnapshot(path: string): Database.Database | undefined {
  if (existsSync(`${path}-wal`)) return undefined;
  const header = readHeader(path);
  if (header[18] !== WAL_FORMAT) return undefined;
  const bytes = readFileSync(path);
  if (bytes[18] !== WAL_FORMAT || existsSync(`${path}-wal`)) return undefined; // changed meanwhile
  bytes[18] = 1;
  bytes[19] = 1;
  return new Database(bytes, { readonly: true });
}

/** Throws the "corrupt" `StateError` when SQLite's quick check finds damage. */
function assertIntact(db: Database.Database, path: string): void {
  const check = db.pragma('quick_check(1)', { simple: true });
  if (check !== 'ok') throw unsafeFileError(path, `It is corrupt (${String(check)}).`);
}

function openReadonly(
  path: string,
  now: () => number,
  busyTimeoutMs: number,
  integrityCheck: boolean,
): SqliteStore {
  const found = inspect(path, busyTimeoutMs);
  if (found.version === 0) return emptyView(path, now);
  if (found.version < SCHEMA_VERSION) {
    throw new StateError(
      `state database ${path} was written by an older curupira (schema version ${found.version}); open it once for writing (curupira run) to upgrade it`,
    );
  }
  let db: Database.Database | undefined;
  try {
    db =
      quietSnapshot(path) ??
      new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    if (integrityCheck) assertIntact(db, path);
    return createSqliteStore(db, path, { readonly: true, now });
  } catch (error) {
    db?.close();
    throw toStateError(error, path);
  }
}

async function createIfMissing(path: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw new StateError(`state database ${path} could not be created: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Opens (creating and migrating when needed) the SQLite state file at `path`. */
export async function openStore(path: string, options: OpenStoreOptions = {}): Promise<Store> {
  const absolute = resolve(path);
  const now = options.now ?? Date.now;
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const integrityCheck = options.integrityCheck !== false;
  if (options.readonly) return openReadonly(absolute, now, busyTimeoutMs, integrityCheck);

  await createIfMissing(absolute);
  inspect(absolute, busyTimeoutMs);
  // Looked at before opening: the log of an unclean exit, not the one this connection makes.
  const uncleanExit = existsSync(`${absolute}-wal`);
  let db: Database.Database | undefined;
  try {
    db = new Database(absolute, { fileMustExist: true, timeout: busyTimeoutMs });
    if (uncleanExit || integrityCheck) assertIntact(db, absolute);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    migrate(db, absolute);
    return createSqliteStore(db, absolute, { readonly: false, now });
  } catch (error) {
    db?.close();
    throw toStateError(error, absolute);
  }
}
