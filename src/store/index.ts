/** The state store: open it with `openStore`, and hold the state folder with `acquireStateLock`. */
export { acquireStateLock, type StateLock } from './lock.js';
export type { OpenStoreOptions } from './sqlite/open.js';

import { redactingStore } from './redacting.js';
import { type OpenStoreOptions, openStore as openSqliteStore } from './sqlite/open.js';
import type { Store } from './types.js';

/**
 * Opens (creating and migrating when needed) the state file at `path`. Every value written
 * through it is redacted first (`redactingStore`).
 */
export async function openStore(path: string, options: OpenStoreOptions = {}): Promise<Store> {
  return redactingStore(await openSqliteStore(path, options));
}
export type {
  BudgetPark,
  CronState,
  GitHubWrite,
  ItemMemoryEntry,
  RunFilter,
  RunInit,
  RunPatch,
  SessionRecord,
  Store,
  WriteInit,
  WritePatch,
  WriteRecord,
  WriteStatus,
} from './types.js';
