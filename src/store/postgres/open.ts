/** Opens the PostgreSQL store (`state_db_url`). Being written (issue 17). */
import type { Store } from '../types.js';

export interface PostgresOpenOptions {
  /** The store's clock (ms since the epoch) for the times it records; default `Date.now`. */
  now?: () => number;
  /** Refuse every write (the read-only commands: `runs`, `status`, `doctor`). */
  readonly?: boolean;
}

export async function openPostgresStore(_url: string, _options: PostgresOpenOptions = {}): Promise<Store> {
  throw new Error('the PostgreSQL store is not built yet');
}
