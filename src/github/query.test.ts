import { describe, expect, it } from 'vitest';
import { compileSearchQuery, isBotAuthor, quoteSearchValue, type SearchFilters } from './query.js';

/** The filters an automation gets when it sets only `repo` (the config applies these defaults). */
function issueFilters(overrides: Partial<SearchFilters> = {}): SearchFilters {
  return {
    kind: 'issue',
    repo: 'acme/api',
    state: 'open',
    labels: [],
    exclude_labels: [],
    sort: 'created-asc',
    ...overrides,
  };
}

function prFilters(overrides: Partial<SearchFilters> = {}): SearchFilters {
  return issueFilters({ kind: 'pr', ...overrides });
}

describe('compileSearchQuery', () => {
  it('compiles the minimal issue automation of the settings documentation exactly', () => {
    const query = compileSearchQuery(issueFilters({ labels: ['agent-ready'], linked_pull_request: false }));
    expect(query).toBe('repo:acme/api is:issue is:open label:agent-ready -linked:pr sort:created-asc');
  });

  describe('defaults', () => {
    it('an issue automation with only defaults asks for open issues, oldest first', () => {
      expect(compileSearchQuery(issueFilters())).toBe('repo:acme/api is:issue is:open sort:created-asc');
    });

    it('a pull-request automation with only defaults asks for open pull requests, oldest first', () => {
      expect(compileSearchQuery(prFilters())).toBe('repo:acme/api is:pr is:open sort:created-asc');
    });
  });

  describe('state', () => {
    it.each([
      ['open', 'repo:acme/api is:issue is:open sort:created-asc'],
      ['closed', 'repo:acme/api is:issue is:closed sort:created-asc'],
      ['all', 'repo:acme/api is:issue sort:created-asc'],
    ] as const)('%s', (state, expected) => {
      expect(compileSearchQuery(issueFilters({ state }))).toBe(expected);
    });
  });

  describe('labels', () => {
    it('requires every label, in the order given', () => {
      expect(compileSearchQuery(issueFilters({ labels: ['bug', 'agent-ready'] }))).toBe(
        'repo:acme/api is:issue is:open label:bug label:agent-ready sort:created-asc',
      );
    });

    it('excludes every excluded label, after the required ones', () => {
      expect(
        compileSearchQuery(issueFilters({ labels: ['bug'], exclude_labels: ['blocked', 'wontfix'] })),
      ).toBe('repo:acme/api is:issue is:open label:bug -label:blocked -label:wontfix sort:created-asc');
    });

    it('quotes labels with spaces, both required and excluded', () => {
      expect(
        compileSearchQuery(issueFilters({ labels: ['good first issue'], exclude_labels: ['needs design'] })),
      ).toBe(
        'repo:acme/api is:issue is:open label:"good first issue" -label:"needs design" sort:created-asc',
      );
    });
  });

  describe('assignee', () => {
    it.each([
      ['octocat', 'assignee:octocat'],
      ['@me', 'assignee:@me'],
      ['none', 'no:assignee'],
      ['any', 'assignee:*'],
      ['app/renovate', 'assignee:app/renovate'],
    ])('%s → %s', (assignee, expected) => {
      expect(compileSearchQuery(issueFilters({ assignee }))).toBe(
        `repo:acme/api is:issue is:open ${expected} sort:created-asc`,
      );
    });
  });

  describe('author, milestone and project', () => {
    it.each([
      [{ author: 'app/dependabot' }, 'author:app/dependabot'],
      [{ author: 'octocat' }, 'author:octocat'],
      [{ milestone: 'v1.2' }, 'milestone:v1.2'],
      [{ milestone: 'Sprint 4' }, 'milestone:"Sprint 4"'],
      [{ project: 'acme/5' }, 'project:acme/5'],
    ] satisfies [Partial<SearchFilters>, string][])('%o → %s', (overrides, expected) => {
      expect(compileSearchQuery(issueFilters(overrides))).toBe(
        `repo:acme/api is:issue is:open ${expected} sort:created-asc`,
      );
    });
  });

  describe('sort', () => {
    it.each([
      'created-asc',
      'created-desc',
      'updated-asc',
      'updated-desc',
      'comments-asc',
      'comments-desc',
    ] as const)('%s is the last part', (sort) => {
      expect(compileSearchQuery(issueFilters({ sort, labels: ['x'] }))).toBe(
        `repo:acme/api is:issue is:open label:x sort:${sort}`,
      );
    });
  });

  describe('issue-only fields', () => {
    it.each([
      [true, 'linked:pr'],
      [false, '-linked:pr'],
    ])('linked_pull_request %s → %s', (linked_pull_request, expected) => {
      expect(compileSearchQuery(issueFilters({ linked_pull_request }))).toBe(
        `repo:acme/api is:issue is:open ${expected} sort:created-asc`,
      );
    });

    it('leaves linked_pull_request out of a pull-request query', () => {
      expect(compileSearchQuery(prFilters({ linked_pull_request: false }))).toBe(
        'repo:acme/api is:pr is:open sort:created-asc',
      );
    });
  });

  describe('pull-request-only fields', () => {
    it.each([
      [{ draft: true }, 'draft:true'],
      [{ draft: false }, 'draft:false'],
      [{ base: 'main' }, 'base:main'],
      [{ base: 'release/1.x' }, 'base:release/1.x'],
      [{ head: 'feature/login' }, 'head:feature/login'],
      [{ head: 'fork:branch' }, 'head:"fork:branch"'],
      [{ review: 'none' }, 'review:none'],
      [{ review: 'required' }, 'review:required'],
      [{ review: 'approved' }, 'review:approved'],
      [{ review: 'changes_requested' }, 'review:changes_requested'],
      [{ ci_status: 'success' }, 'status:success'],
      [{ ci_status: 'failure' }, 'status:failure'],
      [{ ci_status: 'pending' }, 'status:pending'],
      [{ linked_issue: true }, 'linked:issue'],
      [{ linked_issue: false }, '-linked:issue'],
    ] satisfies [Partial<SearchFilters>, string][])('%o → %s', (overrides, expected) => {
      expect(compileSearchQuery(prFilters(overrides))).toBe(
        `repo:acme/api is:pr is:open ${expected} sort:created-asc`,
      );
    });

    it('leaves every pull-request field out of an issue query', () => {
      const query = compileSearchQuery(
        issueFilters({
          draft: false,
          base: 'main',
          head: 'x',
          review: 'approved',
          ci_status: 'success',
          linked_issue: true,
        }),
      );
      expect(query).toBe('repo:acme/api is:issue is:open sort:created-asc');
    });
  });

  describe('ordering with every field set', () => {
    it('issues', () => {
      const query = compileSearchQuery({
        kind: 'issue',
        repo: 'acme/api',
        state: 'closed',
        labels: ['bug', 'good first issue'],
        exclude_labels: ['blocked'],
        assignee: 'none',
        author: 'octocat',
        milestone: 'v2',
        project: 'acme/5',
        sort: 'updated-desc',
        linked_pull_request: true,
      });
      expect(query).toBe(
        'repo:acme/api is:issue is:closed label:bug label:"good first issue" -label:blocked no:assignee ' +
          'author:octocat milestone:v2 project:acme/5 linked:pr sort:updated-desc',
      );
    });

    it('pull requests', () => {
      const query = compileSearchQuery({
        kind: 'pr',
        repo: 'acme/web',
        state: 'all',
        labels: ['review-needed'],
        exclude_labels: ['do not merge', 'wip'],
        assignee: '@me',
        author: 'app/dependabot',
        milestone: 'Q3 release',
        project: 'acme/12',
        sort: 'comments-desc',
        draft: false,
        base: 'main',
        head: 'deps/update',
        review: 'approved',
        ci_status: 'success',
        linked_issue: false,
      });
      expect(query).toBe(
        'repo:acme/web is:pr label:review-needed -label:"do not merge" -label:wip assignee:@me ' +
          'author:app/dependabot milestone:"Q3 release" project:acme/12 draft:false base:main ' +
          'head:deps/update review:approved status:success -linked:issue sort:comments-desc',
      );
    });
  });
});

describe('quoteSearchValue', () => {
  it.each([
    ['agent-ready', 'agent-ready'],
    ['app/dependabot', 'app/dependabot'],
    ['v1.2.3', 'v1.2.3'],
    ['ação', 'ação'],
    ['a\\b', 'a\\b'],
    ['good first issue', '"good first issue"'],
    ['tab\tseparated', '"tab\tseparated"'],
    ['line\nbreak', '"line\nbreak"'],
    [' leading', '" leading"'],
    ['a"b', '"a\\"b"'],
    ['"quoted"', '"\\"quoted\\""'],
    ['scope:api', '"scope:api"'],
    ['a,b', '"a,b"'],
    ['say "hi", then: go', '"say \\"hi\\", then: go"'],
    ['back\\slash "q"', '"back\\slash \\"q\\""'],
    ['', '""'],
  ])('%j → %s', (value, expected) => {
    expect(quoteSearchValue(value)).toBe(expected);
  });

  it('quotes every kind of value the same way, e.g. authors and milestones', () => {
    expect(compileSearchQuery(issueFilters({ author: 'a,b', milestone: 'x"y' }))).toBe(
      'repo:acme/api is:issue is:open author:"a,b" milestone:"x\\"y" sort:created-asc',
    );
  });
});

describe('the seed-004 filters (issue 29)', () => {
  it('labels_any is one OR qualifier, each value quoted as needed, after the required labels', () => {
    expect(
      compileSearchQuery(issueFilters({ labels: ['agent'], labels_any: ['bug', 'good first issue'] })),
    ).toBe('repo:acme/api is:issue is:open label:agent label:bug,"good first issue" sort:created-asc');
    expect(compileSearchQuery(issueFilters({ labels_any: [] }))).toBe(
      'repo:acme/api is:issue is:open sort:created-asc',
    );
  });

  it('exclude_authors negates each author after `author:`', () => {
    expect(
      compileSearchQuery(prFilters({ author: 'octocat', exclude_authors: ['app/dependabot', 'bob'] })),
    ).toBe('repo:acme/api is:pr is:open author:octocat -author:app/dependabot -author:bob sort:created-asc');
  });

  it('title is quoted text searched in titles only, before `sort:`', () => {
    expect(compileSearchQuery(issueFilters({ title: 'flaky test' }))).toBe(
      'repo:acme/api is:issue is:open "flaky test" in:title sort:created-asc',
    );
  });
});

describe('ignore_bots (issue 29)', () => {
  it('leaves out Dependabot and Renovate in the query (other bots are a post-filter)', () => {
    expect(compileSearchQuery(prFilters({ ignore_bots: true }))).toBe(
      'repo:acme/api is:pr is:open -author:app/dependabot -author:app/renovate sort:created-asc',
    );
    expect(compileSearchQuery(prFilters({ ignore_bots: false }))).toBe(
      'repo:acme/api is:pr is:open sort:created-asc',
    );
  });

  it('a bot author is a Bot actor or a `[bot]` login', () => {
    expect(isBotAuthor({ __typename: 'Bot', login: 'github-actions' })).toBe(true);
    expect(isBotAuthor({ login: 'my-app[bot]' })).toBe(true);
    expect(isBotAuthor({ __typename: 'User', login: 'bob' })).toBe(false);
    expect(isBotAuthor(null)).toBe(false);
  });
});
