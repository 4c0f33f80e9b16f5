/** The state store: open it with `openStore`, and hold the state folder with `acquireStateLock`. */
export { acquireStateLock, type StateLock } from './lock.js';
export { type OpenStoreOptions, openStore } from './sqlite/open.js';
export type {
  CronState,
  ItemMemoryEntry,
  RunFilter,
  RunInit,
  RunPatch,
  SessionRecord,
  Store,
} from './types.js';
