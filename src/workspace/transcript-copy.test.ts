import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { ensureCheckout } from './checkout.js';
import { git, statusPorcelain } from './git.js';
import { createOrigin, isolateGitForTests, type OriginRepo } from './testing.js';
import { copyTranscriptIntoWorktree } from './transcript-copy.js';
import { finishWorktree, prepareWorktree } from './worktree.js';

const log = silentLogger();
let origin: OriginRepo | undefined;

beforeAll(() => isolateGitForTests());
afterEach(async () => {
  await origin?.cleanup();
  origin = undefined;
});

async function worktree() {
  origin = await createOrigin();
  await ensureCheckout({
    alias: 'sample',
    remote: origin.url,
    path: origin.checkoutPath,
    timeoutMs: 20_000,
    log,
  });
  const prepared = await prepareWorktree({
    checkoutPath: origin.checkoutPath,
    automationId: 'triage',
    taskType: 'github-issues',
    taskId: '7',
    log,
  });
  const transcript = join(origin.checkoutPath, '..', 'run.jsonl');
  await writeFile(transcript, '{"type":"start"}\n{"type":"end"}\n');
  return { repo: origin, prepared, transcript };
}

describe('copyTranscriptIntoWorktree', () => {
  it('writes the lines to .curupira/transcript.jsonl, which git ignores: nothing to commit, nothing kept', async () => {
    const { repo, prepared, transcript } = await worktree();
    const target = await copyTranscriptIntoWorktree(prepared.path, transcript);
    expect(target).toBe(join(prepared.path, '.curupira', 'transcript.jsonl'));
    expect(await readFile(target, 'utf8')).toBe('{"type":"start"}\n{"type":"end"}\n');
    expect(await statusPorcelain(prepared.path)).toEqual([]);
    // An agent of a later run that stages everything and commits: the transcript is not in it.
    await writeFile(join(prepared.path, 'fix.txt'), 'fix\n');
    await git(['add', '-A'], { cwd: prepared.path });
    await git(['commit', '-q', '-m', 'fix'], { cwd: prepared.path });
    const files = await git(['show', '--name-only', '--format=', 'HEAD'], { cwd: prepared.path });
    expect(files.trim().split('\n')).toEqual(['fix.txt']);
    const tree = await git(['ls-tree', '-r', '--name-only', prepared.branch], { cwd: repo.checkoutPath });
    expect(tree).not.toContain('.curupira');
    // A clean worktree holding only the transcript is not kept for it.
    const copied = await copyTranscriptIntoWorktree(prepared.path, transcript);
    await git(['reset', '-q', '--hard', prepared.baseCommit!], { cwd: prepared.path });
    expect(existsSync(copied)).toBe(true);
    const finished = await finishWorktree({ checkoutPath: repo.checkoutPath, ...prepared, log });
    expect(finished).toMatchObject({ kept: false, dirty: false });
  });

  it('refuses a .curupira or a transcript file that is a link, writing nothing outside the worktree', async () => {
    const { repo, prepared, transcript } = await worktree();
    const outside = join(repo.checkoutPath, '..', 'outside');
    await mkdir(outside);
    await symlink(outside, join(prepared.path, '.curupira'));
    await expect(copyTranscriptIntoWorktree(prepared.path, transcript)).rejects.toThrow(/not a folder/);
    expect(existsSync(join(outside, 'transcript.jsonl'))).toBe(false);
    await git(['clean', '-fdxq'], { cwd: prepared.path });
    await mkdir(join(prepared.path, '.curupira'), { recursive: true }).catch(() => undefined);
    const victim = join(outside, 'victim.txt');
    await writeFile(victim, 'keep');
    await symlink(victim, join(prepared.path, '.curupira', 'transcript.jsonl'));
    await expect(copyTranscriptIntoWorktree(prepared.path, transcript)).rejects.toThrow(/not a plain file/);
    expect(await readFile(victim, 'utf8')).toBe('keep');
  });
});
