import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { addReviewComment, setPermission, submitReview } from './reviews.js';
import { type Simulator, startSimulator } from './server.js';
import { SimWorld } from './world.js';

let sim: Simulator;
let world: SimWorld;

async function api(token: string, path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `bearer ${token}`, accept: 'application/vnd.github+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

beforeEach(async () => {
  world = new SimWorld();
  world.addToken('bot-token', 'curupira-bot');
  world.addToken('alice-token', 'alice');
  world.addRepo('acme/api');
  world.addPullRequest('acme/api', { title: 'Fix', author: 'curupira-bot', headRefName: 'curupira/x' });
  sim = await startSimulator({ world });
});

afterEach(async () => {
  await sim.close();
});

describe('pull request reviews', () => {
  test('POST reviews records the event as its state, with inline comments; GET lists both', async () => {
    const posted = await api('alice-token', '/repos/acme/api/pulls/1/reviews', 'POST', {
      event: 'REQUEST_CHANGES',
      body: 'Please rename it.',
      comments: [{ path: 'src/a.ts', line: 3, body: 'This name is unclear.' }],
    });
    expect(posted.status).toBe(200);
    expect(posted.body).toMatchObject({
      state: 'CHANGES_REQUESTED',
      body: 'Please rename it.',
      user: { login: 'alice' },
    });
    expect(world.pullRequest('acme/api', 1)!.reviewDecision).toBe('CHANGES_REQUESTED');

    const reviews = await api('bot-token', '/repos/acme/api/pulls/1/reviews');
    expect(reviews.body).toHaveLength(1);
    expect(reviews.body[0]).toMatchObject({ id: posted.body.id, state: 'CHANGES_REQUESTED' });
    const comments = await api('bot-token', '/repos/acme/api/pulls/1/comments');
    expect(comments.body).toEqual([
      expect.objectContaining({
        path: 'src/a.ts',
        line: 3,
        body: 'This name is unclear.',
        pull_request_review_id: posted.body.id,
        user: expect.objectContaining({ login: 'alice' }),
      }),
    ]);

    await api('alice-token', '/repos/acme/api/pulls/1/reviews', 'POST', { event: 'APPROVE' });
    expect(world.pullRequest('acme/api', 1)!.reviewDecision).toBe('APPROVED');
    expect(
      (await api('bot-token', '/repos/acme/api/pulls/1/reviews')).body.map((r: { state: string }) => r.state),
    ).toEqual(['CHANGES_REQUESTED', 'APPROVED']);
  });

  test("GitHub's refusals: no body for a change request, no verdict on one's own pull request, an unknown event", async () => {
    const empty = await api('alice-token', '/repos/acme/api/pulls/1/reviews', 'POST', {
      event: 'REQUEST_CHANGES',
    });
    expect(empty.status).toBe(422);
    const own = await api('bot-token', '/repos/acme/api/pulls/1/reviews', 'POST', { event: 'APPROVE' });
    expect(own.status).toBe(422);
    expect(own.body.errors).toEqual(['Can not approve your own pull request']);
    const bad = await api('alice-token', '/repos/acme/api/pulls/1/reviews', 'POST', { event: 'MERGE' });
    expect(bad.status).toBe(422);
    expect(world.pullRequest('acme/api', 1)!.reviews).toEqual([]);
    expect((await api('alice-token', '/repos/acme/api/pulls/9/reviews')).status).toBe(404);
  });

  test('test helpers add a review and an inline comment as any login', async () => {
    const { review } = submitReview(world, 'acme/api', 1, {
      author: 'copilot-pull-request-reviewer[bot]',
      state: 'COMMENTED',
      body: 'Nit.',
    });
    addReviewComment(world, 'acme/api', 1, { author: 'bob', path: 'README.md', line: 1, body: 'Typo.' });
    const reviews = await api('bot-token', '/repos/acme/api/pulls/1/reviews');
    expect(reviews.body).toEqual([
      expect.objectContaining({
        id: review.databaseId,
        state: 'COMMENTED',
        user: expect.objectContaining({ login: 'copilot-pull-request-reviewer[bot]' }),
      }),
    ]);
    const comments = await api('bot-token', '/repos/acme/api/pulls/1/comments');
    expect(comments.body).toEqual([
      expect.objectContaining({ path: 'README.md', line: 1, pull_request_review_id: null }),
    ]);
  });
});

describe('collaborator permission', () => {
  test('the owner is admin; a set permission is answered; others read on a public repository', async () => {
    world.addUser('acme');
    setPermission(world, 'acme/api', 'alice', 'write');
    world.addUser('mallory');
    const of = async (login: string) =>
      (await api('bot-token', `/repos/acme/api/collaborators/${encodeURIComponent(login)}/permission`)).body;
    expect(await of('acme')).toMatchObject({ permission: 'admin', user: { login: 'acme' } });
    expect(await of('alice')).toMatchObject({ permission: 'write' });
    expect(await of('mallory')).toMatchObject({ permission: 'read' });
    world.repo('acme/api')!.isPrivate = true;
    expect(await of('mallory')).toMatchObject({ permission: 'none' });
    expect((await api('bot-token', '/repos/acme/api/collaborators/nobody/permission')).status).toBe(404);
  });
});
