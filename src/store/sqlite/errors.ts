/** Turns what SQLite reports into `StateError`s a user can act on. */
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StateError } from '../../core/errors.js';

/**
 * The file at `path` is not a curupira state file we can use, so we leave it untouched.
 * `reason` is a short sentence saying why (it becomes the message's last sentence).
 */
export function unsafeFileError(path: string, reason: string, cause?: unknown): StateError {
  return new StateError(
    `Cannot safely read state database ${path}. The file was preserved; choose a new state_db_path or inspect and back up this file. ${reason}`,
    { cause: cause ?? new Error(reason) },
  );
}

function sqliteCode(error: unknown): string | undefined {
  if (error instanceof Database.SqliteError) return error.code;
  return undefined;
}

export function isBusyError(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

export function isCorruptError(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/** Below this much free space, an I/O error is taken to mean the disk is full. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/**
 * An error explained by a full disk (SQLite's `SQLITE_FULL`, `ENOSPC`, or an I/O error while the
 * disk holding the file has no space left), as a message that says so and where; otherwise null.
 */
export function diskFullError(error: unknown, path: string): StateError | null {
  const code = sqliteCode(error) ?? (error as NodeJS.ErrnoException | undefined)?.code;
  const full = code === 'SQLITE_FULL' || code === 'ENOSPC';
  if (!full && !(code?.startsWith('SQLITE_IOERR') && isNearlyFull(dirname(path)))) return null;
  return new StateError(
    `state database ${path} cannot be used: the disk is full (the filesystem holding ${dirname(path)} has no space left); free some space there and try again`,
    { cause: error },
  );
}

function isNearlyFull(dir: string): boolean {
  try {
    const info = statfsSync(dir);
    return info.bavail * info.bsize < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/** Maps an error thrown while using an open store. `StateError`s pass through unchanged. */
export function toStateError(error: unknown, path: string): StateError {
  if (error instanceof StateError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isBusyError(error)) {
    return new StateError(
      `state database ${path} is busy: another process kept it locked too long (${message})`,
      { cause: error },
    );
  }
  if (isCorruptError(error)) return unsafeFileError(path, 'It is corrupt.', error);
  const full = diskFullError(error, path);
  if (full) return full;
  const code = sqliteCode(error);
  if (code?.startsWith('SQLITE_READONLY')) {
    return new StateError(`state database ${path} cannot be written: ${message}`, { cause: error });
  }
  return new StateError(`state database ${path}: ${message}`, { cause: error });
}
