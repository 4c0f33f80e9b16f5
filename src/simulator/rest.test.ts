import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

const TOKEN = 'rest-token';
let sim: Simulator;

function api(path: string, init: { method?: string; body?: unknown; token?: string | null } = {}) {
  const headers: Record<string, string> = { accept: 'application/vnd.github+json' };
  if (init.token !== null) headers.authorization = `token ${init.token ?? TOKEN}`;
  return fetch(`${sim.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body:
      init.body === undefined
        ? undefined
        : typeof init.body === 'string'
          ? init.body
          : JSON.stringify(init.body),
  });
}

beforeAll(async () => {
  const world = new SimWorld();
  world.addUser('alice', { name: 'Alice Liddell' });
  world.addToken(TOKEN, 'alice');
  world.addRepo('acme/api');
  world.addIssue('acme/api', {
    title: 'Crash',
    body: 'Boom',
    labels: ['bug'],
    author: 'bob',
    assignees: ['alice'],
  });
  world.addPullRequest('acme/api', { title: 'Fix', draft: true });
  world.addIssue('acme/api', { title: 'Chatty', comments: ['one', 'two', 'three'] });
  sim = await startSimulator({ world });
});

afterAll(async () => {
  await sim.close();
});

describe('authentication', () => {
  test('GET /user answers for the token, with either auth scheme', async () => {
    const response = await api('/user');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ login: 'alice', name: 'Alice Liddell', type: 'User' });
    const bearer = await fetch(`${sim.url}/user`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bearer.status).toBe(200);
  });

  test('an unknown token is 401 Bad credentials; no token is 401 too', async () => {
    const bad = await api('/user', { token: 'nope' });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({
      message: 'Bad credentials',
      documentation_url: 'https://docs.github.com/rest',
      status: '401',
    });
    expect(bad.headers.get('x-ratelimit-limit')).toBe('60');
    const none = await api('/user', { token: null });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ message: 'Requires authentication' });
    const graphql = await postGraphQL(sim.url, 'nope', '{ viewer { login } }');
    expect(graphql.status).toBe(401);
    expect(graphql.body.message).toBe('Bad credentials');
  });

  test('tokens never reach the request log', async () => {
    await api('/user');
    expect(JSON.stringify(sim.requests)).not.toContain(TOKEN);
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/user', status: 200, login: 'alice' });
  });
});

describe('repositories and issues', () => {
  test('GET a repository; an unknown one is GitHub 404', async () => {
    const response = await api('/repos/acme/api');
    expect(await response.json()).toMatchObject({
      full_name: 'acme/api',
      name: 'api',
      default_branch: 'main',
      owner: { login: 'acme', type: 'Organization' },
      private: false,
    });
    const missing = await api('/repos/acme/nope');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest',
      status: '404',
    });
  });

  test('GET an issue in snake_case; a pull request is an issue with pull_request', async () => {
    const issue = (await (await api('/repos/acme/api/issues/1')).json()) as Record<string, unknown>;
    expect(issue).toMatchObject({
      number: 1,
      title: 'Crash',
      body: 'Boom',
      state: 'open',
      html_url: 'https://github.com/acme/api/issues/1',
      user: { login: 'bob' },
      labels: [{ name: 'bug' }],
      assignees: [{ login: 'alice' }],
      comments: 0,
    });
    expect(issue.pull_request).toBeUndefined();
    const pr = (await (await api('/repos/acme/api/issues/2')).json()) as Record<string, unknown>;
    expect(pr).toMatchObject({ number: 2, draft: true, html_url: 'https://github.com/acme/api/pull/2' });
    expect(pr.pull_request).toMatchObject({ merged_at: null });
    expect((await api('/repos/acme/api/issues/99')).status).toBe(404);
  });

  test('comments are listed in pages with a Link header, and a new one shows up in GraphQL', async () => {
    const page = await api('/repos/acme/api/issues/3/comments?per_page=2');
    expect(((await page.json()) as { body: string }[]).map((c) => c.body)).toEqual(['one', 'two']);
    expect(page.headers.get('link')).toContain('page=2>; rel="next"');
    const created = await api('/repos/acme/api/issues/3/comments', {
      method: 'POST',
      body: { body: 'Working on it' },
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ body: 'Working on it', user: { login: 'alice' } });
    const reply = await postGraphQL<{ repository: { issue: { comments: { nodes: { body: string }[] } } } }>(
      sim.url,
      TOKEN,
      '{ repository(owner: "acme", name: "api") { issue(number: 3) { comments(last: 1) { nodes { body } } } } }',
    );
    expect(reply.body.data?.repository.issue.comments.nodes).toEqual([{ body: 'Working on it' }]);
    const empty = await api('/repos/acme/api/issues/3/comments', { method: 'POST', body: {} });
    expect(empty.status).toBe(422);
  });

  test('labels are added (created when new), listed and removed; removing a missing one is 404', async () => {
    const added = await api('/repos/acme/api/issues/1/labels', {
      method: 'POST',
      body: { labels: ['in-progress'] },
    });
    expect(((await added.json()) as { name: string }[]).map((l) => l.name)).toEqual(['bug', 'in-progress']);
    expect(sim.world.label('acme/api', 'in-progress')).toBeDefined();
    const removed = await api('/repos/acme/api/issues/1/labels/in-progress', { method: 'DELETE' });
    expect(((await removed.json()) as { name: string }[]).map((l) => l.name)).toEqual(['bug']);
    const again = await api('/repos/acme/api/issues/1/labels/in-progress', { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ message: 'Label does not exist' });
    const listed = await api('/repos/acme/api/issues/1/labels');
    expect(((await listed.json()) as { name: string }[]).map((l) => l.name)).toEqual(['bug']);
  });

  test('PATCH closes an issue and replaces its labels; GraphQL sees the change', async () => {
    const patched = await api('/repos/acme/api/issues/1', {
      method: 'PATCH',
      body: { state: 'closed', state_reason: 'not_planned', labels: ['wontfix'], title: 'Crash (old)' },
    });
    expect(await patched.json()).toMatchObject({
      state: 'closed',
      state_reason: 'not_planned',
      title: 'Crash (old)',
      labels: [{ name: 'wontfix' }],
    });
    const reply = await postGraphQL<{ repository: { issue: Record<string, unknown> } }>(
      sim.url,
      TOKEN,
      '{ repository(owner: "acme", name: "api") { issue(number: 1) { state stateReason closedAt } } }',
    );
    expect(reply.body.data?.repository.issue).toMatchObject({ state: 'CLOSED', stateReason: 'NOT_PLANNED' });
    expect(reply.body.data?.repository.issue.closedAt).not.toBeNull();
    const invalid = await api('/repos/acme/api/issues/1', { method: 'PATCH', body: { state: 'shut' } });
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toMatchObject({
      message: 'Validation Failed',
      errors: [{ resource: 'Issue', code: 'invalid', field: 'state' }],
    });
  });

  test('a body that is not JSON is 400 Problems parsing JSON', async () => {
    const response = await api('/repos/acme/api/issues/1', { method: 'PATCH', body: '{state:' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ message: 'Problems parsing JSON' });
  });
});
