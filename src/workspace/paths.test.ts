import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceError } from '../core/errors.js';
import {
  assertInside,
  branchName,
  deliveryBranchName,
  isInside,
  scheduledBranchName,
  sha256Hex,
  worktreeName,
  worktreePath,
  worktreesRoot,
} from './paths.js';

// sha256("45")
const HASH_45 = '811786ad1ae74adfdd20dd0372abaaebc6246e343aebd01da0bfc4c02bf0106c';

describe('naming', () => {
  it('hashes the task id into the worktree name, branch and path exactly as documented', () => {
    expect(sha256Hex('45')).toBe(HASH_45);
    expect(worktreeName('github-issues', '45')).toBe(`github-issues-${HASH_45}`);
    expect(branchName('triage', 'github-issues', '45')).toBe(`curupira/triage/github-issues-${HASH_45}`);
    expect(worktreePath('/srv/work/api', 'triage', 'github-issues', '45')).toBe(
      `/srv/work/api.worktrees/triage/github-issues-${HASH_45}`,
    );
    expect(worktreePath('/srv/work/api/', 'triage', 'github-issues', '45')).toBe(
      `/srv/work/api.worktrees/triage/github-issues-${HASH_45}`,
    );
    expect(worktreesRoot('/srv/work/api')).toBe('/srv/work/api.worktrees');
  });

  it('keeps hostile task ids out of paths by hashing them', () => {
    const path = worktreePath('/srv/work/api', 'triage', 'cron', '../../../etc/passwd');
    expect(path).toMatch(/^\/srv\/work\/api\.worktrees\/triage\/cron-[0-9a-f]{64}$/);
  });

  it.each(['..', '.', '', '/etc', 'a/b', 'a\\b', '../x', 'x..y', 'name.lock', 'has space', '.hidden'])(
    'rejects %j as an automation id or task type',
    (bad) => {
      expect(() => worktreePath('/srv/api', bad, 'cron', '1')).toThrow(WorkspaceError);
      expect(() => branchName('triage', bad, '1')).toThrow(/task type must be a single path segment/);
      try {
        branchName(bad, 'cron', '1');
        expect.unreachable();
      } catch (error) {
        expect((error as WorkspaceError).code).toBe('workspace_path');
      }
    },
  );

  it('accepts ordinary identifiers', () => {
    expect(branchName('nightly_docs-2', 'github-pull-requests', 'x')).toMatch(
      /^curupira\/nightly_docs-2\/github-pull-requests-/,
    );
    expect(() => worktreesRoot('/')).toThrow(/filesystem root/);
  });
});

describe('isInside', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'curupira-paths-'));
    await mkdir(join(dir, 'parent', 'child'), { recursive: true });
    await mkdir(join(dir, 'elsewhere'));
    await symlink(join(dir, 'elsewhere'), join(dir, 'parent', 'escape'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('accepts paths strictly below the parent, existing or not', async () => {
    expect(await isInside(join(dir, 'parent'), join(dir, 'parent', 'child'))).toBe(true);
    expect(await isInside(join(dir, 'parent'), join(dir, 'parent', 'not-yet', 'deeper'))).toBe(true);
  });

  it('rejects the parent itself, .. escapes, siblings and symlink escapes', async () => {
    const parent = join(dir, 'parent');
    expect(await isInside(parent, parent)).toBe(false);
    expect(await isInside(parent, join(parent, 'child', '..', '..', 'elsewhere'))).toBe(false);
    expect(await isInside(parent, `${parent}-sibling`)).toBe(false);
    expect(await isInside(parent, join(parent, 'escape', 'file'))).toBe(false);
    await expect(assertInside(parent, join(parent, 'escape'), 'refusing to delete')).rejects.toThrow(
      /refusing to delete .* is outside/,
    );
  });
});

describe('scheduledBranchName', () => {
  it("names a schedule's fire by its time in UTC, seconds only when a fire was asked at one", () => {
    expect(scheduledBranchName('nightly', '2026-12-06T03:00:00.000Z')).toBe(
      'curupira/nightly/2026-12-06-0300',
    );
    expect(scheduledBranchName('nightly', '2026-12-06T14:07:31.412Z')).toBe(
      'curupira/nightly/2026-12-06-140731',
    );
    expect(() => scheduledBranchName('nightly', 'soon')).toThrow('not a time');
    expect(() => scheduledBranchName('../x', '2026-12-06T03:00:00.000Z')).toThrow();
  });
});

describe('deliveryBranchName', () => {
  it('keeps an issue number, and a tracker key lower-cased (Linear and Jira link the branch back)', () => {
    expect(deliveryBranchName('fix', '12', 'Broken login')).toBe('curupira/fix/12-broken-login');
    expect(deliveryBranchName('lin', 'ENG-7', 'Crash on start')).toBe('curupira/lin/eng-7-crash-on-start');
  });

  it('hashes any other id, so nothing but a word list comes from strangers', () => {
    const branch = deliveryBranchName('board', 'PVTI_lADOAB', 'Card');
    expect(branch).toMatch(/^curupira\/board\/[0-9a-f]{12}-card$/);
    expect(deliveryBranchName('x', 'ENG-7; rm -rf', 't')).toMatch(/^curupira\/x\/[0-9a-f]{12}-t$/);
  });
});
