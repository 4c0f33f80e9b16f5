import { describe, expect, it } from 'vitest';
import { codeSource, describeCodeSource } from './code-source.js';
import type { Task } from './types.js';

const task = {
  identity: { automationId: 'review', repo: 'acme/api', taskType: 'review-watch', id: 'abc' },
  key: 'k',
  fingerprint: 'f',
  item: { id: 'abc', title: 't', url: 'u', body: '', itemKey: 'review:abc', fields: {} },
} as Task;
const sha = '1234567890abcdef1234567890abcdef12345678';
const pinning = { pinnedCommit: () => ({ branch: 'main', sha }) };

describe('a task pinned to a commit (a review watch)', () => {
  it('starts its worktree at that commit, whatever the base branch keys say', () => {
    expect(codeSource({}, task, pinning)).toEqual({ kind: 'commit', branch: 'main', sha });
    expect(codeSource({ worktree_from: 'head', pr_base_branch: 'release' }, task, pinning)).toEqual({
      kind: 'commit',
      branch: 'main',
      sha,
    });
    expect(describeCodeSource({ kind: 'commit', branch: 'main', sha })).toBe(
      'main at 1234567890ab (the commit the task is pinned to)',
    );
  });

  it('uses the shared checkout as it is with checkout = "main", and the default branch when unpinned', () => {
    expect(codeSource({ checkout: 'main' }, task, pinning)).toEqual({ kind: 'checkout' });
    expect(codeSource({}, task, { pinnedCommit: () => undefined })).toEqual({ kind: 'default_branch' });
  });
});
