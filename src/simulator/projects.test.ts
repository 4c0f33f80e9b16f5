import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

const TOKEN = 'project-token';
let sim: Simulator;

const BOARD = `query ($login: String!, $number: Int!, $after: String) {
  organization(login: $login) { projectV2(number: $number) { id title number url
    field(name: "Status") { ... on ProjectV2SingleSelectField { id name options { id name } } }
    items(first: 100, after: $after) { totalCount pageInfo { hasNextPage endCursor }
      nodes { id type isArchived
        content { __typename ... on Issue { number title } ... on PullRequest { number headRefName }
          ... on DraftIssue { title body } }
        fieldValueByName(name: "Status") { ... on ProjectV2ItemFieldSingleSelectValue { name optionId } } } } } } }`;

interface BoardItem {
  id: string;
  type: string;
  isArchived: boolean;
  content: Record<string, unknown> | null;
  fieldValueByName: { name: string; optionId: string } | null;
}
interface Board {
  organization: {
    projectV2: {
      id: string;
      title: string;
      number: number;
      url: string;
      field: { id: string; name: string; options: { id: string; name: string }[] };
      items: {
        totalCount: number;
        pageInfo: { hasNextPage: boolean; endCursor: string };
        nodes: BoardItem[];
      };
    };
  };
}

beforeAll(async () => {
  const world = new SimWorld();
  world.addToken(TOKEN, 'alice');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Ready issue' });
  world.addPullRequest('acme/api', { title: 'Doing PR', headRefName: 'doing' });
  world.addIssue('acme/api', { title: 'Shipped long ago' });
  world.addIssue('acme/api', { title: 'Not triaged' });
  const board = world.addProject('acme', {
    title: 'Roadmap',
    statusOptions: ['Todo', 'In Progress', 'Done'],
  });
  world.addProjectItem(board, 'acme/api#1', { status: 'Todo' });
  world.addProjectItem(board, world.pullRequest('acme/api', 2)!, { status: 'in progress' });
  world.addProjectItem(
    board,
    { draft: { title: 'Write the launch post', body: 'Draft only' } },
    { status: 'Done' },
  );
  world.addProjectItem(board, 'acme/api#3', { status: 'Done', archived: true });
  world.addProjectItem(board, 'acme/api#4');
  const big = world.addProject('acme', { title: 'Backlog' });
  for (let i = 0; i < 150; i += 1)
    world.addProjectItem(big, { draft: { title: `Idea ${i + 1}` } }, { status: 'Todo' });
  world.addUser('carol');
  world.addProject('carol', { title: 'Personal', number: 3 });
  sim = await startSimulator({ world });
});

afterAll(async () => {
  await sim.close();
});

describe('Projects v2', () => {
  test('an organization board lists items with their Status, content and archived flag', async () => {
    const reply = await postGraphQL<Board>(sim.url, TOKEN, BOARD, { login: 'acme', number: 1 });
    expect(reply.body.errors).toBeUndefined();
    const project = reply.body.data!.organization.projectV2;
    expect(project).toMatchObject({
      title: 'Roadmap',
      number: 1,
      url: 'https://github.com/orgs/acme/projects/1',
    });
    expect(project.field.name).toBe('Status');
    const optionIds = Object.fromEntries(project.field.options.map((o) => [o.name, o.id]));
    expect(Object.keys(optionIds)).toEqual(['Todo', 'In Progress', 'Done']);
    expect(project.items.totalCount).toBe(5);
    expect(
      project.items.nodes.map((item) => [item.type, item.isArchived, item.content, item.fieldValueByName]),
    ).toEqual([
      [
        'ISSUE',
        false,
        { __typename: 'Issue', number: 1, title: 'Ready issue' },
        { name: 'Todo', optionId: optionIds.Todo },
      ],
      [
        'PULL_REQUEST',
        false,
        { __typename: 'PullRequest', number: 2, headRefName: 'doing' },
        { name: 'In Progress', optionId: optionIds['In Progress'] },
      ],
      [
        'DRAFT_ISSUE',
        false,
        { __typename: 'DraftIssue', title: 'Write the launch post', body: 'Draft only' },
        { name: 'Done', optionId: optionIds.Done },
      ],
      [
        'ISSUE',
        true,
        { __typename: 'Issue', number: 3, title: 'Shipped long ago' },
        { name: 'Done', optionId: optionIds.Done },
      ],
      ['ISSUE', false, { __typename: 'Issue', number: 4, title: 'Not triaged' }, null],
    ]);
  });

  test('moving an item to another column shows on the next read', async () => {
    const item = sim.world.project('acme', 1)!.items[0]!;
    sim.world.setProjectItemStatus(item, 'Done');
    const reply = await postGraphQL<{ node: { fieldValueByName: { name: string } } }>(
      sim.url,
      TOKEN,
      'query ($id: ID!) { node(id: $id) { ... on ProjectV2Item { fieldValueByName(name: "Status") { ... on ProjectV2ItemFieldSingleSelectValue { name } } } } }',
      { id: item.id },
    );
    expect(reply.body.data?.node.fieldValueByName).toEqual({ name: 'Done' });
    sim.world.setProjectItemStatus(item, 'Todo');
  });

  test('items page past 100 with cursors', async () => {
    const first = await postGraphQL<Board>(sim.url, TOKEN, BOARD, { login: 'acme', number: 2 });
    const page1 = first.body.data!.organization.projectV2.items;
    expect(page1.nodes).toHaveLength(100);
    expect(page1.pageInfo.hasNextPage).toBe(true);
    const second = await postGraphQL<Board>(sim.url, TOKEN, BOARD, {
      login: 'acme',
      number: 2,
      after: page1.pageInfo.endCursor,
    });
    const page2 = second.body.data!.organization.projectV2.items;
    expect(page2.nodes.map((n) => n.content?.title)).toEqual(
      Array.from({ length: 50 }, (_, i) => `Idea ${i + 101}`),
    );
    expect(page2.pageInfo.hasNextPage).toBe(false);
  });

  test('a user board is found through user(login); unknown owners and numbers are NOT_FOUND', async () => {
    const user = await postGraphQL(
      sim.url,
      TOKEN,
      '{ user(login: "carol") { projectV2(number: 3) { title number } } }',
    );
    expect(user.body.data).toEqual({ user: { projectV2: { title: 'Personal', number: 3 } } });
    const noOrg = await postGraphQL(
      sim.url,
      TOKEN,
      '{ organization(login: "nobody") { projectV2(number: 1) { id } } }',
    );
    expect(noOrg.body.errors?.[0]).toMatchObject({
      type: 'NOT_FOUND',
      path: ['organization'],
      message: "Could not resolve to an Organization with the login of 'nobody'.",
    });
    const noBoard = await postGraphQL(
      sim.url,
      TOKEN,
      '{ organization(login: "acme") { projectV2(number: 9) { id } } }',
    );
    expect(noBoard.body).toMatchObject({
      data: { organization: { projectV2: null } },
      errors: [{ type: 'NOT_FOUND', message: 'Could not resolve to a ProjectV2 with the number 9.' }],
    });
  });

  test('search finds the issues and pull requests on a board with project:OWNER/NUMBER', async () => {
    const reply = await postGraphQL<{ search: { issueCount: number } }>(
      sim.url,
      TOKEN,
      '{ search(type: ISSUE, query: "project:acme/1 is:open", first: 10) { issueCount } }',
    );
    expect(reply.body.data?.search.issueCount).toBe(4);
  });
});
