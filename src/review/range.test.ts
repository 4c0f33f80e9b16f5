/** Which commits an incremental review covers, on real git histories. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { git } from '../workspace/git.js';
import { commitFiles, isolateGitForTests } from '../workspace/testing.js';
import { baselineScope, describeScope, gitHistory, incrementalScope, NO_NEW_COMMITS } from './range.js';

let dir: string;

beforeEach(async () => {
  isolateGitForTests();
  dir = await mkdtemp(join(tmpdir(), 'curupira-review-range-'));
  await git(['init', '-q', '-b', 'main', dir], { cwd: tmpdir() });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `n` commits on the branch; their shas, oldest first. */
async function commits(n: number, prefix = 'c'): Promise<string[]> {
  const shas: string[] = [];
  for (let i = 0; i < n; i++)
    shas.push(await commitFiles(dir, { [`${prefix}${i}.txt`]: `${i}\n` }, `${prefix} ${i}`));
  return shas;
}

describe('incremental review scope', () => {
  it('a first review covers the last 20 commits (all of a shorter history), or the whole repository when asked', async () => {
    const shas = await commits(25);
    const head = shas.at(-1)!;
    const first = await incrementalScope(gitHistory(dir), head, null);
    expect(first).toMatchObject({
      kind: 'review',
      from: shas[4],
      to: head,
      note: 'first review: the last 20 commits',
    });
    expect(first.kind === 'review' && first.commits).toEqual(shas.slice(5).reverse());
    const whole = await incrementalScope(gitHistory(dir), head, null, { wholeFirst: true });
    expect(whole).toMatchObject({ kind: 'review', whole: true, from: null, commits: [] });
  });

  it('a short history is covered whole from its first commit', async () => {
    const shas = await commits(3);
    const scope = await incrementalScope(gitHistory(dir), shas[2]!, null);
    expect(scope).toMatchObject({ kind: 'review', from: null, commits: [...shas].reverse() });
    if (scope.kind === 'review')
      expect(describeScope(scope)).toBe(
        `the first commit..${shas[2]!.slice(0, 12)} (first review: the last 20 commits)`,
      );
  });

  it('covers the commits since the last review; nothing new is a skip', async () => {
    const shas = await commits(4);
    const scope = await incrementalScope(gitHistory(dir), shas[3]!, shas[1]!);
    expect(scope).toEqual({
      kind: 'review',
      from: shas[1],
      to: shas[3],
      commits: [shas[3], shas[2]],
      note: `2 new commits since ${shas[1]!.slice(0, 12)}`,
      whole: false,
    });
    expect(await incrementalScope(gitHistory(dir), shas[3]!, shas[3]!)).toEqual({
      kind: 'skip',
      reason: NO_NEW_COMMITS,
    });
  });

  it('a rewritten history goes back to the last 20 commits, saying so', async () => {
    const shas = await commits(3);
    await git(['reset', '-q', '--hard', shas[0]!], { cwd: dir });
    const rewritten = await commits(2, 'r');
    const scope = await incrementalScope(gitHistory(dir), rewritten[1]!, shas[2]!);
    expect(scope).toMatchObject({
      kind: 'review',
      from: null,
      commits: [rewritten[1], rewritten[0], shas[0]],
      note: `history was rewritten: ${shas[2]!.slice(0, 12)}, reviewed last, is no longer in the branch; back to the last 20 commits`,
    });
    // A reviewed commit git does not know at all (gc'd after the rewrite) reads the same.
    const unknown = await incrementalScope(gitHistory(dir), rewritten[1]!, 'f'.repeat(40));
    expect(unknown).toMatchObject({ kind: 'review', commits: [rewritten[1], rewritten[0], shas[0]] });
  });

  it('a baseline is the whole repository at the pinned commit', () => {
    expect(
      describeScope(
        baselineScope('a'.repeat(40)) as Extract<ReturnType<typeof baselineScope>, { kind: 'review' }>,
      ),
    ).toBe('the whole repository at aaaaaaaaaaaa (baseline: the whole repository)');
  });
});
