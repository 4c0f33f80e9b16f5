/**
 * Test support: a throwaway "origin" (a bare repository with one commit on its default branch) in a
 * temporary folder, built with real git and no network. Used by this folder's tests and by
 * end-to-end tests that need a remote to clone.
 */
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { git } from './git.js';

/**
 * Makes git in this process ignore the machine's global and system configuration (signing hooks,
 * `insteadOf` rewrites…) and gives commits an identity. Call once per test file.
 */
export function isolateGitForTests(): void {
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  process.env.GIT_CONFIG_GLOBAL = '/dev/null';
  process.env.GIT_AUTHOR_NAME = 'Curupira Test';
  process.env.GIT_AUTHOR_EMAIL = 'test@curupira.invalid';
  process.env.GIT_COMMITTER_NAME = 'Curupira Test';
  process.env.GIT_COMMITTER_EMAIL = 'test@curupira.invalid';
}

export interface SeedFile {
  content: string;
  executable?: boolean;
}

export interface OriginOptions {
  defaultBranch?: string;
  /** Files of the first commit, by relative path; a string is plain file content. */
  files?: Record<string, string | SeedFile>;
  /** Symlinks of the first commit: relative path → link target. */
  symlinks?: Record<string, string>;
}

export interface OriginRepo {
  /** The temporary folder holding everything; remove it with `cleanup`. */
  dir: string;
  /** The bare repository to clone from. */
  url: string;
  defaultBranch: string;
  /** Where a checkout under test should go (does not exist yet). */
  checkoutPath: string;
  /** Commits files on the default branch and pushes them to origin; returns the new commit. */
  push(files: Record<string, string>, message?: string): Promise<string>;
  cleanup(): Promise<void>;
}

export async function createOrigin(options: OriginOptions = {}): Promise<OriginRepo> {
  const defaultBranch = options.defaultBranch ?? 'main';
  const dir = await mkdtemp(join(tmpdir(), 'curupira-ws-'));
  const seed = join(dir, 'seed');
  const url = join(dir, 'origin.git');
  await git(['init', '-q', '-b', defaultBranch, seed], { cwd: dir });
  const files = options.files ?? { 'README.md': '# sample\n' };
  for (const [path, spec] of Object.entries(files)) {
    const file = typeof spec === 'string' ? { content: spec } : spec;
    await mkdir(dirname(join(seed, path)), { recursive: true });
    await writeFile(join(seed, path), file.content);
    if (file.executable) await chmod(join(seed, path), 0o755);
  }
  for (const [path, target] of Object.entries(options.symlinks ?? {})) {
    await symlink(target, join(seed, path));
  }
  await git(['add', '-A'], { cwd: seed });
  await git(['commit', '-q', '-m', 'initial commit'], { cwd: seed });
  await git(['clone', '-q', '--bare', seed, url], { cwd: dir });
  // Bare repositories keep no reflogs by default: these do, so tests can prove nothing was forced.
  await git(['config', 'core.logAllRefUpdates', 'always'], { cwd: url });
  await git(['remote', 'add', 'origin', url], { cwd: seed });

  return {
    dir,
    url,
    defaultBranch,
    checkoutPath: join(dir, 'workspace', 'sample'),
    async push(changes, message = 'more work') {
      for (const [path, content] of Object.entries(changes)) {
        await mkdir(dirname(join(seed, path)), { recursive: true });
        await writeFile(join(seed, path), content);
      }
      await git(['add', '-A'], { cwd: seed });
      await git(['commit', '-q', '-m', message], { cwd: seed });
      await git(['push', '-q', 'origin', defaultBranch], { cwd: seed });
      return (await git(['rev-parse', 'HEAD'], { cwd: seed })).trim();
    },
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Writes files in `cwd` and commits them there, as an agent would; returns the new commit. */
export async function commitFiles(
  cwd: string,
  files: Record<string, string>,
  message = 'agent work',
): Promise<string> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(cwd, path)), { recursive: true });
    await writeFile(join(cwd, path), content);
  }
  await git(['add', '-A'], { cwd });
  await git(['commit', '-q', '-m', message], { cwd });
  return (await git(['rev-parse', 'HEAD'], { cwd })).trim();
}
