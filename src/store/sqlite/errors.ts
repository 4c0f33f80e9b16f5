/** Turns what SQLite reports into `StateError`s a user can act on. */
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
  const code = sqliteCode(error);
  if (code === 'SQLITE_FULL') {
    return new StateError(`state database ${path} could not be written: the disk is full`, { cause: error });
  }
  if (code?.startsWith('SQLITE_READONLY')) {
    return new StateError(`state database ${path} cannot be written: ${message}`, { cause: error });
  }
  return new StateError(`state database ${path}: ${message}`, { cause: error });
}
