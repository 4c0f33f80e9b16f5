/**
 * What a kill -9 during the first clone or during the setup script leaves behind, and what
 * `ensureCheckout` makes of it: really killing `git clone` (its whole process group) half-way
 * through a repository of a few thousand files, and states built by hand.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { ensureCheckout } from './checkout.js';
import { git, revParse, statusPorcelain } from './git.js';
import {
  commitFiles,
  createOrigin,
  isolateGitForTests,
  type OriginOptions,
  type OriginRepo,
} from './testing.js';

const log = silentLogger();
const BIG = 2000;
let origin: OriginRepo | undefined;

beforeAll(() => isolateGitForTests());
afterEach(async () => {
  await origin?.cleanup();
  origin = undefined;
});

async function setUp(options: OriginOptions = {}): Promise<OriginRepo> {
  origin = await createOrigin(options);
  return origin;
}

function bigFiles(count = BIG): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`src/d${i % 25}/f${i}.txt`] = `file ${i}\n`;
  return files;
}

function options(repo: OriginRepo, setupScript?: string) {
  return {
    alias: 'sample',
    remote: repo.url,
    path: repo.checkoutPath,
    timeoutMs: 60_000,
    log,
    ...(setupScript ? { setupScript } : {}),
  };
}

async function countFiles(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile() && !`${entry.parentPath}/`.includes('/.git/')).length;
}

/** Runs `git clone` in its own process group and SIGKILLs the group once `ready()` holds. */
async function killCloneWhen(url: string, dest: string, ready: () => boolean): Promise<void> {
  await mkdir(dirname(dest), { recursive: true });
  const child = spawn('git', ['clone', '-q', '--', `file://${url}`, dest], {
    cwd: dirname(dest),
    detached: true,
    stdio: 'ignore',
  });
  let gone = false;
  const exited = new Promise<void>((done) =>
    child.once('exit', () => {
      gone = true;
      done();
    }),
  );
  while (!gone && !ready()) await new Promise((wake) => setImmediate(wake));
  if (!gone) process.kill(-child.pid!, 'SIGKILL');
  await exited;
}

describe('ensureCheckout after a kill during the first clone', () => {
  it.each([
    ['while fetching', (dest: string) => existsSync(join(dest, '.git', 'HEAD'))],
    ['while checking out', (dest: string) => existsSync(join(dest, 'src'))],
  ])(
    'clones again over a half clone a real SIGKILL of git clone %s left at the destination',
    async (_, ready) => {
      const repo = await setUp({ files: bigFiles() });
      await killCloneWhen(repo.url, repo.checkoutPath, () => ready(repo.checkoutPath));
      // What an older curupira then took for a checkout (or refused): a .git without a finished checkout.
      expect(existsSync(join(repo.checkoutPath, '.git'))).toBe(true);
      expect(await countFiles(repo.checkoutPath)).toBeLessThan(BIG);

      const result = await ensureCheckout(options(repo));
      expect(result.freshClone).toBe(true);
      expect(await countFiles(repo.checkoutPath)).toBe(BIG);
      expect(await statusPorcelain(repo.checkoutPath)).toEqual([]);
      expect(await revParse(repo.checkoutPath, 'refs/remotes/origin/HEAD')).not.toBeNull();
    },
  );

  it('removes a temporary clone a real SIGKILL left beside the destination, and clones', async () => {
    const repo = await setUp({ files: bigFiles() });
    const temp = join(dirname(repo.checkoutPath), `.${basename(repo.checkoutPath)}.clone-0123456789ab`);
    await killCloneWhen(repo.url, temp, () => existsSync(join(temp, '.git', 'HEAD')));
    expect(existsSync(temp)).toBe(true);

    const result = await ensureCheckout(options(repo));
    expect(result.freshClone).toBe(true);
    expect(existsSync(temp)).toBe(false);
    expect(await readdir(dirname(repo.checkoutPath))).toEqual([basename(repo.checkoutPath)]);
    expect(await countFiles(repo.checkoutPath)).toBe(BIG);
  });

  it('never puts a clone at the destination before it is complete', async () => {
    const repo = await setUp({ files: bigFiles(300) });
    const parent = dirname(repo.checkoutPath);
    await mkdir(parent, { recursive: true });
    const seen = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const name of await readdir(parent)) seen.add(name);
        if (existsSync(repo.checkoutPath)) {
          // The moment the destination appears, it is a complete checkout.
          expect(existsSync(join(repo.checkoutPath, '.git', 'index'))).toBe(true);
          return;
        }
        await new Promise((wake) => setImmediate(wake));
      }
    })();
    await ensureCheckout(options(repo));
    watching = false;
    await watch;
    expect([...seen].some((name) => name.startsWith(`.${basename(repo.checkoutPath)}.clone-`))).toBe(true);
  });

  it('clones again over a destination holding only an empty .git (an older half clone)', async () => {
    const repo = await setUp();
    await mkdir(repo.checkoutPath, { recursive: true });
    await git(['init', '-q', repo.checkoutPath], { cwd: dirname(repo.checkoutPath) });
    await git(['remote', 'add', 'origin', repo.url], { cwd: repo.checkoutPath });

    const result = await ensureCheckout(options(repo));
    expect(result.freshClone).toBe(true);
    expect(await readFile(join(repo.checkoutPath, 'README.md'), 'utf8')).toBe('# sample\n');
  });

  it('refuses, with a clear message, to replace an incomplete checkout that holds local commits', async () => {
    const repo = await setUp();
    await ensureCheckout(options(repo));
    await commitFiles(repo.checkoutPath, { 'mine.txt': 'local work\n' });
    const gitDir = join(repo.checkoutPath, '.git');
    await git(['update-index', '--force-remove', 'README.md'], { cwd: repo.checkoutPath });
    await rm(join(gitDir, 'index'));

    await expect(ensureCheckout(options(repo))).rejects.toThrow(
      /checkout of repository 'sample' at .* is incomplete: its checkout never finished \(no index\); it holds 1 local commits, so it is not replaced/,
    );
    expect(await readFile(join(repo.checkoutPath, 'mine.txt'), 'utf8')).toBe('local work\n');
  });
});

describe('ensureCheckout and an interrupted setup script', () => {
  const script = '#!/bin/sh\necho run >> "$PWD/setup-runs.txt"\n[ -f fail-setup ] && exit 3\nexit 0\n';

  it('runs a setup that never finished (killed) before the checkout is used again', async () => {
    const repo = await setUp({
      files: { 'README.md': '# s\n', 'setup.sh': { content: script, executable: true } },
    });
    // The state a kill -9 during the setup script leaves: the clone in place, no record of success.
    await ensureCheckout(options(repo));
    expect(existsSync(join(repo.checkoutPath, 'setup-runs.txt'))).toBe(false);

    const again = await ensureCheckout(options(repo, 'setup.sh'));
    expect(again.freshClone).toBe(false);
    expect(await readFile(join(repo.checkoutPath, 'setup-runs.txt'), 'utf8')).toBe('run\n');
    // Done once it succeeded: not run a second time.
    await ensureCheckout(options(repo, 'setup.sh'));
    expect(await readFile(join(repo.checkoutPath, 'setup-runs.txt'), 'utf8')).toBe('run\n');
  });

  it('runs the setup again after it failed on an existing checkout, until it succeeds', async () => {
    const repo = await setUp({
      files: { 'README.md': '# s\n', 'setup.sh': { content: script, executable: true } },
    });
    await ensureCheckout(options(repo));
    await writeFile(join(repo.checkoutPath, 'fail-setup'), '');
    await expect(ensureCheckout(options(repo, 'setup.sh'))).rejects.toThrow(
      /setup script setup.sh failed with status 3/,
    );
    await expect(ensureCheckout(options(repo, 'setup.sh'))).rejects.toThrow(/failed with status 3/);
    expect(existsSync(join(repo.checkoutPath, 'README.md'))).toBe(true);

    await rm(join(repo.checkoutPath, 'fail-setup'));
    await ensureCheckout(options(repo, 'setup.sh'));
    await ensureCheckout(options(repo, 'setup.sh'));
    expect(await readFile(join(repo.checkoutPath, 'setup-runs.txt'), 'utf8')).toBe('run\nrun\nrun\n');
  });
});
