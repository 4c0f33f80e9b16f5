import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { type Simulator, startSimulator } from './server.js';
import { SimWorld } from './world.js';

const TOKEN = 'writer-token';
let sim: Simulator;
let world: SimWorld;
let clock: number;

async function api(path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `bearer ${TOKEN}`, accept: 'application/vnd.github+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? undefined : JSON.parse(text),
  };
}

beforeEach(async () => {
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Crash', author: 'bob', labels: ['bug'] });
  clock = Date.UTC(2026, 4, 1, 12, 0, 0);
  sim = await startSimulator({ world, now: () => clock });
});

afterEach(async () => {
  await sim.close();
});

describe('issue comments', () => {
  test('create, list, edit and delete a comment, with GitHub shapes', async () => {
    const created = await api('/repos/acme/api/issues/1/comments', 'POST', { body: 'hello <!-- m -->' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ body: 'hello <!-- m -->', user: { login: 'curupira-bot' } });
    const id = created.body.id as number;
    expect(created.headers.get('location')).toBe(`${sim.url}/repos/acme/api/issues/comments/${id}`);

    const edited = await api(`/repos/acme/api/issues/comments/${id}`, 'PATCH', { body: 'edited' });
    expect(edited.status).toBe(200);
    expect(edited.body.body).toBe('edited');
    expect((await api(`/repos/acme/api/issues/comments/${id}`)).body.body).toBe('edited');
    const list = await api('/repos/acme/api/issues/1/comments');
    expect(list.body.map((c: { body: string }) => c.body)).toEqual(['edited']);

    expect((await api(`/repos/acme/api/issues/comments/${id}`, 'DELETE')).status).toBe(204);
    expect((await api('/repos/acme/api/issues/1/comments')).body).toEqual([]);
    expect((await api(`/repos/acme/api/issues/comments/${id}`, 'PATCH', { body: 'x' })).status).toBe(404);
    expect((await api(`/repos/acme/api/issues/comments/${id}`, 'DELETE')).status).toBe(404);
  });

  test('an edit without a body is a 422', async () => {
    const created = await api('/repos/acme/api/issues/1/comments', 'POST', { body: 'a' });
    const edited = await api(`/repos/acme/api/issues/comments/${created.body.id}`, 'PATCH', {});
    expect(edited.status).toBe(422);
    expect(edited.body.errors[0]).toMatchObject({ code: 'missing_field', field: 'body' });
  });
});

describe('labels', () => {
  test('create a label with a description; a second create is 422 already_exists', async () => {
    const created = await api('/repos/acme/api/labels', 'POST', {
      name: 'agent:failed',
      color: 'b60205',
      description: 'curupira gave up on this item',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'agent:failed',
      color: 'b60205',
      description: 'curupira gave up on this item',
      default: false,
    });
    const again = await api('/repos/acme/api/labels', 'POST', { name: 'AGENT:FAILED' });
    expect(again.status).toBe(422);
    expect(again.body.errors[0].code).toBe('already_exists');
    const one = await api(`/repos/acme/api/labels/${encodeURIComponent('agent:failed')}`);
    expect(one.body.description).toBe('curupira gave up on this item');
    expect((await api('/repos/acme/api/labels/missing')).status).toBe(404);
    expect((await api('/repos/acme/api/labels', 'POST', { name: 'x', color: 'red' })).status).toBe(422);
  });

  test('add and remove labels on an issue; the timeline shows who did it', async () => {
    await api('/repos/acme/api/issues/1/labels', 'POST', { labels: ['agent:implementing'] });
    expect((await api('/repos/acme/api/issues/1')).body.labels.map((l: { name: string }) => l.name)).toEqual([
      'bug',
      'agent:implementing',
    ]);
    const removed = await api('/repos/acme/api/issues/1/labels/agent%3Aimplementing', 'DELETE');
    expect(removed.status).toBe(200);
    expect(removed.body.map((l: { name: string }) => l.name)).toEqual(['bug']);
    const timeline = await api('/repos/acme/api/issues/1/timeline');
    const events = timeline.body.map(
      (e: { event: string; actor: { login: string }; label?: { name: string } }) => [
        e.event,
        e.actor.login,
        e.label?.name,
      ],
    );
    expect(events).toEqual([
      ['labeled', 'bob', 'bug'],
      ['labeled', 'curupira-bot', 'agent:implementing'],
      ['unlabeled', 'curupira-bot', 'agent:implementing'],
    ]);
  });
});

describe('issue state', () => {
  test('close as not planned and reopen through PATCH, with state_reason and timeline actors', async () => {
    const closed = await api('/repos/acme/api/issues/1', 'PATCH', {
      state: 'closed',
      state_reason: 'not_planned',
    });
    expect(closed.body).toMatchObject({ state: 'closed', state_reason: 'not_planned' });
    expect(closed.body.closed_at).not.toBeNull();
    const reopened = await api('/repos/acme/api/issues/1', 'PATCH', { state: 'open' });
    expect(reopened.body).toMatchObject({ state: 'open', state_reason: 'reopened', closed_at: null });
    const timeline = await api('/repos/acme/api/issues/1/timeline');
    const states = timeline.body
      .filter((e: { event: string }) => e.event !== 'labeled')
      .map((e: { event: string; actor: { login: string }; state_reason: string }) => [
        e.event,
        e.actor.login,
        e.state_reason,
      ]);
    expect(states).toEqual([
      ['closed', 'curupira-bot', 'not_planned'],
      ['reopened', 'curupira-bot', 'reopened'],
    ]);
    expect(
      (await api('/repos/acme/api/issues/1', 'PATCH', { state: 'closed', state_reason: 'bogus' })).status,
    ).toBe(422);
  });
});

describe('the Date header', () => {
  test('every answer carries the simulator clock as Date, errors included', async () => {
    const ok = await api('/repos/acme/api/issues/1');
    expect(ok.headers.get('date')).toBe('Fri, 01 May 2026 12:00:00 GMT');
    clock += 90_000;
    const missing = await api('/repos/acme/api/issues/99');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('date')).toBe('Fri, 01 May 2026 12:01:30 GMT');
  });
});

describe('secondary rate limits for content creation', () => {
  test('a write sooner than the interval is refused with Retry-After and not applied', async () => {
    sim.setWritePacing({ minIntervalMs: 1000, retryAfterSeconds: 2 });
    expect((await api('/repos/acme/api/issues/1/comments', 'POST', { body: 'one' })).status).toBe(201);
    clock += 500;
    const refused = await api('/repos/acme/api/issues/1/comments', 'POST', { body: 'two' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('retry-after')).toBe('2');
    expect(refused.body.message).toContain('secondary rate limit');
    expect(world.item('acme/api', 1)!.comments.map((c) => c.body)).toEqual(['one']);
    // Reads are never paced.
    expect((await api('/repos/acme/api/issues/1/comments')).status).toBe(200);
    clock += 600;
    expect((await api('/repos/acme/api/issues/1/comments', 'POST', { body: 'two' })).status).toBe(201);
    expect(sim.requests.map((r) => r.fault)).toEqual([null, 'secondary-rate-limit', null, null]);
  });

  test('429 is available, and the rule can be set over the control API', async () => {
    const set = await fetch(`${sim.url}/_simulator/write-pacing`, {
      method: 'POST',
      body: JSON.stringify({ minIntervalMs: 60_000, status: 429 }),
    });
    expect(set.status).toBe(200);
    await api('/repos/acme/api/labels', 'POST', { name: 'a' });
    const refused = await api('/repos/acme/api/labels', 'POST', { name: 'b' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const bad = await fetch(`${sim.url}/_simulator/write-pacing`, {
      method: 'POST',
      body: '{"minIntervalMs":1,"status":500}',
    });
    expect(bad.status).toBe(400);
  });
});

describe('write faults', () => {
  test('the chosen fraction of writes fails with 502 and is not applied; reads are spared', async () => {
    const draws = [0.1, 0.9, 0.2, 0.95];
    sim.setWriteFaults({ fraction: 0.3, random: () => draws.shift() ?? 1 });
    const statuses: number[] = [];
    for (const body of ['a', 'b', 'c', 'd']) {
      statuses.push((await api('/repos/acme/api/issues/1/comments', 'POST', { body })).status);
      statuses.push((await api('/repos/acme/api/issues/1/comments')).status);
    }
    expect(statuses).toEqual([502, 200, 201, 200, 502, 200, 201, 200]);
    expect(world.item('acme/api', 1)!.comments.map((c) => c.body)).toEqual(['b', 'd']);
  });

  test('applied faults make the write happen and still answer 502', async () => {
    sim.setWriteFaults({ fraction: 1, applied: true, status: 503 });
    const answer = await api('/repos/acme/api/issues/1/comments', 'POST', { body: 'posted anyway' });
    expect(answer.status).toBe(503);
    expect(world.item('acme/api', 1)!.comments.map((c) => c.body)).toEqual(['posted anyway']);
    sim.setWriteFaults(null);
    expect((await api('/repos/acme/api/issues/1/comments', 'POST', { body: 'fine' })).status).toBe(201);
  });
});
