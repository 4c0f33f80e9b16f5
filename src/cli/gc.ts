/**
 * `curupira gc`: the worktrees curupira kept because they held unpushed work, and their removal.
 * Worktrees of saved sessions and of runs still in progress are never touched.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import { UsageError } from '../core/errors.js';
import { silentLogger } from '../log.js';
import { openStore } from '../store/index.js';
import { listKeptWorktrees, parseDuration, removeWorktrees, selectForGc } from '../workspace/index.js';
import { EXIT } from './exit-codes.js';
import { type CliIo, writeLine } from './io.js';
import { type GlobalOptions, setExitCode } from './program.js';
import { formatDuration } from './status-line.js';

interface GcOptions {
  olderThan?: string;
  all?: boolean;
  dryRun?: boolean;
}

export function registerGc(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('gc')
    .description(
      'List worktrees kept because they held unpushed work; remove them with --older-than or --all.',
    )
    .option('--older-than <age>', 'remove kept worktrees untouched for this long (e.g. 7d, 12h, 30m)')
    .option('--all', 'remove every kept worktree')
    .option('--dry-run', 'say what would be removed, remove nothing')
    .action(async (options: GcOptions) => {
      if (options.all && options.olderThan)
        throw new UsageError('--all cannot be combined with --older-than');
      const olderThanMs = options.olderThan === undefined ? undefined : parseDuration(options.olderThan);
      const { settings } = loadSettings(globals().config);
      const store = await openStore(settings.execution.state_db_path, { readonly: true });
      const protectedPaths = new Set<string>();
      try {
        for (const session of await store.listSessions())
          if (session.worktreePath) protectedPaths.add(resolve(session.worktreePath));
        for (const run of await store.listUnfinishedRuns())
          if (run.worktreePath) protectedPaths.add(resolve(run.worktreePath));
      } finally {
        await store.close();
      }
      const checkouts = [...new Set(Object.values(settings.repositories).map((r) => r.checkoutPath))];
      const now = Date.now();
      const kept = (await listKeptWorktrees(checkouts, { now })).filter(
        (w) => !protectedPaths.has(resolve(w.path)),
      );
      if (kept.length === 0) {
        writeLine(io.stdout, 'No kept worktrees.');
        return;
      }
      const removing = options.all || olderThanMs !== undefined;
      const selected = removing
        ? selectForGc(kept, {
            ...(olderThanMs === undefined ? {} : { olderThanMs }),
            ...(options.all ? { all: true } : {}),
            now,
          })
        : [];
      for (const worktree of kept) {
        const marker = selected.includes(worktree) ? (options.dryRun ? 'would remove' : 'remove') : 'keep';
        const work = [
          worktree.unpushedCommits
            ? `${worktree.unpushedCommits} unpushed commit${worktree.unpushedCommits === 1 ? '' : 's'}`
            : undefined,
          worktree.dirty ? 'uncommitted changes' : undefined,
        ]
          .filter(Boolean)
          .join(', ');
        writeLine(
          io.stdout,
          `${marker.padEnd(12)} ${worktree.path} (${worktree.branch ?? 'no branch'}; ${work || 'no unpushed work'}; untouched for ${formatDuration(now - worktree.modifiedAt.getTime())})`,
        );
      }
      if (!removing) {
        writeLine(
          io.stdout,
          `${kept.length} kept worktree${kept.length === 1 ? '' : 's'}; remove with --older-than AGE or --all (add --dry-run to preview).`,
        );
        return;
      }
      const result = await removeWorktrees(selected, {
        dryRun: Boolean(options.dryRun),
        log: silentLogger(),
      });
      for (const failure of result.failed)
        writeLine(io.stderr, `could not remove ${failure.worktree.path}: ${failure.error}`);
      writeLine(
        io.stdout,
        options.dryRun
          ? `Dry run: ${selected.length} worktree${selected.length === 1 ? '' : 's'} would be removed.`
          : `Removed ${result.removed.length} worktree${result.removed.length === 1 ? '' : 's'}.`,
      );
      if (result.failed.length > 0) setExitCode(EXIT.failure);
    });
}
