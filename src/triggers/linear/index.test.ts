import { parse, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinearStandIn, linearSchema } from '../../../test/helpers/linear-stand-in.js';
import { FakeClock } from '../../core/clock.js';
import { SourceAuthError, SourceRateLimitError } from '../../core/errors.js';
import type { Item, Task } from '../../core/types.js';
import { silentLogger } from '../../log.js';
import { createServiceKit } from '../service.js';
import { createLinearSource, linearTrigger } from './index.js';
import { LINEAR_OPERATIONS } from './queries.js';
import { LinearAutomation, type LinearResolved } from './schema.js';

const KEY = 'lin_api_standInKeyForTests00000000000001';
let linear: LinearStandIn;
let url: string;

beforeAll(async () => {
  linear = new LinearStandIn(KEY, 'u-ada');
  linear.addUser({ id: 'u-ada', name: 'Ada', displayName: 'ada', email: 'ada@acme.test', admin: true });
  linear.addUser({ id: 'u-bob', name: 'Bob', displayName: 'bob', email: 'bob@acme.test' });
  linear.addUser({ id: 'u-gus', name: 'Gus', displayName: 'gus', email: 'gus@acme.test', guest: true });
  const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString();
  linear.addIssue({
    team: 'ENG',
    number: 1,
    title: 'Crash on start',
    labels: ['bug'],
    priority: 1,
    assigneeId: 'u-ada',
    creatorId: 'u-bob',
    project: 'Launch',
    createdAt: at(1),
  });
  linear.addIssue({
    team: 'ENG',
    number: 2,
    title: 'Slow page',
    labels: ['perf', 'bug'],
    priority: 3,
    assigneeId: 'u-bob',
    creatorId: 'u-gus',
    createdAt: at(2),
    comments: [
      { body: 'Same here', createdAt: at(3), userId: 'u-gus' },
      { body: 'Looking', createdAt: at(4), userId: 'u-ada' },
    ],
  });
  linear.addIssue({
    team: 'ENG',
    number: 3,
    title: 'Done already',
    labels: ['bug'],
    state: { name: 'Done', type: 'completed' },
    createdAt: at(3),
  });
  linear.addIssue({
    team: 'ENG',
    number: 4,
    title: 'In review',
    state: { name: 'In Review', type: 'started' },
    priority: 2,
    createdAt: at(4),
  });
  linear.addIssue({ team: 'OPS', number: 1, title: 'Other team', labels: ['bug'], createdAt: at(5) });
  url = await linear.start();
});
afterAll(async () => {
  await linear.stop();
});

function automation(table: Record<string, unknown>, id = 'lin'): LinearResolved {
  const config = LinearAutomation.parse({ repository: 'api', prompt: 'x', api_url: url, ...table });
  return { id, config, triggerType: 'linear', trigger: linearTrigger } as unknown as LinearResolved;
}

function context(env: Record<string, string> = { LINEAR_API_KEY: KEY }) {
  return {
    github: () => {
      throw new Error('no GitHub here');
    },
    clock: new FakeClock(),
    log: silentLogger(),
    service: createServiceKit({ env, dir: '/nonexistent' }),
  };
}

async function ids(table: Record<string, unknown>, limit = 100): Promise<string[]> {
  const items = await createLinearSource(automation(table), context()).discover({ limit });
  return items.map((i: Item) => i.id).sort();
}

describe('the Linear stand-in', () => {
  it('accepts every operation curupira sends: each is valid against Linear’s published schema', () => {
    for (const operation of LINEAR_OPERATIONS) expect(validate(linearSchema(), parse(operation))).toEqual([]);
  });

  it('refuses a query Linear would refuse (a field Linear has not)', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query Q { issues { nodes { identifier storyPoints } } }' }),
    });
    const body = (await response.json()) as { errors: { message: string }[] };
    expect(response.status).toBe(400);
    expect(body.errors[0]!.message).toContain('storyPoints');
  });

  it('refuses a filter Linear’s schema does not define', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query Q($filter: IssueFilter) { issues(filter: $filter) { nodes { identifier } } }',
        variables: { filter: { teamKey: 'ENG' } },
      }),
    });
    expect(response.status).toBe(400);
  });
});

describe('Linear discovery', () => {
  it('finds the open issues of a team (completed and canceled states left out)', async () => {
    expect(await ids({ team: 'ENG' })).toEqual(['ENG-1', 'ENG-2', 'ENG-4']);
  });

  it('filters by project, state, labels (any, all), assignee and minimum priority', async () => {
    expect(await ids({ team: 'ENG', project: 'Launch' })).toEqual(['ENG-1']);
    expect(await ids({ team: 'ENG', state: 'Done' })).toEqual(['ENG-3']);
    expect(await ids({ team: 'ENG', labels: ['perf', 'bug'] })).toEqual(['ENG-1', 'ENG-2']);
    expect(await ids({ team: 'ENG', labels: ['perf', 'bug'], labels_match: 'all' })).toEqual(['ENG-2']);
    expect(await ids({ team: 'ENG', assignee: 'bob@acme.test' })).toEqual(['ENG-2']);
    expect(await ids({ team: 'ENG', assignee: 'me' })).toEqual(['ENG-1']);
    expect(await ids({ team: 'ENG', assignee: 'none' })).toEqual(['ENG-4']);
    expect(await ids({ team: 'ENG', min_priority: 'high' })).toEqual(['ENG-1', 'ENG-4']);
  });

  it('gives the prompt fields, with the state kept out of the fingerprint', async () => {
    const [item] = await createLinearSource(
      automation({ team: 'ENG', project: 'Launch' }),
      context(),
    ).discover({ limit: 5 });
    expect(item!.itemKey).toBe('linear:ENG-1');
    expect(item!.fields).toMatchObject({
      linear_identifier: 'ENG-1',
      linear_title: 'Crash on start',
      linear_team: 'ENG',
      linear_project: 'Launch',
      linear_labels: ['bug'],
      linear_priority: 'Urgent',
      linear_assignee: 'ada',
      linear_author: 'bob',
    });
    expect(item!.volatile).toEqual({ linear_state: 'Todo' });
  });
});

describe('Linear paging and rate limits', () => {
  const paged = new LinearStandIn(KEY, 'u-1');
  let pagedUrl: string;
  beforeAll(async () => {
    for (let n = 1; n <= 120; n += 1)
      paged.addIssue({
        team: 'BIG',
        number: n,
        title: `Issue ${n}`,
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      });
    pagedUrl = await paged.start();
  });
  afterAll(async () => {
    await paged.stop();
  });
  const source = () => createLinearSource(automation({ team: 'BIG', api_url: pagedUrl }), context());

  it('reads page after page until the limit, and every page when asked for all', async () => {
    paged.requests.length = 0;
    let total: { matching: number; examined: number } | undefined;
    const all = await source().discover({
      limit: 500,
      onTotal: (r) => {
        total = r;
      },
    });
    expect(all).toHaveLength(120);
    expect(new Set(all.map((i) => i.id)).size).toBe(120);
    expect(paged.requests.map((r) => r.variables.first)).toEqual([50, 50, 50]);
    expect(total).toEqual({ matching: 120, examined: 120 });
    paged.requests.length = 0;
    expect(await source().discover({ limit: 10 })).toHaveLength(10);
    expect(paged.requests).toHaveLength(1);
  });

  it('pages past items already handled', async () => {
    const skip = new Set(Array.from({ length: 60 }, (_, i) => `BIG-${120 - i}`));
    const found = await source().discover({ limit: 5, wanted: (item) => !skip.has(item.id) });
    expect(found.map((i) => i.id)).toEqual(['BIG-60', 'BIG-59', 'BIG-58', 'BIG-57', 'BIG-56']);
  });

  it('stops before a page Linear would refuse, saying when to come back', async () => {
    paged.requestsLeft = 1;
    try {
      const error = await source()
        .discover({ limit: 500 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceRateLimitError);
      expect((error as SourceRateLimitError).resetAt?.getTime()).toBe(paged.resetAt);
      // Exactly one request was sent: the second page was not asked for.
      expect(paged.requestsLeft).toBe(0);
    } finally {
      paged.requestsLeft = undefined;
    }
  });

  it('turns Linear’s RATELIMITED answer into a rate-limit error with its reset', async () => {
    paged.requestsLeft = 0;
    try {
      const error = await source()
        .discover({ limit: 5 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceRateLimitError);
      expect((error as Error).message).toContain(new Date(paged.resetAt).toISOString());
    } finally {
      paged.requestsLeft = undefined;
    }
  });
});

describe('Linear credentials', () => {
  it('a refused key: a clear error naming where it came from, never the key', async () => {
    const wrong = 'lin_api_wrongKeyThatMustNeverBePrinted0001';
    const error = await createLinearSource(automation({ team: 'ENG' }), context({ LINEAR_API_KEY: wrong }))
      .discover({ limit: 5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceAuthError);
    expect((error as Error).message).toContain(
      'Linear refused the API key read from the LINEAR_API_KEY environment variable',
    );
    expect((error as Error).message).not.toContain(wrong);
    expect(linear.requests.at(-1)!.authorization).toBe(wrong);
  });

  it('no key: says which variable and file were looked at', async () => {
    const error = await createLinearSource(automation({ team: 'ENG', api_key_env: 'MY_LINEAR' }), context({}))
      .discover({ limit: 5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceAuthError);
    expect((error as Error).message).toBe(
      'the Linear API key is missing: the MY_LINEAR environment variable is not set and no file is named',
    );
  });
});

describe('Linear screening', () => {
  it('reads the author and comments, with workspace roles on the trust ladder', async () => {
    const lin = automation({ team: 'ENG' }, 'screened');
    const [item] = (await createLinearSource(lin, context()).discover({ limit: 10 })).filter(
      (i) => i.id === 'ENG-2',
    );
    const hook = linearTrigger.screening;
    if (!hook || !('target' in hook)) throw new Error('the Linear trigger is screened');
    const task = {
      item: item!,
      key: 'k',
      fingerprint: 'f',
      identity: { automationId: 'screened', repo: 'api', taskType: 'linear', id: 'ENG-2' },
    } as Task;
    const target = hook.target(lin, task);
    expect(target.author).toBe('gus');
    const read = await target.read!();
    expect(read.author).toEqual({ login: 'gus', bot: false, association: 'NONE' });
    expect(read.comments.map((c) => [c.author?.login, c.author?.association, c.body])).toEqual([
      ['gus', 'NONE', 'Same here'],
      ['ada', 'OWNER', 'Looking'],
    ]);
  });
});
