import { describe, expect, it } from 'vitest';
import { GitHubRequestError } from '../../core/errors.js';
import type { GitHubClient } from '../../github/client.js';
import type { FollowContext } from '../follow.js';
import type { CheckVerdict } from './ci.js';
import { firstMatch, globRegExp, plain } from './merge-state.js';
import { checksVerdict, restReadiness, reviewVerdict } from './readiness.js';

const review = (id: number, login: string, state: string) => ({ id, state, user: { login } });
const everyone = () => true;

describe('reviews: the latest deciding review of each person with write access', () => {
  it('approved when one approves and none asks for changes; a later comment changes nothing', () => {
    expect(
      reviewVerdict([review(1, 'alice', 'APPROVED'), review(2, 'alice', 'COMMENTED')], everyone),
    ).toEqual({
      review: 'approved',
      approvers: ['alice'],
      requesters: [],
    });
  });

  it('changes requested wins; a later approval by the same reviewer lifts it; a dismissal removes it', () => {
    expect(
      reviewVerdict([review(1, 'alice', 'APPROVED'), review(2, 'bob', 'CHANGES_REQUESTED')], everyone).review,
    ).toBe('changes_requested');
    expect(
      reviewVerdict([review(1, 'bob', 'CHANGES_REQUESTED'), review(2, 'bob', 'APPROVED')], everyone).review,
    ).toBe('approved');
    expect(
      reviewVerdict([review(1, 'bob', 'APPROVED'), review(2, 'bob', 'DISMISSED')], everyone).review,
    ).toBe('review_required');
  });

  it('an approval by an account without write access does not count', () => {
    const writers = (login: string) => login === 'alice';
    expect(reviewVerdict([review(1, 'mallory', 'APPROVED')], writers).review).toBe('review_required');
    expect(
      reviewVerdict([review(1, 'alice', 'APPROVED'), review(2, 'mallory', 'CHANGES_REQUESTED')], writers),
    ).toMatchObject({ review: 'approved', approvers: ['alice'] });
  });
});

describe('checks: those the CI step reads', () => {
  const check = (name: string, state: CheckVerdict['state']): CheckVerdict => ({
    name,
    kind: 'check run',
    state,
    reported: state,
    url: null,
    title: null,
    summary: null,
    text: null,
  });

  it('success, pending, failure, none', () => {
    expect(checksVerdict({ checks: [check('ci', 'passing')] }).checks).toBe('success');
    expect(checksVerdict({ checks: [check('ci', 'passing'), check('build', 'running')] })).toMatchObject({
      checks: 'pending',
      pending: ['build'],
    });
    expect(
      checksVerdict({ checks: [check('lint', 'failing'), check('test', 'failing'), check('b', 'running')] }),
    ).toMatchObject({ checks: 'failure', failing: ['lint', 'test'] });
    expect(checksVerdict({ checks: [] }).checks).toBe('none');
  });

  it('restReadiness reads once per look; permissions decide who approves; a bot never does', async () => {
    const paths: string[] = [];
    const permissions: Record<string, string> = { alice: 'write', mallory: 'read' };
    const github = {
      rest: async (_method: string, path: string) => {
        paths.push(path.replace(/\?.*$/, ''));
        if (path.includes('/protection/')) throw new GitHubRequestError('not protected', { status: 404 });
        if (path.includes('/status'))
          return { state: 'success', statuses: [{ context: 'ci', state: 'success' }] };
        if (path.includes('/check-runs')) return { total_count: 0, check_runs: [] };
        const permission = /collaborators\/([^/]+)\/permission$/.exec(path);
        if (permission) return { permission: permissions[decodeURIComponent(permission[1]!)] ?? 'none' };
        return [
          review(7, 'alice', 'APPROVED'),
          review(8, 'mallory', 'CHANGES_REQUESTED'),
          review(9, 'copilot-pull-request-reviewer[bot]', 'CHANGES_REQUESTED'),
          review(10, 'bob', 'COMMENTED'),
        ];
      },
    } as unknown as GitHubClient;
    const context = {
      deps: { github },
      record: { repo: 'acme/api' },
      pr: { number: 2, head: { sha: 'abc' }, base: { ref: 'main' } },
    } as unknown as FollowContext;
    expect(await restReadiness(context)).toMatchObject({
      checks: 'success',
      review: 'approved',
      approvers: ['alice'],
    });
    await restReadiness(context);
    expect(paths.sort()).toEqual([
      '/repos/acme/api/branches/main/protection/required_status_checks',
      '/repos/acme/api/collaborators/alice/permission',
      '/repos/acme/api/collaborators/mallory/permission',
      '/repos/acme/api/commits/abc/check-runs',
      '/repos/acme/api/commits/abc/status',
      '/repos/acme/api/pulls/2/reviews',
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

describe('text from GitHub in a gate detail', () => {
  it('one line, without terminal escapes or control characters, short', () => {
    expect(plain('db/\u001b[31mred\u001b[0m.sql\nrm -rf\u0007 x')).toBe('db/red.sql rm -rf x');
    expect(plain('x'.repeat(300))).toHaveLength(200);
  });
});
