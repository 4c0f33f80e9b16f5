/**
 * SQL both backends share, with a hook where the dialects differ. Each backend keeps the statements
 * whose placeholders or types differ (`?` and 0/1 in SQLite, `$n` and booleans in PostgreSQL).
 */
import { CALM_STATUSES, UNFINISHED_STATUSES } from '../core/types.js';

/**
 * The calm statuses (core/types.ts CALM_STATUSES) the `runs_attention` index of both schemas
 * names; calm statuses added later (`merged`) are one more term of `attentionSql`, so the index
 * still serves it without a migration.
 */
export const INDEXED_CALM_STATUSES = ['succeeded', 'skipped', 'cancelled'] as const;

const quoted = (statuses: readonly string[]) => statuses.map((s) => `'${s}'`).join(', ');
const LATER_CALM = CALM_STATUSES.filter((s) => !(INDEXED_CALM_STATUSES as readonly string[]).includes(s));

/**
 * Runs that need a human: the same words as the `runs_attention` index of the schema (so it is
 * used), and the calm statuses added since as one more AND term (which still uses the index).
 * `kept` is the dialect's test of the boolean `worktree_kept` (`worktree_kept = 1` in SQLite).
 */
export function attentionSql(kept: string): string {
  const later = LATER_CALM.length > 0 ? ` AND (${kept} OR status NOT IN (${quoted(LATER_CALM)}))` : '';
  return `dismissed_at IS NULL AND (${kept} OR status NOT IN (${quoted([...UNFINISHED_STATUSES, ...INDEXED_CALM_STATUSES])}))${later}`;
}
