import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  boardConfigSchema,
  JiraStandIn,
  jiraSchema,
  operationSchema,
} from '../../../test/helpers/jira-stand-in.js';
import { FakeClock } from '../../core/clock.js';
import { SourceAuthError, SourceRateLimitError } from '../../core/errors.js';
import type { Task } from '../../core/types.js';
import { silentLogger } from '../../log.js';
import { createServiceKit } from '../service.js';
import { adfText, createJiraSource, JIRA_FIELDS, jiraTrigger } from './index.js';
import { compileJql, JiraAutomation, type JiraResolved } from './schema.js';

const EMAIL = 'bot@acme.test';
const TOKEN = 'ATATT3xFfGF0standInJiraTokenNeverPrinted01';
let jira: JiraStandIn;
let url: string;
const clock = new FakeClock(Date.parse('2026-03-01T00:00:00Z'));

beforeAll(async () => {
  jira = new JiraStandIn(EMAIL, TOKEN, 'acc-bot');
  jira.users.set('acc-bot', { accountId: 'acc-bot', displayName: 'curupira', accountType: 'atlassian' });
  jira.users.set('acc-ada', { accountId: 'acc-ada', displayName: 'Ada', accountType: 'atlassian' });
  jira.users.set('acc-cus', { accountId: 'acc-cus', displayName: 'Customer', accountType: 'customer' });
  const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString();
  jira.issues.push(
    {
      key: 'ENG-1',
      summary: 'Crash',
      issueType: 'Bug',
      labels: ['agent', 'p1'],
      components: ['api'],
      assignee: 'acc-bot',
      reporter: 'acc-ada',
      created: at(1),
      description: 'Line one\nLine two',
    },
    {
      key: 'ENG-2',
      summary: 'Slow',
      issueType: 'Task',
      labels: ['agent'],
      components: ['web'],
      reporter: 'acc-cus',
      created: at(2),
      comments: [
        { author: 'acc-cus', body: 'me too', created: at(3) },
        { author: 'acc-ada', body: 'on it', created: at(4) },
      ],
    },
    { key: 'ENG-3', summary: 'Done', status: 'Done', category: 'done', labels: ['agent'], created: at(3) },
    {
      key: 'ENG-4',
      summary: 'Review',
      status: 'In Review',
      category: 'indeterminate',
      assignee: 'acc-ada',
      created: at(4),
    },
    { key: 'OPS-1', summary: 'Other project', labels: ['agent'], created: at(5) },
  );
  jira.boards.set(12, {
    name: 'ENG board',
    project: 'ENG',
    columns: [
      { name: 'To Do', statuses: ['To Do'] },
      { name: 'Doing', statuses: ['In Progress', 'In Review'] },
      { name: 'Empty', statuses: [] },
      { name: 'Done', statuses: ['Done'] },
    ],
  });
  url = await jira.start();
});
afterAll(async () => {
  await jira.stop();
});

function automation(table: Record<string, unknown>, id = 'jira'): JiraResolved {
  const config = JiraAutomation.parse({
    repository: 'api',
    prompt: 'x',
    site_url: url,
    email: EMAIL,
    project: 'ENG',
    ...table,
  });
  return { id, config, triggerType: 'jira', trigger: jiraTrigger } as unknown as JiraResolved;
}

function context(env: Record<string, string> = { JIRA_API_TOKEN: TOKEN }) {
  return {
    github: () => {
      throw new Error('no GitHub here');
    },
    clock,
    log: silentLogger(),
    service: createServiceKit({ env, dir: '/nonexistent' }),
  };
}

async function keys(table: Record<string, unknown>): Promise<string[]> {
  return (await createJiraSource(automation(table), context()).discover({ limit: 100 })).map((i) => i.id);
}

describe('JQL from typed filters', () => {
  it('compiles each filter, every value quoted', () => {
    const config = automation({
      issue_types: ['Bug', 'Task'],
      statuses: 'To Do',
      labels: ['agent', 'p1'],
      components: ['api'],
      assignee: 'me',
    }).config;
    expect(compileJql(config)).toBe(
      'project = "ENG" AND issuetype in ("Bug", "Task") AND status in ("To Do") AND labels = "agent" AND labels = "p1" AND component in ("api") AND assignee = currentUser() ORDER BY created ASC',
    );
    expect(compileJql(automation({}).config)).toBe(
      'project = "ENG" AND statusCategory != Done ORDER BY created ASC',
    );
    expect(compileJql(automation({ labels: 'say "hi" \\ now', assignee: 'none' }).config)).toBe(
      'project = "ENG" AND statusCategory != Done AND labels = "say \\"hi\\" \\\\ now" AND assignee is EMPTY ORDER BY created ASC',
    );
  });

  it('refuses a value with a control character (no clause can be smuggled in)', () => {
    expect(() => automation({ labels: 'a"\nOR project = "X' })).toThrow(/control characters/);
  });
});

describe('the Jira stand-in', () => {
  it('checks request bodies against Jira’s description: a field Jira does not take is refused', async () => {
    const response = await fetch(`${url}/rest/api/3/search/jql`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${EMAIL}:${TOKEN}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ jql: 'project = "ENG"', startAt: 0 }),
    });
    expect(response.status).toBe(400);
  });

  it('checks its answers: a malformed one would not pass Jira’s schema', () => {
    const results = jiraSchema(operationSchema('post', '/rest/api/3/search/jql', 'response'));
    expect(results({ issues: [{ key: 'ENG-1', fields: {} }], isLast: true })).toBe(true);
    expect(results({ issues: 'ENG-1' })).toBe(false);
    expect(results({ issues: [], total: 3 })).toBe(false);
  });
});

describe('Jira discovery', () => {
  it('finds the project’s issues not done, oldest first, through each filter', async () => {
    expect(await keys({})).toEqual(['ENG-1', 'ENG-2', 'ENG-4']);
    expect(await keys({ issue_types: 'Bug' })).toEqual(['ENG-1']);
    expect(await keys({ statuses: ['Done', 'In Review'] })).toEqual(['ENG-3', 'ENG-4']);
    expect(await keys({ labels: ['agent', 'p1'] })).toEqual(['ENG-1']);
    expect(await keys({ components: ['web', 'db'] })).toEqual(['ENG-2']);
    expect(await keys({ assignee: 'me' })).toEqual(['ENG-1']);
    expect(await keys({ assignee: 'acc-ada' })).toEqual(['ENG-4']);
    expect(await keys({ assignee: 'none' })).toEqual(['ENG-2']);
    expect(jira.requests.at(-1)!.body).toMatchObject({ fields: JIRA_FIELDS, maxResults: 50 });
  });

  it('gives the prompt fields, the description as text and the status out of the fingerprint', async () => {
    const [item] = await createJiraSource(automation({ issue_types: 'Bug' }), context()).discover({
      limit: 5,
    });
    expect(item).toMatchObject({
      id: 'ENG-1',
      itemKey: 'jira:ENG-1',
      url: `${url}/browse/ENG-1`,
      body: 'Line one\nLine two',
      volatile: { jira_status: 'To Do' },
    });
    expect(item!.fields).toMatchObject({
      jira_key: 'ENG-1',
      jira_issue_type: 'Bug',
      jira_labels: ['agent', 'p1'],
      jira_components: ['api'],
      jira_reporter: 'Ada',
      jira_assignee: 'curupira',
    });
  });

  it('reads Atlassian Document Format as plain text', () => {
    const doc = {
      type: 'doc',
      content: [
        {
          type: 'paragraph',
          content: [{ type: 'text', text: 'a' }, { type: 'hardBreak' }, { type: 'text', text: 'b' }],
        },
        { type: 'paragraph', content: [{ type: 'text', text: 'c' }] },
      ],
    };
    expect(adfText(doc)).toBe('a\nb\nc');
  });
});

describe('a Jira board column', () => {
  it('compiles to the column’s status ids; explain shows where they come from', () => {
    const column = automation({ board: 12, column: 'Doing', labels: 'agent' }).config;
    expect(compileJql(column, ['10001', '10002'])).toBe(
      'project = "ENG" AND status in (10001, 10002) AND labels = "agent" ORDER BY created ASC',
    );
    expect(compileJql(column)).toBe(
      'project = "ENG" AND status in (<the status ids of column "Doing" on board 12>) AND labels = "agent" ORDER BY created ASC',
    );
    const lines = jiraTrigger.explain(automation({ board: 12, column: 'Doing' }), new Date());
    expect(lines.find((l) => l.label === 'Jira board column')?.value).toBe(
      `"Doing" of board 12: its statuses are read from ${url}/rest/agile/1.0/board/12/configuration at each poll`,
    );
  });

  it('finds the issues whose status the column holds, reading the board at each poll', async () => {
    jira.requests.length = 0;
    expect(await keys({ board: 12, column: 'doing' })).toEqual(['ENG-4']);
    expect(jira.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'get /rest/agile/1.0/board/12/configuration',
      'post /rest/api/3/search/jql',
    ]);
    expect((jira.requests[1]!.body as { jql: string }).jql).toBe(
      'project = "ENG" AND status in (10001, 10002) ORDER BY created ASC',
    );
    expect(await keys({ board: 12, column: 'Done' })).toEqual(['ENG-3']);
    expect(await keys({ board: 12, column: 'To Do', issue_types: 'Bug' })).toEqual(['ENG-1']);
  });

  it('a column with no status matches nothing, and searches nothing', async () => {
    jira.requests.length = 0;
    expect(await keys({ board: 12, column: 'Empty' })).toEqual([]);
    expect(jira.requests.map((r) => r.path)).toEqual(['/rest/agile/1.0/board/12/configuration']);
  });

  it('a column the board lacks, or a board that does not exist: an error naming what is there', async () => {
    await expect(keys({ board: 12, column: 'QA' })).rejects.toThrow(
      'Jira board ENG board (12) has no column "QA"; its columns: "To Do", "Doing", "Empty", "Done"',
    );
    await expect(keys({ board: 99, column: 'QA' })).rejects.toThrow(
      /Jira answered HTTP 404 to GET \/rest\/agile\/1\.0\/board\/99\/configuration: The requested board cannot be viewed/,
    );
  });

  it('the stand-in answers in Jira Software’s shape: a malformed configuration would not pass', () => {
    const validate = boardConfigSchema();
    expect(validate({ id: 12, columnConfig: { columns: [{ name: 'A', statuses: [{ id: '1' }] }] } })).toBe(
      true,
    );
    expect(validate({ id: '12' })).toBe(false);
    expect(validate({ columnConfig: { columns: [{ name: 'A', statusIds: ['1'] }] } })).toBe(false);
  });

  it('validation wants board and column together', () => {
    const problems: string[] = [];
    const resolve = (table: Record<string, unknown>) =>
      jiraTrigger.resolveTimezone(automation(table).config, {
        id: 'jira',
        defaultTimezone: 'UTC',
        problem: (key: string, message: string) => problems.push(`${key}: ${message}`),
      });
    resolve({ column: 'Doing' });
    resolve({ board: 12 });
    resolve({ board: 12, column: 'Doing' });
    expect(problems).toEqual([
      'board: column names a board column: give the board’s id with board = <id>',
      'column: board is read only for its column: name it with column = "…"',
    ]);
  });
});

describe('Jira paging, rate limits and credentials', () => {
  const big = new JiraStandIn(EMAIL, TOKEN, 'acc-bot');
  let bigUrl: string;
  beforeAll(async () => {
    for (let n = 1; n <= 120; n += 1)
      big.issues.push({
        key: `BIG-${n}`,
        summary: `Issue ${n}`,
        created: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      });
    bigUrl = await big.start();
  });
  afterAll(async () => {
    await big.stop();
  });
  const source = () => createJiraSource(automation({ project: 'BIG', site_url: bigUrl }), context());

  it('follows nextPageToken page after page', async () => {
    big.requests.length = 0;
    const all = await source().discover({ limit: 500 });
    expect(all.map((i) => i.id)).toEqual(Array.from({ length: 120 }, (_, i) => `BIG-${i + 1}`));
    const bodies = big.requests.map((r) => r.body as { nextPageToken?: string });
    expect(bodies).toHaveLength(3);
    expect(bodies[0]!.nextPageToken).toBeUndefined();
    expect(bodies[1]!.nextPageToken).toBeTruthy();
    expect(
      await source().discover({ limit: 5, wanted: (item) => Number(item.id.slice(4)) > 100 }),
    ).toHaveLength(5);
  });

  it('a 429 becomes a rate-limit error that says when to come back (Retry-After)', async () => {
    big.throttleNext = 1;
    const error = await source()
      .discover({ limit: 5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceRateLimitError);
    expect((error as SourceRateLimitError).resetAt?.getTime()).toBe(clock.now() + 30_000);
  });

  it('a refused token: a clear error naming where it came from, never the token', async () => {
    const wrong = 'ATATT3xFfGF0wrongJiraTokenNeverPrinted0002';
    const error = await createJiraSource(automation({}), context({ JIRA_API_TOKEN: wrong }))
      .discover({ limit: 5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceAuthError);
    expect((error as Error).message).toBe(
      `Jira refused the API token read from the JIRA_API_TOKEN environment variable for ${EMAIL} (HTTP 401)`,
    );
    expect((error as Error).message).not.toContain(wrong);
  });
});

describe('Jira screening and doctor', () => {
  it('reads the reporter and comments, site users trusted as members, customers not', async () => {
    const jiraAutomation = automation({}, 'screened');
    const items = await createJiraSource(jiraAutomation, context()).discover({ limit: 10 });
    const item = items.find((i) => i.id === 'ENG-2')!;
    const hook = jiraTrigger.screening;
    if (!hook || !('target' in hook)) throw new Error('the Jira trigger is screened');
    const task = {
      item,
      key: 'k',
      fingerprint: 'f',
      identity: { automationId: 'screened', repo: 'api', taskType: 'jira', id: 'ENG-2' },
    } as Task;
    const read = await hook.target(jiraAutomation, task).read!();
    expect(read.author).toEqual({ login: 'Customer', bot: false, association: 'NONE' });
    expect(read.comments.map((c) => [c.author?.login, c.author?.association, c.body])).toEqual([
      ['Customer', 'NONE', 'me too'],
      ['Ada', 'MEMBER', 'on it'],
    ]);
  });

  it('doctor names the token’s account and finds the project, or says it is missing', async () => {
    const ctx = { ...context(), automations: [], storeReadable: true };
    expect(await jiraTrigger.doctor.check(automation({}), ctx)).toEqual({
      ok: true,
      detail: 'Jira: the token belongs to curupira; project ENG (Project ENG) found',
    });
    expect(await jiraTrigger.doctor.check(automation({ project: 'NOPE' }), ctx)).toEqual({
      ok: false,
      detail: 'Jira: the token belongs to curupira, but project NOPE was not found',
    });
  });

  it('doctor reads the board column: its statuses, or that the board has no such column', async () => {
    const ctx = { ...context(), automations: [], storeReadable: true };
    expect(await jiraTrigger.doctor.check(automation({ board: 12, column: 'Doing' }), ctx)).toEqual({
      ok: true,
      detail:
        'Jira: the token belongs to curupira; project ENG (Project ENG) found; board ENG board (12) column "Doing" holds statuses 10001, 10002',
    });
    expect(await jiraTrigger.doctor.check(automation({ board: 12, column: 'QA' }), ctx)).toEqual({
      ok: false,
      detail:
        'Jira: the token belongs to curupira; project ENG (Project ENG) found, but Jira board ENG board (12) has no column "QA"; its columns: "To Do", "Doing", "Empty", "Done"',
    });
  });
});
