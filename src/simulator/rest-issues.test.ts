/** `GET` and `POST /repos/{o}/{r}/issues` (the run log's issues), with GitHub's shapes. */
import type { components } from '@octokit/openapi-types';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { SimWorld } from './world.js';

const TOKEN = 'issues-token';
let sim: Simulator;
let world: SimWorld;

async function api(path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `bearer ${TOKEN}`, accept: 'application/vnd.github+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as unknown };
}

beforeEach(async () => {
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Crash', author: 'bob', labels: ['bug'] });
  sim = await startSimulator({ world });
});
afterEach(async () => {
  await sim.close();
});

describe('issues', () => {
  test('create an issue with labels (missing ones created); list by label, creator and state', async () => {
    const created = await api('/repos/acme/api/issues', 'POST', {
      title: 'curupira run log',
      body: 'entries <!-- m -->',
      labels: ['agent:log'],
    });
    expect(created.status).toBe(201);
    const issue = created.body as Pick<
      components['schemas']['issue'],
      'number' | 'title' | 'body' | 'state' | 'labels' | 'user'
    >;
    expect(issue).toMatchObject({
      number: 2,
      title: 'curupira run log',
      body: 'entries <!-- m -->',
      state: 'open',
    });
    expect(issue.user?.login).toBe('curupira-bot');
    expect(issue.labels.map((l) => (typeof l === 'string' ? l : l.name))).toEqual(['agent:log']);
    expect(created.headers.get('location')).toBe(`${sim.url}/repos/acme/api/issues/2`);
    expect(world.label('acme/api', 'agent:log')).toBeDefined();

    const mine = await api('/repos/acme/api/issues?labels=agent:log&creator=curupira-bot&state=all');
    expect((mine.body as { number: number }[]).map((i) => i.number)).toEqual([2]);
    const all = await api('/repos/acme/api/issues');
    expect((all.body as { number: number }[]).map((i) => i.number)).toEqual([2, 1]);
    world.closeIssue('acme/api', 2);
    expect(((await api('/repos/acme/api/issues')).body as { number: number }[]).map((i) => i.number)).toEqual(
      [1],
    );
    const closed = await api('/repos/acme/api/issues?state=closed');
    expect((closed.body as { number: number }[]).map((i) => i.number)).toEqual([2]);
  });

  test('a title is required', async () => {
    const refused = await api('/repos/acme/api/issues', 'POST', { body: 'no title' });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      message: 'Validation Failed',
      errors: [{ field: 'title', code: 'missing_field' }],
    });
  });
});
