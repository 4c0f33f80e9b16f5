/**
 * `curupira gc`: the worktrees curupira kept because they held unpushed work, folders at worktree
 * paths that git does not know (left by a kill), folders a run moved aside (`.stale-`), stray files
 * left beside worktrees that are gone (OpenCode's `<worktree>.opencode.db`), and their removal.
 * Worktrees of saved sessions and of runs still in progress are never touched. Removing one that
 * holds work found nowhere else (unpushed commits, uncommitted changes, or files git cannot vouch
 * for) is confirmed first: on a terminal gc lists them and asks; elsewhere it needs `--yes`.
 * Unless `--dry-run`, it also runs git's maintenance (`git maintenance run --auto`) in every checkout,
 * which runs themselves leave out.
 */
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import { UsageError } from '../core/errors.js';
import { silentLogger } from '../log.js';
import { openStore, stateLocation } from '../store/index.js';
import {
  emptyPools,
  holdsWork,
  type KeptWorktree,
  listKeptWorktrees,
  listStrayFiles,
  maintainCheckouts,
  parseDuration,
  removeStrayFiles,
  removeWorktrees,
  type StrayFile,
  selectForGc,
} from '../workspace/index.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeJson, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { formatDuration } from './status-line.js';

interface GcOptions {
  olderThan?: string;
  all?: boolean;
  dryRun?: boolean;
  yes?: boolean;
  json?: boolean;
}

type Action = 'keep' | 'remove' | 'would remove' | 'refused' | 'declined' | 'failed';

export function registerGc(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('gc')
    .description(
      'List worktrees kept because they held unpushed work (and folders or files left by a crash); remove them with --older-than or --all.',
    )
    .option('--older-than <age>', 'remove kept worktrees untouched for this long (e.g. 7d, 12h, 30m)')
    .option('--all', 'remove every kept worktree')
    .option('--dry-run', 'say what would be removed, remove nothing')
    .option('-y, --yes', 'remove worktrees holding unpushed commits or changes without asking')
    .option('--json', 'print JSON')
    .action(async (options: GcOptions) => {
      if (options.all && options.olderThan)
        throw new UsageError('--all cannot be combined with --older-than');
      const olderThanMs = options.olderThan === undefined ? undefined : parseDuration(options.olderThan);
      const { settings } = loadSettings(globals().config);
      const protectedPaths = await protectedWorktrees(stateLocation(settings.execution));
      const checkouts = [...new Set(Object.values(settings.repositories).map((r) => r.checkoutPath))];
      const now = Date.now();
      // A folder git does not know cannot serve a session (its next run moves it aside), so only
      // real worktrees are protected.
      const all = await listKeptWorktrees(checkouts, { now });
      const isHeld = (w: KeptWorktree) => w.kind === 'worktree' && protectedPaths.has(resolve(w.path));
      const kept = all.filter((w) => !isHeld(w));
      // A saved session's worktree (its item resumes there) or a run's still going: never removed
      // here, but listed, so that what holds unpushed work is seen.
      const held = all.filter(isHeld);
      const strays = await listStrayFiles(checkouts);
      const removing = options.all || olderThanMs !== undefined;
      const selected = removing
        ? selectForGc(kept, {
            ...(olderThanMs === undefined ? {} : { olderThanMs }),
            ...(options.all ? { all: true } : {}),
            now,
          })
        : [];
      const selectedStrays = removing
        ? strays.filter((f) => options.all || now - f.modifiedAt.getTime() >= (olderThanMs ?? 0))
        : [];

      // What would lose work: ask, or refuse without a terminal and without --yes.
      const risky = selected.filter(holdsWork);
      let withheld = new Set<KeptWorktree>();
      let withheldAction: Action = 'refused';
      if (risky.length > 0 && !options.yes && !options.dryRun) {
        if (isInteractive(io) && !options.json) {
          const confirmed = await confirmRemoval(io, risky);
          if (!confirmed) {
            withheld = new Set(risky);
            withheldAction = 'declined';
          }
        } else {
          withheld = new Set(risky);
        }
      }
      const toRemove = selected.filter((w) => !withheld.has(w));
      const dryRun = Boolean(options.dryRun);
      const result = await removeWorktrees(toRemove, { dryRun, log: silentLogger() });
      const strayResult = await removeStrayFiles(selectedStrays, { dryRun });
      // Clean worktrees finished runs left for later tasks (reuse_worktrees) hold no work: --all empties the pool.
      const pooledRemoved = options.all && !dryRun ? await emptyPools(checkouts) : 0;
      // Runs take git's automatic maintenance out of their path; it happens here instead.
      if (!dryRun) await maintainCheckouts(checkouts);
      const failedPaths = new Map(result.failed.map((f) => [f.worktree.path, f.error]));
      const done: Action = dryRun ? 'would remove' : 'remove';
      const actionOf = (w: KeptWorktree): Action =>
        withheld.has(w)
          ? withheldAction
          : failedPaths.has(w.path)
            ? 'failed'
            : toRemove.includes(w)
              ? done
              : 'keep';
      const strayFailed = new Map(strayResult.failed.map((f) => [f.file.path, f.error]));
      const strayAction = (f: StrayFile): Action =>
        strayFailed.has(f.path) ? 'failed' : selectedStrays.includes(f) ? done : 'keep';

      if (options.json) {
        writeJson(io.stdout, {
          worktrees: kept.map((w) => ({
            action: actionOf(w),
            kind: w.kind,
            ...worktreeJson(w),
            locked: w.locked,
            untouchedSeconds: Math.round((now - w.modifiedAt.getTime()) / 1000),
            ...(failedPaths.has(w.path) ? { error: failedPaths.get(w.path) } : {}),
          })),
          held: held.map(worktreeJson),
          strayFiles: strays.map((f) => ({
            action: strayAction(f),
            path: f.path,
            worktree: f.worktreePath,
            sizeBytes: f.sizeBytes,
            modifiedAt: f.modifiedAt.toISOString(),
            ...(strayFailed.has(f.path) ? { error: strayFailed.get(f.path) } : {}),
          })),
          dryRun,
          removed: result.removed.length + strayResult.removed.length,
          ...(pooledRemoved > 0 ? { pooledRemoved } : {}),
          refused: withheldAction === 'refused' ? withheld.size : 0,
        });
      } else {
        if (pooledRemoved > 0) {
          writeLine(
            io.stdout,
            `Emptied the worktree pool: ${plural(pooledRemoved, 'clean worktree')} of finished runs.`,
          );
        }
        for (const worktree of held) {
          writeLine(
            io.stdout,
            `${'held'.padEnd(12)} ${worktree.path} (${describe(worktree, now)}; its item's saved session resumes there, or its run is under way: never removed by gc)`,
          );
        }
        if (kept.length === 0 && strays.length === 0) {
          writeLine(io.stdout, held.length > 0 ? 'No other kept worktrees.' : 'No kept worktrees.');
          return;
        }
        for (const worktree of kept) {
          writeLine(
            io.stdout,
            `${actionOf(worktree).padEnd(12)} ${worktree.path} (${describe(worktree, now)})`,
          );
        }
        for (const file of strays) {
          writeLine(
            io.stdout,
            `${strayAction(file).padEnd(12)} ${file.path} (stray file, ${formatBytes(file.sizeBytes)}; its worktree is gone)`,
          );
        }
        for (const failure of result.failed)
          writeLine(io.stderr, `could not remove ${failure.worktree.path}: ${failure.error}`);
        for (const failure of strayResult.failed)
          writeLine(io.stderr, `could not remove ${failure.file.path}: ${failure.error}`);
        if (!removing) {
          const parts = [plural(kept.length, 'kept worktree')];
          if (strays.length > 0) parts.push(plural(strays.length, 'stray file'));
          writeLine(
            io.stdout,
            `${parts.join(' and ')}; remove with --older-than AGE or --all (add --dry-run to preview).`,
          );
          return;
        }
        writeLine(
          io.stdout,
          dryRun
            ? `Dry run: ${plural(selected.length, 'worktree')} would be removed${selectedStrays.length ? ` and ${plural(selectedStrays.length, 'stray file')}` : ''}.`
            : `Removed ${plural(result.removed.length, 'worktree')}${selectedStrays.length ? ` and ${plural(strayResult.removed.length, 'stray file')}` : ''}.`,
        );
        if (withheld.size > 0 && withheldAction === 'declined') {
          writeLine(io.stdout, `Kept ${plural(withheld.size, 'worktree')} holding work, as answered.`);
        }
      }
      if (withheld.size > 0 && withheldAction === 'refused') {
        writeLine(
          io.stderr,
          `Did not remove ${plural(withheld.size, 'worktree')} holding unpushed commits or uncommitted changes: there is no terminal to ask. Pass --yes to remove them.`,
        );
        setExitCode(EXIT.failure);
      }
      if (result.failed.length > 0 || strayResult.failed.length > 0) setExitCode(EXIT.failure);
    });
}

/** What `--json` says of a worktree, kept or held. */
function worktreeJson(w: KeptWorktree) {
  return {
    path: w.path,
    checkout: w.checkoutPath,
    automation: w.automationId,
    branch: w.branch,
    unpushedCommits: w.unpushedCommits,
    dirty: w.dirty,
    changedFiles: w.changedFiles.length,
    modifiedAt: w.modifiedAt.toISOString(),
  };
}

async function protectedWorktrees(statePath: string): Promise<Set<string>> {
  const store = await openStore(statePath, { readonly: true });
  const paths = new Set<string>();
  try {
    for (const session of await store.listSessions())
      if (session.worktreePath) paths.add(resolve(session.worktreePath));
    for (const run of await store.listUnfinishedRuns())
      if (run.worktreePath) paths.add(resolve(run.worktreePath));
  } finally {
    await store.close();
  }
  return paths;
}

function isInteractive(io: CliIo): boolean {
  return Boolean(io.stdin?.isTTY && io.stdout.isTTY);
}

async function confirmRemoval(io: CliIo, risky: readonly KeptWorktree[]): Promise<boolean> {
  writeLine(io.stdout, `${plural(risky.length, 'worktree')} to remove hold work found nowhere else:`);
  for (const worktree of risky) writeLine(io.stdout, `  ${worktree.path} (${describeWork(worktree)})`);
  const rl = createInterface({ input: io.stdin!, output: io.stdout, terminal: false });
  try {
    const answer = await rl.question('Delete them and their branches? [y/N] ');
    return /^y(es)?$/i.test(answer.trim());
  } catch {
    return false;
  } finally {
    rl.close();
  }
}

function describe(worktree: KeptWorktree, now: number): string {
  const age = `untouched for ${formatDuration(now - worktree.modifiedAt.getTime())}`;
  if (worktree.kind === 'stale') return `moved aside by a run; ${age}`;
  const branch = worktree.branch ?? 'no branch';
  const work = describeWork(worktree);
  if (worktree.kind === 'unregistered') return `not a worktree git knows; ${branch}; ${work}; ${age}`;
  return `${branch}; ${work}; ${age}`;
}

function describeWork(worktree: KeptWorktree): string {
  const parts: string[] = [];
  if (worktree.unpushedCommits > 0) parts.push(plural(worktree.unpushedCommits, 'unpushed commit'));
  if (worktree.dirty === true) parts.push('uncommitted changes');
  if (worktree.dirty === null && worktree.kind !== 'worktree') parts.push('files git does not track');
  else if (worktree.dirty === null) parts.push('git cannot read its status');
  return parts.join(', ') || 'no unpushed work';
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
