import { existsSync } from 'node:fs';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../core/errors.js';
import { silentLogger } from '../log.js';
import { ensureCheckout } from './checkout.js';
import {
  type KeptWorktree,
  listKeptWorktrees,
  listStrayFiles,
  parseDuration,
  removeStrayFiles,
  removeWorktrees,
  selectForGc,
} from './gc.js';
import { branchExists, git } from './git.js';
import { worktreePath } from './paths.js';
import { commitFiles, createOrigin, isolateGitForTests, type OriginRepo } from './testing.js';
import { finishWorktree, prepareWorktree, worktreeGitDir } from './worktree.js';

const log = silentLogger();
const DAY = 86_400_000;
let origin: OriginRepo | undefined;

beforeAll(() => isolateGitForTests());
afterEach(async () => {
  await origin?.cleanup();
  origin = undefined;
});

/** A checkout with two kept worktrees: one with a commit (8 days old), one with an untracked file. */
async function withKeptWorktrees() {
  origin = await createOrigin();
  const checkoutPath = origin.checkoutPath;
  await ensureCheckout({ alias: 'sample', remote: origin.url, path: checkoutPath, timeoutMs: 20_000, log });
  const old = await prepareWorktree({
    checkoutPath,
    automationId: 'triage',
    taskType: 'github-issues',
    taskId: '1',
    log,
  });
  await commitFiles(old.path, { 'fix.txt': 'the fix' });
  const fresh = await prepareWorktree({
    checkoutPath,
    automationId: 'nightly',
    taskType: 'cron',
    taskId: '2',
    log,
  });
  await writeFile(join(fresh.path, 'notes.txt'), 'draft');
  for (const w of [old, fresh]) {
    expect((await finishWorktree({ checkoutPath, ...w, log })).kept).toBe(true);
  }
  await age(old.path, 8 * DAY);
  return { checkoutPath, old, fresh };
}

/** Makes a worktree look untouched for `ms`: its folder and git's records of it. */
async function age(path: string, ms: number): Promise<void> {
  const when = new Date(Date.now() - ms);
  const gitdir = (await git(['rev-parse', '--absolute-git-dir'], { cwd: path })).trim();
  for (const file of [path, join(gitdir, 'HEAD'), join(gitdir, 'index'), join(gitdir, 'logs', 'HEAD')]) {
    await utimes(file, when, when);
  }
}

describe('listKeptWorktrees', () => {
  it('lists each kept worktree with its automation, branch, age and what it holds', async () => {
    const { checkoutPath, old, fresh } = await withKeptWorktrees();
    const list = await listKeptWorktrees([checkoutPath, checkoutPath]);
    expect(list.map((w) => w.path)).toEqual([fresh.path, old.path]);
    expect(list[1]).toMatchObject({
      checkoutPath,
      automationId: 'triage',
      branch: old.branch,
      unpushedCommits: 1,
      dirty: false,
      registered: true,
      locked: false,
    });
    expect(list[1]!.ageMs).toBeGreaterThanOrEqual(8 * DAY - 60_000);
    expect(list[0]).toMatchObject({
      automationId: 'nightly',
      unpushedCommits: 0,
      dirty: true,
      changedFiles: ['notes.txt'],
    });
    expect(list[0]!.ageMs).toBeLessThan(DAY);

    // Listing again must not make an old worktree look recent.
    const again = await listKeptWorktrees([checkoutPath]);
    expect(again.find((w) => w.path === old.path)!.ageMs).toBeGreaterThanOrEqual(8 * DAY - 60_000);
  });

  it('returns nothing for a checkout without worktrees', async () => {
    origin = await createOrigin();
    expect(await listKeptWorktrees([origin.checkoutPath])).toEqual([]);
  });
});

describe('selectForGc', () => {
  const base = {
    kind: 'worktree' as const,
    checkoutPath: '/w/api',
    branch: null,
    unpushedCommits: 0,
    dirty: false,
    changedFiles: [],
  };
  const now = Date.parse('2026-03-10T00:00:00Z');
  const entry = (name: string, daysOld: number, locked = false): KeptWorktree => ({
    ...base,
    path: `/w/api.worktrees/a/${name}`,
    automationId: 'a',
    name,
    modifiedAt: new Date(now - daysOld * DAY),
    ageMs: daysOld * DAY,
    registered: true,
    locked,
  });
  const list = [entry('cron-new', 1), entry('cron-old', 10), entry('cron-locked', 30, true)];

  it('selects by age, or everything, and never a locked worktree', () => {
    expect(selectForGc(list, { olderThanMs: parseDuration('7d'), now }).map((w) => w.name)).toEqual([
      'cron-old',
    ]);
    expect(selectForGc(list, { all: true, now }).map((w) => w.name)).toEqual(['cron-new', 'cron-old']);
  });

  it('asks for a choice rather than guessing', () => {
    expect(() => selectForGc(list, { now })).toThrow(UsageError);
    expect(() => selectForGc(list, { all: true, olderThanMs: 1, now })).toThrow(/not both/);
  });
});

describe('removeWorktrees', () => {
  it('dry run reports what it would remove and removes nothing', async () => {
    const { checkoutPath, old } = await withKeptWorktrees();
    const selected = selectForGc(await listKeptWorktrees([checkoutPath]), {
      olderThanMs: 7 * DAY,
      now: Date.now(),
    });
    const result = await removeWorktrees(selected, { dryRun: true });
    expect(result.removed.map((w) => w.path)).toEqual([old.path]);
    expect(existsSync(old.path)).toBe(true);
    expect(await branchExists(checkoutPath, old.branch)).toBe(true);
  });

  it('removes selected worktrees and their branches, leaving the others', async () => {
    const { checkoutPath, old, fresh } = await withKeptWorktrees();
    const selected = selectForGc(await listKeptWorktrees([checkoutPath]), {
      olderThanMs: 7 * DAY,
      now: Date.now(),
    });
    const result = await removeWorktrees(selected, { dryRun: false });
    expect(result).toMatchObject({ failed: [] });
    expect(result.removed.map((w) => w.path)).toEqual([old.path]);
    expect(existsSync(old.path)).toBe(false);
    expect(existsSync(join(checkoutPath + '.worktrees', 'triage'))).toBe(false);
    expect(await branchExists(checkoutPath, old.branch)).toBe(false);
    expect(existsSync(join(fresh.path, 'notes.txt'))).toBe(true);
    expect((await listKeptWorktrees([checkoutPath])).map((w) => w.path)).toEqual([fresh.path]);
  });

  it('cleans up a leftover folder git no longer knows, and its branch', async () => {
    const { checkoutPath, old } = await withKeptWorktrees();
    await git(['worktree', 'remove', '--force', old.path], { cwd: checkoutPath });
    await mkdir(join(old.path, 'build'), { recursive: true });
    await writeFile(join(old.path, 'build', 'out.bin'), 'x', { mode: 0o444 });
    const list = await listKeptWorktrees([checkoutPath]);
    const leftover = list.find((w) => w.path === old.path)!;
    expect(leftover).toMatchObject({
      registered: false,
      dirty: null,
      branch: old.branch,
      unpushedCommits: 1,
    });
    const result = await removeWorktrees([leftover], { dryRun: false });
    expect(result.failed).toEqual([]);
    expect(existsSync(old.path)).toBe(false);
    expect(await branchExists(checkoutPath, old.branch)).toBe(false);
  });

  it('refuses entries that do not describe a curupira worktree folder', async () => {
    const { checkoutPath, old } = await withKeptWorktrees();
    const [entry] = (await listKeptWorktrees([checkoutPath])).filter((w) => w.path === old.path);
    const forged: KeptWorktree[] = [
      { ...entry!, path: checkoutPath },
      { ...entry!, automationId: '..', path: join(`${checkoutPath}.worktrees`, '..', entry!.name) },
      { ...entry!, name: '/etc' },
    ];
    const result = await removeWorktrees(forged, { dryRun: false });
    expect(result.removed).toEqual([]);
    expect(result.failed).toHaveLength(3);
    expect(result.failed[0]!.error).toMatch(/refusing to remove/);
    expect(existsSync(join(checkoutPath, 'README.md'))).toBe(true);
    expect(existsSync(old.path)).toBe(true);
  });
});

describe('what a kill leaves behind', () => {
  async function checkout(): Promise<string> {
    origin = await createOrigin();
    await ensureCheckout({
      alias: 'sample',
      remote: origin.url,
      path: origin.checkoutPath,
      timeoutMs: 20_000,
      log,
    });
    return origin.checkoutPath;
  }

  it('lists a folder at a worktree path that git does not know, and removes it', async () => {
    const checkoutPath = await checkout();
    const target = worktreePath(checkoutPath, 'triage', 'github-issues', '9');
    await mkdir(join(target, 'src'), { recursive: true });
    await writeFile(join(target, 'src', 'half.txt'), 'left by a kill');
    const [found] = await listKeptWorktrees([checkoutPath]);
    expect(found).toMatchObject({
      kind: 'unregistered',
      path: target,
      registered: false,
      dirty: null,
      branch: null,
    });
    const result = await removeWorktrees(selectForGc([found!], { all: true, now: Date.now() }), {
      dryRun: false,
    });
    expect(result.failed).toEqual([]);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(`${checkoutPath}.worktrees`)).toBe(false);
  });

  it('lists a .stale folder a run moved aside, and removes it without touching the live branch', async () => {
    const checkoutPath = await checkout();
    const target = worktreePath(checkoutPath, 'triage', 'github-issues', '9');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, 'notes.txt'), 'someone’s notes');
    const live = await prepareWorktree({
      checkoutPath,
      automationId: 'triage',
      taskType: 'github-issues',
      taskId: '9',
      log,
    });
    const list = await listKeptWorktrees([checkoutPath]);
    const stale = list.find((w) => w.kind === 'stale')!;
    expect(stale).toMatchObject({ automationId: 'triage', branch: null, registered: false });
    expect(stale.name).toMatch(new RegExp(`^\\.${basename(target)}\\.stale-`));
    expect(list.find((w) => w.kind === 'worktree')?.path).toBe(target);

    const result = await removeWorktrees([stale], { dryRun: false });
    expect(result.failed).toEqual([]);
    expect(existsSync(stale.path)).toBe(false);
    expect(await branchExists(checkoutPath, live.branch)).toBe(true);
    expect(existsSync(join(target, 'README.md'))).toBe(true);
  });

  it('may remove a worktree left locked "initializing" once it is old, never a young one', async () => {
    const checkoutPath = await checkout();
    const made = await prepareWorktree({
      checkoutPath,
      automationId: 'triage',
      taskType: 'cron',
      taskId: '3',
      log,
    });
    await writeFile(join((await worktreeGitDir(made.path))!, 'locked'), 'initializing');
    expect((await listKeptWorktrees([checkoutPath]))[0]!.locked).toBe(true);
    await age(made.path, 3_600_000);
    const [old] = await listKeptWorktrees([checkoutPath]);
    expect(old!.locked).toBe(false);
    const result = await removeWorktrees(selectForGc([old!], { all: true, now: Date.now() }), {
      dryRun: false,
    });
    expect(result.failed).toEqual([]);
    expect(existsSync(made.path)).toBe(false);
    expect(await branchExists(checkoutPath, made.branch)).toBe(false);
  });
});

describe('OpenCode databases beside worktrees', () => {
  async function withDb(taskId: string) {
    const checkoutPath = origin!.checkoutPath;
    const made = await prepareWorktree({
      checkoutPath,
      automationId: 'fix',
      taskType: 'github-issues',
      taskId,
      log,
    });
    for (const suffix of ['.opencode.db', '.opencode.db-shm', '.opencode.db-wal']) {
      await writeFile(`${made.path}${suffix}`, 'sqlite');
    }
    return made;
  }

  it('are removed with the worktree, by finishWorktree and by gc', async () => {
    origin = await createOrigin();
    const checkoutPath = origin.checkoutPath;
    await ensureCheckout({ alias: 'sample', remote: origin.url, path: checkoutPath, timeoutMs: 20_000, log });
    const clean = await withDb('1');
    expect((await finishWorktree({ checkoutPath, ...clean, log })).removed).toBe(true);
    expect(existsSync(`${clean.path}.opencode.db`)).toBe(false);
    expect(existsSync(`${clean.path}.opencode.db-wal`)).toBe(false);
    expect(existsSync(`${checkoutPath}.worktrees`)).toBe(false);

    const kept = await withDb('2');
    await commitFiles(kept.path, { 'fix.txt': 'x' });
    expect((await finishWorktree({ checkoutPath, ...kept, log })).kept).toBe(true);
    expect(existsSync(`${kept.path}.opencode.db`)).toBe(true); // its session may resume
    const [entry] = await listKeptWorktrees([checkoutPath]);
    expect((await removeWorktrees([entry!], { dryRun: false })).failed).toEqual([]);
    expect(existsSync(`${kept.path}.opencode.db`)).toBe(false);
    expect(existsSync(`${kept.path}.opencode.db-shm`)).toBe(false);
    expect(existsSync(`${checkoutPath}.worktrees`)).toBe(false);
  });

  it('left by an older version beside a worktree that is gone are listed as strays and removed', async () => {
    origin = await createOrigin();
    const checkoutPath = origin.checkoutPath;
    await ensureCheckout({ alias: 'sample', remote: origin.url, path: checkoutPath, timeoutMs: 20_000, log });
    const gone = await withDb('1');
    const live = await withDb('2');
    await git(['worktree', 'remove', '--force', gone.path], { cwd: checkoutPath });
    const strays = await listStrayFiles([checkoutPath]);
    expect(strays.map((f) => basename(f.path))).toEqual(
      ['.opencode.db', '.opencode.db-shm', '.opencode.db-wal'].map((s) => `${basename(gone.path)}${s}`),
    );
    expect(strays[0]).toMatchObject({ worktreePath: gone.path, sizeBytes: 6 });
    expect((await removeStrayFiles(strays, { dryRun: true })).removed).toHaveLength(3);
    expect(existsSync(`${gone.path}.opencode.db`)).toBe(true);
    const result = await removeStrayFiles(strays, { dryRun: false });
    expect(result).toMatchObject({ failed: [] });
    expect(existsSync(`${gone.path}.opencode.db`)).toBe(false);
    expect(existsSync(`${live.path}.opencode.db`)).toBe(true);
    expect(await readdir(dirname(live.path))).toEqual(
      expect.arrayContaining([basename(live.path), `${basename(live.path)}.opencode.db`]),
    );
    const forged = { ...strays[0]!, path: join(checkoutPath, 'README.md') };
    expect((await removeStrayFiles([forged], { dryRun: false })).failed[0]!.error).toMatch(
      /refusing to remove/,
    );
    expect(existsSync(join(checkoutPath, 'README.md'))).toBe(true);
  });
});

describe('parseDuration', () => {
  it('reads seconds, minutes, hours, days and weeks', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('7d')).toBe(7 * DAY);
    expect(parseDuration('2w')).toBe(14 * DAY);
  });

  it.each(['7', 'd', '-1d', '1.5h', '7 days', ''])(
    'rejects %j with a message that shows the format',
    (text) => {
      expect(() => parseDuration(text)).toThrow(/invalid duration .*for example 7d/);
    },
  );
});
