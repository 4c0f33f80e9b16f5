import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceError } from '../core/errors.js';
import {
  currentBranch,
  GitCommandError,
  git,
  isGitCheckout,
  revParse,
  sanitizedGitEnv,
  statusPorcelain,
} from './git.js';
import { commitFiles, isolateGitForTests } from './testing.js';

let dir: string;
beforeAll(async () => {
  isolateGitForTests();
  dir = await mkdtemp(join(tmpdir(), 'curupira-git-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(() => {
  delete process.env.GIT_DIR;
  delete process.env.GIT_INDEX_FILE;
});

async function repo(name: string): Promise<string> {
  const path = join(dir, name);
  await git(['init', '-q', '-b', 'main', path], { cwd: dir });
  await commitFiles(path, { 'a.txt': 'a\n' }, 'first');
  return path;
}

describe('git', () => {
  it('works on the repository at cwd even when the environment points git elsewhere (e.g. inside a hook)', async () => {
    const mine = await repo('mine');
    const other = await repo('other');
    await git(['switch', '-q', '-c', 'other-branch'], { cwd: other });
    process.env.GIT_DIR = join(other, '.git');
    process.env.GIT_INDEX_FILE = join(other, '.git', 'index');
    expect(await currentBranch(mine)).toBe('main');
    expect(sanitizedGitEnv()).toMatchObject({ GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' });
    expect(sanitizedGitEnv().GIT_DIR).toBeUndefined();
  });

  it('throws GitCommandError carrying git’s own explanation, with credentials scrubbed', async () => {
    const mine = await repo('fails');
    const failing = git(['fetch', 'https://user:s3cr3tpassword@127.0.0.1:9/none.git'], {
      cwd: mine,
      timeoutMs: 10_000,
    });
    await expect(failing).rejects.toBeInstanceOf(GitCommandError);
    const error = (await failing.catch((e: unknown) => e)) as GitCommandError;
    expect(error.message).toMatch(
      /^git fetch https:\/\/\[redacted\]@127\.0\.0\.1:9\/none\.git failed with status 128: /,
    );
    expect(error.message).not.toContain('s3cr3tpassword');
    expect(error.code).toBe('workspace');
  });

  it('says plainly when the working directory is missing', async () => {
    const missing = join(dir, 'nope');
    await expect(git(['status'], { cwd: missing })).rejects.toThrow(
      `could not start git: working directory does not exist: ${missing}`,
    );
    await expect(git(['status'], { cwd: missing })).rejects.toBeInstanceOf(WorkspaceError);
    expect(await isGitCheckout(missing)).toBe(false);
  });

  it('reports changes, including untracked files and renames, with odd names intact', async () => {
    const mine = await repo('status');
    expect(await statusPorcelain(mine)).toEqual([]);
    await writeFile(join(mine, 'new file.txt'), 'x');
    await git(['mv', 'a.txt', 'b.txt'], { cwd: mine });
    const entries = await statusPorcelain(mine);
    expect(entries).toEqual(
      expect.arrayContaining([
        { code: 'R ', path: 'b.txt', from: 'a.txt' },
        { code: '??', path: 'new file.txt' },
      ]),
    );
    expect(await revParse(mine, 'refs/heads/does-not-exist')).toBeNull();
  });
});
