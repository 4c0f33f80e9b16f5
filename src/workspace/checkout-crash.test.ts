/**
 * What a kill -9 during the first clone or during the setup script leaves behind, and what
 * `ensureCheckout` makes of it: really killing `git clone` (its whole process group) half-way
 * through a repository of a few thousand files, and states built by hand.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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

describe('ensureCheckout and the setup script of a checkout it did not clone', () => {
  const script = '#!/bin/sh\necho run >> "$PWD/setup-runs.txt"\nexit 0\n';

  it('never runs the setup script of a `path` that points at an existing checkout', async () => {
    const repo = await setUp({
      files: { 'README.md': '# s\n', 'setup.sh': { content: script, executable: true } },
    });
    // The user's own clone, made before curupira ever saw it.
    await mkdir(dirname(repo.checkoutPath), { recursive: true });
    await git(['clone', '-q', '--', repo.url, repo.checkoutPath], { cwd: dirname(repo.checkoutPath) });

    for (let i = 0; i < 2; i++) {
      const result = await ensureCheckout(options(repo, 'setup.sh'));
      expect(result.freshClone).toBe(false);
    }
    expect(existsSync(join(repo.checkoutPath, 'setup-runs.txt'))).toBe(false);
  });

  it('never runs a setup script set after curupira cloned the checkout without one', async () => {
    const repo = await setUp({
      files: { 'README.md': '# s\n', 'setup.sh': { content: script, executable: true } },
    });
    expect((await ensureCheckout(options(repo))).freshClone).toBe(true);
    expect((await ensureCheckout(options(repo, 'setup.sh'))).freshClone).toBe(false);
    expect(existsSync(join(repo.checkoutPath, 'setup-runs.txt'))).toBe(false);
  });
});

describe('ensureCheckout and an interrupted setup script', () => {
  const DIST = join(import.meta.dirname, '../../dist');
  let flag: string;
  let flagDir: string;

  /**
   * The script: counts its runs in the checkout; while `flag` exists it removes it, leaves its pid
   * beside it and waits (to be killed with the process that started it); fails while `fail-setup`
   * is in the checkout.
   */
  function hangingScript(): string {
    return `#!/bin/sh\necho run >> "$PWD/setup-runs.txt"\nif [ -f '${flag}' ]; then rm -f '${flag}'; echo $$ > '${flag}.pid'; exec sleep 30; fi\n[ -f fail-setup ] && exit 3\nexit 0\n`;
  }

  /**
   * A separate Node process (the built module) clones with the setup script, and is killed with
   * SIGKILL while the script runs: the state a kill -9 of curupira during the setup leaves.
   */
  async function killDuringSetup(repo: OriginRepo): Promise<void> {
    await writeFile(flag, '');
    const code = `const { ensureCheckout } = await import(${JSON.stringify(join(DIST, 'workspace/checkout.js'))});
const { silentLogger } = await import(${JSON.stringify(join(DIST, 'log.js'))});
await ensureCheckout({ alias: 'sample', remote: ${JSON.stringify(repo.url)}, path: ${JSON.stringify(repo.checkoutPath)}, setupScript: 'setup.sh', timeoutMs: 60000, log: silentLogger() });
console.log('setup finished');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const deadline = Date.now() + 30_000;
    while (!existsSync(`${flag}.pid`)) {
      if (Date.now() > deadline) throw new Error('the setup script never started');
      await new Promise((wake) => setTimeout(wake, 20));
    }
    process.kill(-child.pid!, 'SIGKILL');
    await exited;
    const sleeper = Number((await readFile(`${flag}.pid`, 'utf8')).trim());
    try {
      process.kill(sleeper, 'SIGKILL');
    } catch {
      // already gone with its group
    }
  }

  beforeEach(async () => {
    flagDir = await mkdtemp(join(tmpdir(), 'curupira-setup-flag-'));
    flag = join(flagDir, 'hang');
  });
  afterEach(async () => {
    await rm(flagDir, { recursive: true, force: true });
  });

  it('runs a setup that a kill -9 interrupted before the checkout is used again, then never again', async () => {
    const repo = await setUp({
      files: { 'README.md': '# s\n', 'setup.sh': { content: hangingScript(), executable: true } },
    });
    await killDuringSetup(repo);
    // The clone was in place when the setup started, and stays.
    expect(await readFile(join(repo.checkoutPath, 'setup-runs.txt'), 'utf8')).toBe('run\n');

    const again = await ensureCheckout(options(repo, 'setup.sh'));
    expect(again.freshClone).toBe(false);
    expect(await readFile(join(repo.checkoutPath, 'setup-runs.txt'), 'utf8')).toBe('run\nrun\n');
    // Done once it succeeded: not run a third time.
    await ensureCheckout(options(repo, 'setup.sh'));
    expect(await readFile(join(repo.checkoutPath, 'setup-runs.txt'), 'utf8')).toBe('run\nrun\n');
  });

  it('runs an interrupted setup again after it failed on the kept checkout, until it succeeds', async () => {
    const repo = await setUp({
      files: { 'README.md': '# s\n', 'setup.sh': { content: hangingScript(), executable: true } },
    });
    await killDuringSetup(repo);
    await writeFile(join(repo.checkoutPath, 'fail-setup'), '');
    await expect(ensureCheckout(options(repo, 'setup.sh'))).rejects.toThrow(
      /setup script setup.sh failed with status 3/,
    );
    await expect(ensureCheckout(options(repo, 'setup.sh'))).rejects.toThrow(/failed with status 3/);
    expect(existsSync(join(repo.checkoutPath, 'README.md'))).toBe(true);

    await rm(join(repo.checkoutPath, 'fail-setup'));
    await ensureCheckout(options(repo, 'setup.sh'));
    await ensureCheckout(options(repo, 'setup.sh'));
    expect(await readFile(join(repo.checkoutPath, 'setup-runs.txt'), 'utf8')).toBe('run\nrun\nrun\nrun\n');
  });
});
