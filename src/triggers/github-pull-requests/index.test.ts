import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../../config/load.js';
import type { AutomationFor } from '../../config/types.js';
import { FakeClock } from '../../core/clock.js';
import type { Item } from '../../core/types.js';
import { createGitHubClient, type GitHubClient } from '../../github/client.js';
import { staticTokenSource } from '../../github/token.js';
import { silentLogger } from '../../log.js';
import { type Simulator, startSimulator } from '../../simulator/server.js';
import { SimWorld } from '../../simulator/world.js';
import { noService } from '../service.js';
import { createGitHubPullRequestsSource } from './index.js';
import { PULL_REQUEST_PROMPT_FIELDS } from './schema.js';

const TOKEN = 'pull-requests-trigger-token';
let sim: Simulator;
let world: SimWorld;
let client: GitHubClient;

/**
 * acme/api pull requests (issue #100 is closed by #5):
 *   #1 open  base main        head feature/cache  approved            CI success  MERGEABLE   CLEAN
 *   #2 draft base main        head wip/parser     review required     CI pending  MERGEABLE   DRAFT
 *   #3 open  dependabot       head dependabot/…   no review           CI success  MERGEABLE   CLEAN
 *   #4 open  dependabot                           no review           CI failure  CONFLICTING DIRTY
 *   #5 open  base release/1.x head fix/crash      changes requested   CI failure  MERGEABLE   BEHIND  closes #100
 *   #6 merged, #7 closed
 *   #8 open  base main                            review required     no CI       UNKNOWN     UNKNOWN
 *   #9 open  base main                            review required     CI success  MERGEABLE   BLOCKED
 */
function buildWorld(): SimWorld {
  const w = new SimWorld();
  w.addToken(TOKEN, 'alice');
  w.addRepo('acme/api');
  w.addPullRequest('acme/api', {
    title: 'Add a cache',
    body: 'Caches the parsed config.',
    author: 'bob',
    labels: ['enhancement'],
    assignees: ['alice'],
    milestone: 'v1',
    headRefName: 'feature/cache',
    headRefOid: '1111111111111111111111111111111111111111',
    reviewDecision: 'APPROVED',
    reviews: [{ author: 'carol', state: 'APPROVED' }],
    checkState: 'SUCCESS',
    additions: 120,
    deletions: 4,
    changedFiles: 3,
  });
  w.addPullRequest('acme/api', {
    title: 'WIP: new parser',
    author: 'bob',
    draft: true,
    headRefName: 'wip/parser',
    reviewDecision: 'REVIEW_REQUIRED',
    checkState: 'PENDING',
  });
  w.addPullRequest('acme/api', {
    title: 'Bump lodash from 4.17.20 to 4.17.21',
    author: 'app/dependabot',
    labels: ['dependencies'],
    headRefName: 'dependabot/npm_and_yarn/lodash-4.17.21',
    checkState: 'SUCCESS',
  });
  w.addPullRequest('acme/api', {
    title: 'Bump react from 18 to 19',
    author: 'app/dependabot',
    labels: ['dependencies'],
    headRefName: 'dependabot/npm_and_yarn/react-19',
    mergeable: 'CONFLICTING',
    checkState: 'FAILURE',
  });
  w.addPullRequest('acme/api', {
    title: 'Fix the crash',
    author: 'carol',
    baseRefName: 'release/1.x',
    headRefName: 'fix/crash',
    mergeStateStatus: 'BEHIND',
    reviewDecision: 'CHANGES_REQUESTED',
    reviews: [{ author: 'bob', state: 'CHANGES_REQUESTED' }],
    checkState: 'FAILURE',
  });
  w.addPullRequest('acme/api', { title: 'Refactor', author: 'bob', state: 'MERGED', checkState: 'SUCCESS' });
  w.addPullRequest('acme/api', { title: 'Experiment', author: 'bob', state: 'CLOSED' });
  w.addPullRequest('acme/api', {
    title: 'Mergeability not computed yet',
    author: 'carol',
    headRefName: 'feature/unknown',
    mergeable: 'UNKNOWN',
    mergeStateStatus: 'UNKNOWN',
    reviewDecision: 'REVIEW_REQUIRED',
  });
  w.addPullRequest('acme/api', {
    title: 'Waiting for a review',
    author: 'carol',
    headRefName: 'feature/blocked',
    mergeStateStatus: 'BLOCKED',
    reviewDecision: 'REVIEW_REQUIRED',
    checkState: 'SUCCESS',
  });
  w.addIssue('acme/api', { title: 'The crash', number: 100, labels: ['dependencies'] });
  w.linkPullRequest('acme/api', 5, 100);
  return w;
}

beforeAll(async () => {
  world = buildWorld();
  sim = await startSimulator({ world });
  client = createGitHubClient({
    apiUrl: sim.url,
    tokens: staticTokenSource(TOKEN),
    clock: new FakeClock(),
    random: () => 0.5,
  });
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  sim.resetRequests();
});

function automation(lines: string): AutomationFor<'github-pull-requests'> {
  const text = `[settings.github]
api_url = "${sim.url}"

[repositories.api]
remote = "https://github.com/acme/api.git"

[automations.review]
trigger_type = "github-pull-requests"
repository = "api"
repo = "acme/api"
prompt = "Review \${pull_request_number}"
${lines}
`;
  const [resolved] = loadSettingsFromText(text, '/tmp/curupira-prs-test/settings.toml').settings.automations;
  if (resolved?.triggerType !== 'github-pull-requests')
    throw new Error('expected a github-pull-requests automation');
  return resolved;
}

async function discover(lines: string, limit = 100): Promise<Item[]> {
  const source = createGitHubPullRequestsSource(automation(lines), {
    github: () => client,
    clock: new FakeClock(),
    log: silentLogger(),
    service: noService,
  });
  return source.discover({ limit });
}

async function numbers(lines: string): Promise<number[]> {
  return (await discover(lines)).map((item) => Number(item.fields.pull_request_number));
}

describe('github-pull-requests: search filters', () => {
  it('finds open pull requests by default, never issues', async () => {
    expect(await numbers('')).toEqual([1, 2, 3, 4, 5, 8, 9]);
  });

  it('state = "closed" includes merged pull requests; "all" finds every one', async () => {
    expect(await numbers('state = "closed"')).toEqual([6, 7]);
    expect(await numbers('state = "all"')).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('draft', async () => {
    expect(await numbers('draft = true')).toEqual([2]);
    expect(await numbers('draft = false')).toEqual([1, 3, 4, 5, 8, 9]);
  });

  it('base', async () => {
    expect(await numbers('base = "main"')).toEqual([1, 2, 3, 4, 8, 9]);
    expect(await numbers('base = "release/1.x"')).toEqual([5]);
  });

  it('head', async () => {
    expect(await numbers('head = "feature/cache"')).toEqual([1]);
    expect(await numbers('head = "feature/none"')).toEqual([]);
  });

  it('review', async () => {
    expect(await numbers('review = "none"')).toEqual([2, 3, 4, 8, 9]);
    expect(await numbers('review = "required"')).toEqual([2, 8, 9]);
    expect(await numbers('review = "approved"')).toEqual([1]);
    expect(await numbers('review = "changes_requested"')).toEqual([5]);
  });

  it('ci_status', async () => {
    expect(await numbers('ci_status = "success"')).toEqual([1, 3, 9]);
    expect(await numbers('ci_status = "failure"')).toEqual([4, 5]);
    expect(await numbers('ci_status = "pending"')).toEqual([2]);
  });

  it('linked_issue', async () => {
    expect(await numbers('linked_issue = true')).toEqual([5]);
    expect(await numbers('linked_issue = false')).toEqual([1, 2, 3, 4, 8, 9]);
  });

  it('the shared filters apply to pull requests too: labels, author, assignee, milestone', async () => {
    expect(await numbers('labels = "dependencies"')).toEqual([3, 4]);
    expect(await numbers('author = "app/dependabot"')).toEqual([3, 4]);
    expect(await numbers('assignee = "@me"')).toEqual([1]);
    expect(await numbers('milestone = "v1"')).toEqual([1]);
  });
});

describe('github-pull-requests: post-filters after the search', () => {
  it('mergeable = true keeps MERGEABLE only (not CONFLICTING, not UNKNOWN)', async () => {
    expect(await numbers('mergeable = true')).toEqual([1, 2, 3, 5, 9]);
  });

  it('mergeable = false keeps CONFLICTING only', async () => {
    expect(await numbers('mergeable = false')).toEqual([4]);
  });

  it('merge_state keeps the listed mergeStateStatus values', async () => {
    expect(await numbers('merge_state = ["CLEAN"]')).toEqual([1, 3]);
    expect(await numbers('merge_state = ["BEHIND", "BLOCKED"]')).toEqual([5, 9]);
    expect(await numbers('merge_state = ["DRAFT"]')).toEqual([2]);
  });

  it('are not search qualifiers: the query GitHub receives does not mention them', async () => {
    await numbers('mergeable = true\nmerge_state = ["CLEAN"]');
    expect(sim.requests).toHaveLength(1);
    expect(sim.requests[0]?.variables?.query).toBe('repo:acme/api is:pr is:open sort:created-asc');
  });

  it('filtered-out pull requests do not take the places of batch_size', async () => {
    // Open PRs in order: #1 #2 #3 MERGEABLE, #4 CONFLICTING. With batch_size = 1 the first page
    // holds only #1; the conflicting #4 must still be found, not starved by the ones before it.
    expect((await discover('mergeable = false', 1)).map((i) => i.id)).toEqual(['4']);
    expect((await discover('merge_state = ["BLOCKED"]', 1)).map((i) => i.id)).toEqual(['9']);
    expect((await discover('mergeable = true', 2)).map((i) => i.id)).toEqual(['1', '2']);
  });

  it('ask GitHub for batch_size results per request, not 100, with or without post-filters', async () => {
    await discover('', 3);
    expect(sim.requests.map((r) => r.variables?.first)).toEqual([3]);
    sim.resetRequests();
    await discover('mergeable = false', 2);
    // Pages #1 #2 | #3 #4 | #5 #8 | #9: only #4 passes, so it reads to the end, 2 at a time.
    expect(sim.requests.map((r) => r.variables?.first)).toEqual([2, 2, 2, 2]);
  });

  it("the seed's dependabot automation: author app/dependabot and mergeable = true", async () => {
    expect(await numbers('author = "app/dependabot"\nmergeable = true')).toEqual([3]);
  });
});

describe('github-pull-requests: items', () => {
  it('carry every pull_request_* field; mergeability and merge state are volatile', async () => {
    const [item] = await discover('head = "feature/cache"');
    const pr = world.pullRequest('acme/api', 1)!;
    expect(item).toEqual({
      id: '1',
      title: 'Add a cache',
      url: 'https://github.com/acme/api/pull/1',
      body: 'Caches the parsed config.',
      itemKey: 'pr:1',
      fields: {
        pull_request_number: '1',
        pull_request_title: 'Add a cache',
        pull_request_body: 'Caches the parsed config.',
        pull_request_url: 'https://github.com/acme/api/pull/1',
        pull_request_state: 'open',
        pull_request_author: 'bob',
        pull_request_labels: ['enhancement'],
        pull_request_assignees: ['alice'],
        pull_request_milestone: 'v1',
        pull_request_created_at: pr.createdAt,
        pull_request_is_draft: false,
        pull_request_head_ref: 'feature/cache',
        pull_request_base_ref: 'main',
        pull_request_head_sha: '1111111111111111111111111111111111111111',
        pull_request_additions: 120,
        pull_request_deletions: 4,
        pull_request_changed_files: 3,
      },
      volatile: {
        pull_request_mergeable: 'MERGEABLE',
        pull_request_merge_state_status: 'CLEAN',
        pull_request_from_fork: false,
        pull_request_label_descriptions: expect.any(String),
      },
    });
    expect([...Object.keys(item!.fields), ...Object.keys(item!.volatile ?? {})]).toEqual([
      ...PULL_REQUEST_PROMPT_FIELDS,
    ]);
  });

  it('show draft, merged and conflicting pull requests as GitHub reports them', async () => {
    const items = await discover('state = "all"');
    const byNumber = new Map(items.map((i) => [i.id, i]));
    expect(byNumber.get('2')?.fields.pull_request_is_draft).toBe(true);
    expect(byNumber.get('2')?.volatile?.pull_request_merge_state_status).toBe('DRAFT');
    expect(byNumber.get('6')?.fields.pull_request_state).toBe('merged');
    expect(byNumber.get('7')?.fields.pull_request_state).toBe('closed');
    expect(byNumber.get('4')?.volatile).toEqual({
      pull_request_mergeable: 'CONFLICTING',
      pull_request_merge_state_status: 'DIRTY',
      pull_request_from_fork: false,
      pull_request_label_descriptions: expect.any(String),
    });
    expect(byNumber.get('3')?.fields.pull_request_author).toBe('dependabot');
  });

  it('keep the same fields when only mergeability changes', async () => {
    const before = (await discover('head = "feature/blocked"'))[0]!;
    const pr = world.pullRequest('acme/api', 9)!;
    pr.mergeable = 'CONFLICTING';
    pr.mergeStateStatus = 'DIRTY';
    try {
      const after = (await discover('head = "feature/blocked"'))[0]!;
      expect(after.fields).toEqual(before.fields);
      expect(after.volatile).toEqual({
        pull_request_mergeable: 'CONFLICTING',
        pull_request_merge_state_status: 'DIRTY',
        pull_request_from_fork: false,
        pull_request_label_descriptions: expect.any(String),
      });
    } finally {
      pr.mergeable = 'MERGEABLE';
      pr.mergeStateStatus = 'BLOCKED';
    }
  });
});

describe('github-pull-requests: the seed-004 filters (issue 29), on the simulator', () => {
  it('labels_any, exclude_authors and title, alone and with draft = false', async () => {
    expect(await numbers('labels_any = ["enhancement", "dependencies"]')).toEqual([1, 3, 4]);
    expect(await numbers('exclude_authors = ["app/dependabot", "carol"]')).toEqual([1, 2]);
    expect(await numbers('title = "bump"')).toEqual([3, 4]);
    expect(await numbers('draft = false\nexclude_authors = ["app/dependabot"]')).toEqual([1, 5, 8, 9]);
  });
});

describe('github-pull-requests: ignore_bots (issue 29), on the simulator', () => {
  it('leaves out Dependabot’s pull requests, and says so in --explain', async () => {
    expect(await numbers('ignore_bots = true')).toEqual([1, 2, 5, 8, 9]);
    const resolved = automation('ignore_bots = true');
    const lines = resolved.trigger.explain(resolved, new Date(0));
    expect(lines.find((l) => l.label === 'post-filters')?.value).toBe('authors that are bots left out');
  });
});
