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
import { createGitHubIssuesSource } from './index.js';
import { ISSUE_PROMPT_FIELDS } from './schema.js';

const TOKEN = 'issues-trigger-token';
let sim: Simulator;
let world: SimWorld;
let client: GitHubClient;

/**
 * acme/api, viewer alice:
 *   #1 open  bug, agent-ready          assignee alice  author bob        milestone v1   2 comments
 *   #2 open  docs, agent-ready         no assignee     author alice      in project acme/1   1 comment
 *   #3 closed bug, agent-ready                         author bob
 *   #4 open  bug, agent-ready, blocked assignee carol  author carol      milestone v2, in project, 3 comments
 *   #5 open  dependencies              assignee bob    author dependabot[bot]
 *   #6 open  agent-ready               alice, bob      author bob        open PR #9 closes it
 *   #7 closed (not planned) agent-ready                author carol      milestone v1
 *   #8 open  agent-ready               no assignee     author bob        only a closed PR #10; 4 comments
 *   #9, #10 pull requests labelled agent-ready (never issue results)
 * acme/web #1: open bug, agent-ready (never an acme/api result); #2: labels `good first issue` and
 * `area: cli`, milestone `Sprint 12`.
 */
function buildWorld(): SimWorld {
  const w = new SimWorld();
  w.addToken(TOKEN, 'alice');
  w.addRepo('acme/api');
  w.addRepo('acme/web');
  w.addIssue('acme/api', {
    title: 'Crash on start',
    body: 'It crashes when the cache is cold.',
    labels: ['bug', 'agent-ready'],
    assignees: ['alice'],
    author: 'bob',
    milestone: 'v1',
  });
  w.addIssue('acme/api', { title: 'Typo in README', labels: ['docs', 'agent-ready'], author: 'alice' });
  w.addIssue('acme/api', {
    title: 'Fixed long ago',
    labels: ['bug', 'agent-ready'],
    author: 'bob',
    state: 'CLOSED',
  });
  w.addIssue('acme/api', {
    title: 'Blocked crash',
    labels: ['bug', 'agent-ready', 'blocked'],
    assignees: ['carol'],
    author: 'carol',
    milestone: 'v2',
  });
  w.addIssue('acme/api', {
    title: 'Security advisory for lodash',
    labels: ['dependencies'],
    assignees: ['bob'],
    author: 'app/dependabot',
  });
  w.addIssue('acme/api', {
    title: 'Has a fix in review',
    labels: ['agent-ready'],
    assignees: ['alice', 'bob'],
    author: 'bob',
  });
  w.addIssue('acme/api', {
    title: 'Will not do',
    labels: ['agent-ready'],
    author: 'carol',
    milestone: 'v1',
    state: 'CLOSED',
    stateReason: 'NOT_PLANNED',
  });
  w.addIssue('acme/api', { title: 'Only an abandoned fix', labels: ['agent-ready'], author: 'bob' });
  w.addPullRequest('acme/api', { title: 'Fix #6', labels: ['agent-ready'], closingIssues: [6] });
  w.addPullRequest('acme/api', {
    title: 'Abandoned fix for #8',
    labels: ['agent-ready'],
    closingIssues: [8],
    state: 'CLOSED',
  });
  w.addIssue('acme/web', { title: 'Web crash', labels: ['bug', 'agent-ready'], author: 'bob' });
  w.addIssue('acme/web', {
    title: 'Spaces and colons',
    labels: ['good first issue', 'area: cli'],
    milestone: 'Sprint 12',
  });
  const project = w.addProject('acme', { title: 'Roadmap' });
  w.addProjectItem(project, 'acme/api#2', { status: 'Todo' });
  w.addProjectItem(project, 'acme/api#4', { status: 'Todo' });
  w.addProjectItem(project, 'acme/api#9', { status: 'Todo' });
  // Comments come last, so update order differs from creation order: 4, 2, 1, 8.
  for (let i = 0; i < 3; i += 1) w.addComment('acme/api', 4, { body: `ping ${i}`, author: 'bob' });
  w.addComment('acme/api', 2, { body: 'ping', author: 'bob' });
  for (let i = 0; i < 2; i += 1) w.addComment('acme/api', 1, { body: `ping ${i}`, author: 'carol' });
  for (let i = 0; i < 4; i += 1) w.addComment('acme/api', 8, { body: `ping ${i}`, author: 'carol' });
  // acme/bots (issue 29's ignore_bots): #1 by an app no query names, #2 by a person.
  w.addRepo('acme/bots');
  w.addIssue('acme/bots', { title: 'Scheduled report', author: 'app/nightly-reporter' });
  w.addIssue('acme/bots', { title: 'A person asks', author: 'bob' });
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

/** An automation as a user writes it: the lines of `[automations.pick]` after the required keys. */
function automation(lines: string, repo = 'acme/api'): AutomationFor<'github-issues'> {
  const text = `[settings.github]
api_url = "${sim.url}"

[repositories.api]
remote = "https://github.com/${repo}.git"

[automations.pick]
repository = "api"
repo = "${repo}"
prompt = "Work on \${issue_number}"
${lines}
`;
  const [resolved] = loadSettingsFromText(text, '/tmp/curupira-issues-test/settings.toml').settings
    .automations;
  if (resolved?.triggerType !== 'github-issues') throw new Error('expected a github-issues automation');
  return resolved;
}

async function discover(lines: string, options: { repo?: string; limit?: number } = {}): Promise<Item[]> {
  const source = createGitHubIssuesSource(automation(lines, options.repo), {
    github: () => client,
    clock: new FakeClock(),
    log: silentLogger(),
    service: noService,
  });
  return source.discover({ limit: options.limit ?? 100 });
}

async function numbers(lines: string, options: { repo?: string; limit?: number } = {}): Promise<number[]> {
  return (await discover(lines, options)).map((item) => Number(item.fields.issue_number));
}

describe('github-issues: state', () => {
  it('finds open issues only by default, never pull requests or other repositories', async () => {
    expect(await numbers('')).toEqual([1, 2, 4, 5, 6, 8]);
  });

  it('state = "closed" finds closed issues, whatever the reason', async () => {
    expect(await numbers('state = "closed"')).toEqual([3, 7]);
  });

  it('state = "all" finds every issue', async () => {
    expect(await numbers('state = "all"')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('repo selects the repository searched', async () => {
    expect(await numbers('labels = "bug"', { repo: 'acme/web' })).toEqual([1]);
  });
});

describe('github-issues: labels', () => {
  it('one label', async () => {
    expect(await numbers('labels = "bug"')).toEqual([1, 4]);
  });

  it('every listed label is required (AND)', async () => {
    expect(await numbers('labels = ["bug", "agent-ready"]')).toEqual([1, 4]);
    expect(await numbers('labels = ["bug", "docs"]')).toEqual([]);
  });

  it('exclude_labels leaves out issues carrying any of them', async () => {
    expect(await numbers('labels = "agent-ready"\nexclude_labels = "blocked"')).toEqual([1, 2, 6, 8]);
    expect(await numbers('exclude_labels = ["blocked", "docs"]')).toEqual([1, 5, 6, 8]);
  });
});

describe('github-issues: values GitHub would split are quoted', () => {
  it('labels and milestones with spaces and colons', async () => {
    const lines = 'labels = ["good first issue", "area: cli"]\nmilestone = "Sprint 12"';
    expect(await numbers(lines, { repo: 'acme/web' })).toEqual([2]);
    expect(sim.requests.at(-1)?.variables?.query).toBe(
      'repo:acme/web is:issue is:open label:"good first issue" label:"area: cli" milestone:"Sprint 12" sort:created-asc',
    );
    expect(await numbers('exclude_labels = "good first issue"', { repo: 'acme/web' })).toEqual([1]);
  });
});

describe('github-issues: assignee', () => {
  it('a login', async () => {
    expect(await numbers('assignee = "bob"')).toEqual([5, 6]);
  });

  it('@me is the token owner', async () => {
    expect(await numbers('assignee = "@me"')).toEqual([1, 6]);
  });

  it('"none" finds unassigned issues', async () => {
    expect(await numbers('assignee = "none"')).toEqual([2, 8]);
  });

  it('"any" finds assigned issues', async () => {
    expect(await numbers('assignee = "any"')).toEqual([1, 4, 5, 6]);
  });
});

describe('github-issues: author, milestone, project, linked pull request', () => {
  it('author: a user', async () => {
    expect(await numbers('author = "bob"')).toEqual([1, 6, 8]);
  });

  it('author: app/dependabot finds the bot', async () => {
    expect(await numbers('author = "app/dependabot"')).toEqual([5]);
  });

  it('milestone', async () => {
    expect(await numbers('milestone = "v1"')).toEqual([1]);
    expect(await numbers('milestone = "v1"\nstate = "all"')).toEqual([1, 7]);
    expect(await numbers('milestone = "v2"')).toEqual([4]);
  });

  it('project membership', async () => {
    expect(await numbers('project = "acme/1"')).toEqual([2, 4]);
  });

  it('linked_pull_request = true finds issues an open pull request closes', async () => {
    expect(await numbers('linked_pull_request = true')).toEqual([6]);
  });

  it('linked_pull_request = false ignores closed unmerged pull requests', async () => {
    expect(await numbers('linked_pull_request = false')).toEqual([1, 2, 4, 5, 8]);
  });

  it("the seed's minimal automation: agent-ready without a linked pull request", async () => {
    expect(await numbers('labels = "agent-ready"\nlinked_pull_request = false')).toEqual([1, 2, 4, 8]);
    expect(sim.requests.at(-1)?.variables?.query).toBe(
      'repo:acme/api is:issue is:open label:agent-ready -linked:pr sort:created-asc',
    );
  });
});

describe('github-issues: sort (open agent-ready issues #1 #2 #4 #6 #8)', () => {
  const cases: [string, number[]][] = [
    ['created-asc', [1, 2, 4, 6, 8]],
    ['created-desc', [8, 6, 4, 2, 1]],
    ['updated-asc', [6, 4, 2, 1, 8]],
    ['updated-desc', [8, 1, 2, 4, 6]],
    ['comments-asc', [6, 2, 1, 4, 8]],
    ['comments-desc', [8, 4, 1, 2, 6]],
  ];
  for (const [sort, expected] of cases) {
    it(sort, async () => {
      expect(await numbers(`labels = "agent-ready"\nsort = "${sort}"`)).toEqual(expected);
    });
  }
});

describe('github-issues: items', () => {
  it('carry every issue_* prompt field, in the documented order', async () => {
    const [item] = await discover('milestone = "v1"');
    const issue = world.issue('acme/api', 1)!;
    expect(item).toEqual({
      id: '1',
      title: 'Crash on start',
      url: 'https://github.com/acme/api/issues/1',
      body: 'It crashes when the cache is cold.',
      itemKey: 'issue:1',
      fields: {
        issue_number: '1',
        issue_title: 'Crash on start',
        issue_body: 'It crashes when the cache is cold.',
        issue_url: 'https://github.com/acme/api/issues/1',
        issue_state: 'open',
        issue_author: 'bob',
        issue_labels: ['bug', 'agent-ready'],
        issue_assignees: ['alice'],
        issue_milestone: 'v1',
        issue_created_at: issue.createdAt,
      },
      // Labels' descriptions change on their own: not part of the fingerprint.
      volatile: { issue_label_descriptions: expect.any(String) },
    });
    expect([...Object.keys(item!.fields), ...Object.keys(item!.volatile ?? {})]).toEqual([
      ...ISSUE_PROMPT_FIELDS,
    ]);
  });

  it('show a closed state, a bot author and empty values as GitHub reports them', async () => {
    const items = await discover('state = "all"');
    const closed = items.find((i) => i.id === '3')!;
    expect(closed.fields.issue_state).toBe('closed');
    const bot = items.find((i) => i.id === '5')!;
    expect(bot.fields).toMatchObject({ issue_author: 'dependabot', issue_body: '', issue_milestone: null });
    const unassigned = items.find((i) => i.id === '2')!;
    expect(unassigned.fields.issue_assignees).toEqual([]);
  });

  it('leave out what changes on its own: a new comment does not change the item', async () => {
    const before = (await discover('labels = "dependencies"'))[0];
    world.addComment('acme/api', 5, { body: 'any news?', author: 'carol' });
    const after = (await discover('labels = "dependencies"'))[0];
    expect(after).toEqual(before);
  });

  it('batch_size caps what one poll returns', async () => {
    expect(await numbers('', { limit: 2 })).toEqual([1, 2]);
    expect(sim.requests.at(-1)?.variables).toMatchObject({ first: 2 });
  });
});

describe('github-issues: the seed-004 filters (issue 29), on the simulator', () => {
  it('labels_any: at least one of the labels, beside every required one', async () => {
    expect(await numbers('labels_any = ["docs", "dependencies"]')).toEqual([2, 5]);
    expect(await numbers('labels = "agent-ready"\nlabels_any = ["docs", "blocked"]')).toEqual([2, 4]);
    expect(await numbers('labels_any = ["good first issue", "bug"]', { repo: 'acme/web' })).toEqual([1, 2]);
  });

  it('exclude_authors leaves out each login', async () => {
    expect(await numbers('exclude_authors = ["bob", "app/dependabot"]')).toEqual([2, 4]);
  });

  it('title: words in the title only', async () => {
    expect(await numbers('title = "crash"')).toEqual([1, 4]);
    expect(await numbers('title = "cache"')).toEqual([]);
  });

  it('validation refuses a title with a quote and an author that is no login', () => {
    expect(() => automation('title = "say \\"hi\\""')).toThrow('must not contain `"`');
    expect(() => automation('exclude_authors = ["bob smith"]')).toThrow('a GitHub login');
  });

  it('--explain shows the query they compile to', () => {
    const resolved = automation('labels_any = ["docs", "bug"]\nexclude_authors = ["bob"]\ntitle = "crash"');
    const lines = resolved.trigger.explain(resolved, new Date(0));
    expect(lines.find((l) => l.label === 'search query')?.value).toBe(
      'repo:acme/api is:issue is:open label:docs,bug -author:bob "crash" in:title sort:created-asc',
    );
  });
});

describe('github-issues: ignore_bots (issue 29), on the simulator', () => {
  it('leaves out Dependabot’s issue, and says so in --explain', async () => {
    expect(await numbers('ignore_bots = true')).toEqual([1, 2, 4, 6, 8]);
    const resolved = automation('ignore_bots = true');
    const lines = resolved.trigger.explain(resolved, new Date(0));
    expect(lines.find((l) => l.label === 'post-filters')?.value).toBe('authors that are bots left out');
  });

  it('leaves out, after the search, a bot the query does not name', async () => {
    expect(await numbers('', { repo: 'acme/bots' })).toEqual([1, 2]);
    expect(await numbers('ignore_bots = true', { repo: 'acme/bots' })).toEqual([2]);
  });
});
