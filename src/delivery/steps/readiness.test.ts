import { describe, expect, it } from 'vitest';
import type { GitHubClient } from '../../github/client.js';
import type { FollowContext } from '../follow.js';
import { firstMatch, globRegExp } from './merge-state.js';
import { checksVerdict, restReadiness, reviewVerdict } from './readiness.js';

const review = (id: number, login: string, state: string, association = 'COLLABORATOR') => ({
  id,
  state,
  author_association: association as 'COLLABORATOR',
  user: { login },
});

describe('reviews: the latest deciding review of each reviewer with write access', () => {
  it('approved when one approves and none asks for changes; a later comment changes nothing', () => {
    expect(reviewVerdict([review(1, 'alice', 'APPROVED'), review(2, 'alice', 'COMMENTED')])).toEqual({
      review: 'approved',
      approvers: ['alice'],
      requesters: [],
    });
  });

  it('changes requested wins; a later approval by the same reviewer lifts it; a dismissal removes it', () => {
    expect(
      reviewVerdict([review(1, 'alice', 'APPROVED'), review(2, 'bob', 'CHANGES_REQUESTED')]).review,
    ).toBe('changes_requested');
    expect(reviewVerdict([review(1, 'bob', 'CHANGES_REQUESTED'), review(2, 'bob', 'APPROVED')]).review).toBe(
      'approved',
    );
    expect(reviewVerdict([review(1, 'bob', 'APPROVED'), review(2, 'bob', 'DISMISSED')]).review).toBe(
      'review_required',
    );
  });

  it('an approval by an account without write access does not count', () => {
    expect(reviewVerdict([review(1, 'mallory', 'APPROVED', 'CONTRIBUTOR')]).review).toBe('review_required');
    expect(reviewVerdict([review(1, 'mallory', 'APPROVED', 'NONE')]).approvers).toEqual([]);
  });
});

describe('checks: statuses and check runs of the head', () => {
  const status = (statuses: { context: string; state: string }[]) => ({
    state: 'pending',
    total_count: statuses.length,
    statuses,
  });
  const runs = (list: { name: string; status: string; conclusion: string | null }[]) => ({
    total_count: list.length,
    check_runs: list as never,
  });

  it('success, pending, failure, none', () => {
    expect(checksVerdict(status([{ context: 'ci', state: 'success' }]), runs([])).checks).toBe('success');
    expect(
      checksVerdict(status([]), runs([{ name: 'test', status: 'completed', conclusion: 'skipped' }])).checks,
    ).toBe('success');
    expect(
      checksVerdict(status([]), runs([{ name: 'build', status: 'in_progress', conclusion: null }])),
    ).toMatchObject({ checks: 'pending', pending: ['build'] });
    expect(
      checksVerdict(
        status([{ context: 'lint', state: 'error' }]),
        runs([{ name: 'test', status: 'completed', conclusion: 'timed_out' }]),
      ),
    ).toMatchObject({ checks: 'failure', failing: ['lint', 'test'] });
    expect(checksVerdict(status([]), runs([])).checks).toBe('none');
  });

  it('restReadiness reads the three endpoints once per look', async () => {
    const paths: string[] = [];
    const github = {
      rest: async (_method: string, path: string) => {
        paths.push(path);
        if (path.includes('/status')) return status([{ context: 'ci', state: 'success' }]);
        if (path.includes('/check-runs')) return runs([]);
        return [review(7, 'alice', 'APPROVED')];
      },
    } as unknown as GitHubClient;
    const context = {
      deps: { github },
      record: { repo: 'acme/api' },
      pr: { number: 2, head: { sha: 'abc' } },
    } as unknown as FollowContext;
    expect(await restReadiness(context)).toMatchObject({ checks: 'success', review: 'approved' });
    await restReadiness(context);
    expect(paths.sort()).toEqual([
      '/repos/acme/api/commits/abc/check-runs?per_page=100',
      '/repos/acme/api/commits/abc/status?per_page=100',
      '/repos/acme/api/pulls/2/reviews?per_page=100',
    ]);
  });
});

describe('human_merge_paths globs (gitignore-like)', () => {
  it.each([
    ['*.sql', 'db/migrations/001.sql', true],
    ['*.sql', 'schema.sql', true],
    ['*.sql', 'sql/readme.md', false],
    ['db/migrations/', 'db/migrations/001.sql', true],
    ['db/migrations/', 'src/db/migrations/001.sql', false],
    ['/infra/**', 'infra/prod/main.tf', true],
    ['/infra/**', 'src/infra/x', false],
    ['.github/workflows/*.yml', '.github/workflows/ci.yml', true],
    ['.github/workflows/*.yml', '.github/workflows/sub/ci.yml', false],
    ['**/secrets.{json,yaml}', 'a/b/secrets.yaml', true],
    ['**/secrets.{json,yaml}', 'secrets.json', true],
    ['package.json', 'packages/x/package.json', true],
    ['src/a?.ts', 'src/ab.ts', true],
    ['src/a?.ts', 'src/a/b.ts', false],
  ])('%s on %s: %s', (glob, file, hit) => {
    expect(globRegExp(glob).test(file)).toBe(hit);
  });

  it('firstMatch names the file and the glob', () => {
    expect(firstMatch(['README.md', 'db/x.sql'], ['docs/', '*.sql'])).toEqual({
      file: 'db/x.sql',
      glob: '*.sql',
    });
    expect(firstMatch(['README.md'], ['*.sql'])).toBeUndefined();
  });
});
