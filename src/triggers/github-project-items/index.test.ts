import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../../config/load.js';
import type { AutomationFor } from '../../config/types.js';
import { FakeClock } from '../../core/clock.js';
import { GitHubGraphQLError } from '../../core/errors.js';
import type { Item, RunRecord, Task } from '../../core/types.js';
import { createGitHubClient, type GitHubClient } from '../../github/client.js';
import { staticTokenSource } from '../../github/token.js';
import { silentLogger } from '../../log.js';
import { type Simulator, startSimulator } from '../../simulator/server.js';
import type { SimProjectItem } from '../../simulator/world.js';
import { SimWorld } from '../../simulator/world.js';
import { runItemName, taskItemName } from '../registry.js';
import { noService } from '../service.js';
import { createGitHubProjectItemsSource, projectCardName } from './index.js';
import { PROJECT_ITEM_PROMPT_FIELDS } from './schema.js';

const TOKEN = 'project-items-trigger-token';
let sim: Simulator;
let world: SimWorld;
let client: GitHubClient;
const cards: Record<string, SimProjectItem> = {};

/**
 * Organization acme, project 1 (Status: Todo, Ready, In Progress, Done), in board order:
 *   api#1 issue Ready · api#2 PR Ready · draft "Sketch the CLI" Ready · web#1 issue Ready ·
 *   api#3 closed issue Ready · api#4 issue Ready (archived) · api#5 issue Todo · api#6 issue (no status) ·
 *   api#7 merged PR Ready
 * User alice, project 1: api#8 issue Ready. Organization acme, project 2: 150 issues in Ready.
 */
function buildWorld(): SimWorld {
  const w = new SimWorld();
  w.addToken(TOKEN, 'alice');
  w.addRepo('acme/api');
  w.addRepo('acme/web');
  w.addRepo('acme/bulk');
  w.addIssue('acme/api', {
    title: 'Ready issue',
    body: 'Do the thing.',
    author: 'bob',
    labels: ['agent-ready'],
    assignees: ['alice'],
    milestone: 'v1',
  });
  w.addPullRequest('acme/api', { title: 'Ready pull request', author: 'carol' });
  w.addIssue('acme/api', { title: 'Closed but still in Ready', state: 'CLOSED' });
  w.addIssue('acme/api', { title: 'Archived card' });
  w.addIssue('acme/api', { title: 'Still to do' });
  w.addIssue('acme/api', { title: 'No status yet' });
  w.addPullRequest('acme/api', { title: 'Merged work', state: 'MERGED' });
  w.addIssue('acme/api', { title: "Alice's own card" });
  w.addIssue('acme/web', { title: 'Web issue' });
  const board = w.addProject('acme', {
    title: 'Roadmap',
    statusOptions: ['Todo', 'Ready', 'In Progress', 'Done'],
  });
  cards.issue = w.addProjectItem(board, 'acme/api#1', { status: 'Ready' });
  cards.pr = w.addProjectItem(board, 'acme/api#2', { status: 'Ready' });
  cards.draft = w.addProjectItem(
    board,
    { draft: { title: 'Sketch the CLI', body: 'Flags first.', creator: 'carol' } },
    { status: 'Ready' },
  );
  cards.web = w.addProjectItem(board, 'acme/web#1', { status: 'Ready' });
  cards.closed = w.addProjectItem(board, 'acme/api#3', { status: 'Ready' });
  cards.archived = w.addProjectItem(board, 'acme/api#4', { status: 'Ready', archived: true });
  cards.todo = w.addProjectItem(board, 'acme/api#5', { status: 'Todo' });
  cards.none = w.addProjectItem(board, 'acme/api#6', { status: null });
  cards.merged = w.addProjectItem(board, 'acme/api#7', { status: 'Ready' });
  const personal = w.addProject('alice', { title: 'Personal', statusOptions: ['Ready', 'Done'] });
  cards.personal = w.addProjectItem(personal, 'acme/api#8', { status: 'Ready' });
  const bulk = w.addProject('acme', { title: 'Bulk', statusOptions: ['Ready'] });
  for (let i = 1; i <= 150; i += 1) {
    w.addIssue('acme/bulk', { title: `Bulk ${i}` });
    w.addProjectItem(bulk, `acme/bulk#${i}`, { status: 'Ready' });
  }
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

function automation(lines: string): AutomationFor<'github-project-items'> {
  const text = `[settings.github]
api_url = "${sim.url}"

[repositories.api]
remote = "https://github.com/acme/api.git"

[automations.board]
trigger_type = "github-project-items"
repository = "api"
prompt = "Work on \${item_title}"
${lines}
`;
  const [resolved] = loadSettingsFromText(text, '/tmp/curupira-board-test/settings.toml').settings
    .automations;
  if (resolved?.triggerType !== 'github-project-items')
    throw new Error('expected a github-project-items automation');
  return resolved;
}

async function discover(lines: string, limit = 100): Promise<Item[]> {
  const source = createGitHubProjectItemsSource(automation(lines), {
    github: () => client,
    clock: new FakeClock(),
    log: silentLogger(),
    service: noService,
  });
  return source.discover({ limit });
}

/** `owner/name#number` per card, or the title for a draft. */
async function refs(lines: string, limit = 100): Promise<string[]> {
  return (await discover(lines, limit)).map((item) =>
    item.fields.item_number === null
      ? `draft:${String(item.fields.item_title)}`
      : `${String(item.fields.item_repo)}#${String(item.fields.item_number)}`,
  );
}

const ACME_READY = 'project_owner = "acme"\nproject_number = 1\nstatus = "Ready"';

describe('github-project-items: the column', () => {
  it('finds open issues and pull requests in the Status column, in board order', async () => {
    expect(await refs(ACME_READY)).toEqual(['acme/api#1', 'acme/api#2', 'acme/web#1']);
  });

  it('matches the column name case-insensitively', async () => {
    expect(await refs('project_owner = "acme"\nproject_number = 1\nstatus = "ready"')).toEqual([
      'acme/api#1',
      'acme/api#2',
      'acme/web#1',
    ]);
  });

  it('another column, and an empty one', async () => {
    expect(await refs('project_owner = "acme"\nproject_number = 1\nstatus = "Todo"')).toEqual(['acme/api#5']);
    expect(await refs('project_owner = "acme"\nproject_number = 1\nstatus = "In Progress"')).toEqual([]);
  });

  it('a board with more than 100 cards is read page by page, up to batch_size', async () => {
    const lines = 'project_owner = "acme"\nproject_number = 2\nstatus = "Ready"';
    expect(await refs(lines, 120)).toEqual(Array.from({ length: 120 }, (_, i) => `acme/bulk#${i + 1}`));
    sim.resetRequests();
    const found = await refs(lines, 1000);
    expect(found).toEqual(Array.from({ length: 150 }, (_, i) => `acme/bulk#${i + 1}`));
    const pages = sim.requests.filter((r) => r.operationName === 'CurupiraOrganizationProjectItems');
    expect(pages.map((r) => r.variables?.first)).toEqual([100, 100]);
  });
});

describe('github-project-items: filters', () => {
  it('item_types picks the kinds of cards', async () => {
    expect(await refs(`${ACME_READY}\nitem_types = ["pull_request"]`)).toEqual(['acme/api#2']);
    expect(await refs(`${ACME_READY}\nitem_types = ["issue"]`)).toEqual(['acme/api#1', 'acme/web#1']);
    expect(await refs(`${ACME_READY}\nitem_types = ["draft_issue"]`)).toEqual(['draft:Sketch the CLI']);
    expect(await refs(`${ACME_READY}\nitem_types = ["issue", "pull_request", "draft_issue"]`)).toEqual([
      'acme/api#1',
      'acme/api#2',
      'draft:Sketch the CLI',
      'acme/web#1',
    ]);
  });

  it('repo keeps cards of one repository (drafts have none)', async () => {
    expect(
      await refs(`${ACME_READY}\nrepo = "acme/api"\nitem_types = ["issue", "pull_request", "draft_issue"]`),
    ).toEqual(['acme/api#1', 'acme/api#2']);
    expect(await refs(`${ACME_READY}\nrepo = "acme/web"`)).toEqual(['acme/web#1']);
  });

  it('state: closed takes closed and merged content; all takes both', async () => {
    expect(await refs(`${ACME_READY}\nstate = "closed"`)).toEqual(['acme/api#3', 'acme/api#7']);
    expect(await refs(`${ACME_READY}\nstate = "all"`)).toEqual([
      'acme/api#1',
      'acme/api#2',
      'acme/web#1',
      'acme/api#3',
      'acme/api#7',
    ]);
  });

  it('archived cards are skipped unless include_archived', async () => {
    expect(await refs(`${ACME_READY}\ninclude_archived = true`)).toEqual([
      'acme/api#1',
      'acme/api#2',
      'acme/web#1',
      'acme/api#4',
    ]);
  });

  it('batch_size caps what one poll returns', async () => {
    const items = await discover(ACME_READY, 2);
    expect(items.map((i) => i.fields.item_number)).toEqual(['1', '2']);
  });
});

describe('github-project-items: owners', () => {
  it('an organization board', async () => {
    await refs(ACME_READY);
    expect(sim.requests.map((r) => r.operationName)).toEqual(['CurupiraOrganizationProjectItems']);
  });

  it('a user board', async () => {
    expect(await refs('project_owner = "alice"\nproject_number = 1\nstatus = "Ready"')).toEqual([
      'acme/api#8',
    ]);
  });

  it('a user board is remembered as one: later polls make one request', async () => {
    const source = createGitHubProjectItemsSource(
      automation('project_owner = "alice"\nproject_number = 1\nstatus = "Ready"'),
      { github: () => client, clock: new FakeClock(), log: silentLogger(), service: noService },
    );
    await source.discover({ limit: 100 });
    sim.resetRequests();
    expect((await source.discover({ limit: 100 })).map((i) => i.fields.item_number)).toEqual(['8']);
    expect(sim.requests.map((r) => r.operationName)).toEqual(['CurupiraUserProjectItems']);
  });

  it('a missing project fails with an error that names it', async () => {
    for (const lines of [
      'project_owner = "acme"\nproject_number = 9\nstatus = "Ready"',
      'project_owner = "nobody"\nproject_number = 1\nstatus = "Ready"',
    ]) {
      const error = await discover(lines).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GitHubGraphQLError);
      expect((error as Error).message).toMatch(/project #\d of '(acme|nobody)' was not found/);
      expect((error as Error).message).toContain('read:project');
    }
  });
});

describe('github-project-items: items', () => {
  it('an issue card carries item_* fields from its content and the card', async () => {
    const [item] = await discover(`${ACME_READY}\nitem_types = ["issue"]`);
    const issue = world.issue('acme/api', 1)!;
    expect(item).toEqual({
      id: cards.issue!.id,
      title: 'Ready issue',
      url: 'https://github.com/acme/api/issues/1',
      body: 'Do the thing.',
      itemKey: `item:${cards.issue!.id}`,
      repo: 'acme/api',
      fields: {
        item_id: cards.issue!.id,
        item_type: 'issue',
        item_status: 'Ready',
        item_number: '1',
        item_title: 'Ready issue',
        item_body: 'Do the thing.',
        item_url: 'https://github.com/acme/api/issues/1',
        item_repo: 'acme/api',
        item_state: 'open',
        item_author: 'bob',
        item_labels: ['agent-ready'],
        item_assignees: ['alice'],
        item_milestone: 'v1',
        item_created_at: issue.createdAt,
        project_owner: 'acme',
        project_number: '1',
      },
    });
    expect(Object.keys(item!.fields)).toEqual([...PROJECT_ITEM_PROMPT_FIELDS]);
  });

  it('a pull request card and a draft card', async () => {
    const items = await discover(
      `${ACME_READY}\nitem_types = ["pull_request", "draft_issue"]\nstate = "all"`,
    );
    const pr = items.find((i) => i.id === cards.pr!.id)!;
    expect(pr.fields).toMatchObject({
      item_type: 'pull_request',
      item_number: '2',
      item_url: 'https://github.com/acme/api/pull/2',
      item_state: 'open',
      item_author: 'carol',
    });
    const merged = items.find((i) => i.id === cards.merged!.id)!;
    expect(merged.fields.item_state).toBe('merged');
    const draft = items.find((i) => i.id === cards.draft!.id)!;
    expect(draft).toMatchObject({
      url: 'https://github.com/orgs/acme/projects/1',
      body: 'Flags first.',
      itemKey: `item:${cards.draft!.id}`,
      fields: {
        item_type: 'draft_issue',
        item_status: 'Ready',
        item_number: null,
        item_title: 'Sketch the CLI',
        item_repo: null,
        item_state: 'open',
        item_author: 'carol',
        item_labels: [],
      },
    });
    expect(draft.repo).toBeUndefined();
  });

  it('a card that moves out of the column stops matching', async () => {
    world.setProjectItemStatus(cards.web!, 'Done');
    try {
      expect(await refs(ACME_READY)).toEqual(['acme/api#1', 'acme/api#2']);
    } finally {
      world.setProjectItemStatus(cards.web!, 'Ready');
    }
  });
});

describe('github-project-items: how a card is named', () => {
  it('by the issue or pull request it holds, a draft by its board; never by the card node id', async () => {
    const board = automation(`${ACME_READY}\nitem_types = ["issue", "pull_request", "draft_issue"]`);
    const items = await discover(`${ACME_READY}\nitem_types = ["issue", "pull_request", "draft_issue"]`);
    const task = (item: Item): Task => ({
      key: `k-${item.id}`,
      fingerprint: 'f',
      identity: {
        automationId: 'board',
        repo: item.repo ?? 'api',
        taskType: 'github-project-items',
        id: item.id,
      },
      item,
    });
    // Before a run (`run --dry-run`, the live status) and from a run's record (`runs`, the board).
    const names = items.map((item) => taskItemName(board, task(item)));
    expect(names).toEqual(['acme/api#1', 'acme/api#2', 'draft card on acme project #1', 'acme/web#1']);
    const record = (item: Item) =>
      ({
        repo: item.repo ?? 'api',
        itemId: item.id,
        itemUrl: item.url,
        taskType: 'github-project-items',
        automationId: 'board',
        scheduledFor: null,
      }) as unknown as RunRecord;
    expect(items.map((item) => runItemName(record(item), [board]))).toEqual(names);
    expect(items.map((item) => runItemName(record(item)))).toEqual(names);
    // A user's board, and an address that says nothing: the card's own id, said to be a card.
    expect(
      projectCardName({
        repo: 'api',
        itemId: 'PVTI_x',
        scheduledFor: null,
        itemUrl: 'https://github.com/users/alice/projects/3',
      }),
    ).toBe('draft card on alice project #3');
    expect(projectCardName({ repo: 'api', itemId: 'PVTI_x', scheduledFor: null })).toBe('card PVTI_x');
  });
});
