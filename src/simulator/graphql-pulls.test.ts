import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { git } from '../workspace/git.js';
import { commitFiles, createOrigin, isolateGitForTests, type OriginRepo } from '../workspace/testing.js';
import { simChecks } from './checks.js';
import { keepReflogs } from './merging.js';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

// REST writes (check runs, statuses, reviews, comments, pushes) read back through GraphQL on the
// public schema, over a pull request backed by a real bare repository.

const AUTHOR = 'pr-author-token';
const REVIEWER = 'pr-reviewer-token';
const OTHER = 'pr-other-token';
let sim: Simulator;
let world: SimWorld;
let origin: OriginRepo;
let work: string;
let firstSha: string;

async function api(token: string, path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `bearer ${token}`, accept: 'application/vnd.github+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function pull<T = Record<string, unknown>>(fields: string): Promise<T> {
  const reply = await postGraphQL<{ repository: { pullRequest: T } }>(
    sim.url,
    AUTHOR,
    `query { repository(owner: "acme", name: "api") { pullRequest(number: 1) { ${fields} } } }`,
  );
  expect(reply.body.errors).toBeUndefined();
  return reply.body.data!.repository.pullRequest;
}

beforeAll(() => isolateGitForTests());

beforeEach(async () => {
  origin = await createOrigin();
  work = join(origin.dir, 'work');
  await git(['clone', '-q', origin.url, work], { cwd: origin.dir });
  await git(['switch', '-q', '-c', 'feature'], { cwd: work });
  firstSha = await commitFiles(work, { 'a.txt': 'one\n' }, 'Add a.txt\n\nThe first step.');
  await git(['push', '-q', 'origin', 'feature'], { cwd: work });
  world = new SimWorld();
  world.addToken(AUTHOR, 'curupira-bot');
  world.addToken(REVIEWER, 'rita');
  world.addToken(OTHER, 'omar');
  world.addRepo('acme/api', { gitDir: origin.url });
  sim = await startSimulator({ world });
  const created = await api(AUTHOR, '/repos/acme/api/pulls', 'POST', {
    title: 'Add a',
    head: 'feature',
    base: 'main',
  });
  expect(created.body.number).toBe(1);
});

afterEach(async () => {
  await sim.close();
  await origin.cleanup();
});

const ROLLUP = `statusCheckRollup {
  state
  commit { oid messageHeadline }
  contexts(first: 10) {
    totalCount checkRunCount statusContextCount
    checkRunCountsByState { state count }
    nodes {
      __typename
      ... on CheckRun { name status conclusion detailsUrl isRequired(pullRequestNumber: 1) }
      ... on StatusContext { context state targetUrl description isRequired(pullRequestNumber: 1) }
    }
  }
}`;

describe('statusCheckRollup from the checks recorded for the head', () => {
  test('a failing check run and a passing status roll up to FAILURE, contexts as GitHub lists them', async () => {
    expect(await pull<{ statusCheckRollup: unknown }>('statusCheckRollup { state }')).toEqual({
      statusCheckRollup: null,
    });
    simChecks(world).setRequiredChecks('acme/api', 'main', ['test']);
    const run = await api(AUTHOR, '/repos/acme/api/check-runs', 'POST', {
      name: 'test',
      head_sha: firstSha,
      status: 'completed',
      conclusion: 'failure',
      details_url: 'https://ci.example/runs/1',
    });
    expect(run.status).toBe(201);
    const status = await api(AUTHOR, `/repos/acme/api/statuses/${firstSha}`, 'POST', {
      state: 'success',
      context: 'lint',
      target_url: 'https://ci.example/lint/1',
      description: 'clean',
    });
    expect(status.status).toBe(201);

    const pr = await pull(
      `${ROLLUP} commits(last: 1) { nodes { commit { oid statusCheckRollup { state } } } }`,
    );
    expect(pr).toEqual({
      statusCheckRollup: {
        state: 'FAILURE',
        commit: { oid: firstSha, messageHeadline: 'Add a.txt' },
        contexts: {
          totalCount: 2,
          checkRunCount: 1,
          statusContextCount: 1,
          checkRunCountsByState: [{ state: 'FAILURE', count: 1 }],
          nodes: [
            {
              __typename: 'CheckRun',
              name: 'test',
              status: 'COMPLETED',
              conclusion: 'FAILURE',
              detailsUrl: 'https://ci.example/runs/1',
              isRequired: true,
            },
            {
              __typename: 'StatusContext',
              context: 'lint',
              state: 'SUCCESS',
              targetUrl: 'https://ci.example/lint/1',
              description: 'clean',
              isRequired: false,
            },
          ],
        },
      },
      commits: { nodes: [{ commit: { oid: firstSha, statusCheckRollup: { state: 'FAILURE' } } }] },
    });
  });

  test('a failing check makes a clean pull request UNSTABLE in mergeStateStatus, as in REST', async () => {
    expect(await pull('mergeable mergeStateStatus')).toEqual({
      mergeable: 'MERGEABLE',
      mergeStateStatus: 'CLEAN',
    });
    simChecks(world).addCheckRun('acme/api', { name: 'test', headSha: firstSha, conclusion: 'failure' });
    expect(await pull('mergeable mergeStateStatus')).toEqual({
      mergeable: 'MERGEABLE',
      mergeStateStatus: 'UNSTABLE',
    });
    expect((await api(AUTHOR, '/repos/acme/api/pulls/1')).body.mergeable_state).toBe('unstable');
  });

  test('a re-run that passes replaces the failure; a new push starts with no rollup', async () => {
    const created = await api(AUTHOR, '/repos/acme/api/check-runs', 'POST', {
      name: 'test',
      head_sha: firstSha,
      conclusion: 'failure',
    });
    await api(AUTHOR, `/repos/acme/api/check-runs/${created.body.id}`, 'PATCH', { status: 'in_progress' });
    expect(await pull('statusCheckRollup { state }')).toEqual({ statusCheckRollup: { state: 'PENDING' } });
    await api(AUTHOR, `/repos/acme/api/check-runs/${created.body.id}`, 'PATCH', { conclusion: 'success' });
    expect(await pull('statusCheckRollup { state }')).toEqual({ statusCheckRollup: { state: 'SUCCESS' } });

    const second = await commitFiles(work, { 'b.txt': 'two\n' }, 'Add b.txt');
    await git(['push', '-q', 'origin', 'feature'], { cwd: work });
    expect(await pull('headRefOid statusCheckRollup { state }')).toEqual({
      headRefOid: second,
      statusCheckRollup: null,
    });
    // The first commit keeps its own rollup.
    const commits = await pull<{
      commits: { nodes: { commit: { oid: string; statusCheckRollup: unknown } }[] };
    }>('commits(first: 10) { nodes { commit { oid statusCheckRollup { state } } } }');
    expect(commits.commits.nodes).toEqual([
      { commit: { oid: firstSha, statusCheckRollup: { state: 'SUCCESS' } } },
      { commit: { oid: second, statusCheckRollup: null } },
    ]);
  });

  test("the fixture's static checkState answers only until a check or status is recorded", async () => {
    world.addRepo('acme/static');
    const pr = world.addPullRequest('acme/static', { title: 'Static', checkState: 'SUCCESS' });
    const query = `query { repository(owner: "acme", name: "static") { pullRequest(number: 1) {
      statusCheckRollup { state contexts(first: 5) { totalCount } } } } }`;
    const before = await postGraphQL(sim.url, AUTHOR, query);
    expect(before.body.data).toEqual({
      repository: { pullRequest: { statusCheckRollup: { state: 'SUCCESS', contexts: { totalCount: 0 } } } },
    });
    simChecks(world).setStatus('acme/static', pr.headRefOid, { state: 'failure', context: 'ci' });
    const after = await postGraphQL(sim.url, AUTHOR, query);
    expect(after.body.data).toEqual({
      repository: { pullRequest: { statusCheckRollup: { state: 'FAILURE', contexts: { totalCount: 1 } } } },
    });
  });
});

describe('reviews', () => {
  test('a REST review sets reviewDecision; latest reviews per author; changes requested win', async () => {
    expect(await pull('reviewDecision')).toEqual({ reviewDecision: null });
    await api(REVIEWER, '/repos/acme/api/pulls/1/reviews', 'POST', { event: 'APPROVE' });
    expect(await pull('reviewDecision')).toEqual({ reviewDecision: 'APPROVED' });
    await api(OTHER, '/repos/acme/api/pulls/1/reviews', 'POST', {
      event: 'REQUEST_CHANGES',
      body: 'Please add tests',
    });
    await api(OTHER, '/repos/acme/api/pulls/1/reviews', 'POST', { event: 'COMMENT', body: 'Also a nit' });
    const pr = await pull(`reviewDecision
      reviews(first: 10) { totalCount nodes { state author { login } } }
      latestReviews(first: 10) { nodes { state body author { login } } }
      latestOpinionatedReviews(first: 10) { nodes { state author { login } } }`);
    expect(pr).toEqual({
      reviewDecision: 'CHANGES_REQUESTED',
      reviews: {
        totalCount: 3,
        nodes: [
          { state: 'APPROVED', author: { login: 'rita' } },
          { state: 'CHANGES_REQUESTED', author: { login: 'omar' } },
          { state: 'COMMENTED', author: { login: 'omar' } },
        ],
      },
      latestReviews: {
        nodes: [
          { state: 'APPROVED', body: '', author: { login: 'rita' } },
          { state: 'COMMENTED', body: 'Also a nit', author: { login: 'omar' } },
        ],
      },
      latestOpinionatedReviews: {
        nodes: [
          { state: 'APPROVED', author: { login: 'rita' } },
          { state: 'CHANGES_REQUESTED', author: { login: 'omar' } },
        ],
      },
    });
    // The one who asked for changes approves: the decision follows each author's latest opinion.
    await api(OTHER, '/repos/acme/api/pulls/1/reviews', 'POST', { event: 'APPROVE' });
    expect(await pull('reviewDecision')).toEqual({ reviewDecision: 'APPROVED' });
  });
});

type Timeline = { timelineItems: { totalCount: number; nodes: Record<string, unknown>[] } };

describe('timelineItems of a pull request', () => {
  const TIMELINE = `timelineItems(first: 50, itemTypes: [PULL_REQUEST_COMMIT, PULL_REQUEST_REVIEW, ISSUE_COMMENT, MERGED_EVENT, CLOSED_EVENT]) {
    totalCount
    nodes {
      __typename
      ... on PullRequestCommit { commit { oid messageHeadline messageBody author { name } } }
      ... on PullRequestReview { state author { login } }
      ... on IssueComment { body author { login } }
      ... on MergedEvent { mergeRefName createdAt }
      ... on ClosedEvent { createdAt }
    }
  }`;

  test('a pushed commit, a review and a comment show up; merging adds merged and closed events', async () => {
    await api(REVIEWER, '/repos/acme/api/pulls/1/reviews', 'POST', {
      event: 'REQUEST_CHANGES',
      body: 'More',
    });
    await api(REVIEWER, '/repos/acme/api/issues/1/comments', 'POST', { body: 'See the review' });
    const second = await commitFiles(work, { 'b.txt': 'two\n' }, 'Add b.txt');
    await git(['push', '-q', 'origin', 'feature'], { cwd: work });

    const open = await pull<Timeline>(TIMELINE);
    const byType = (t: Timeline, type: string) => t.timelineItems.nodes.filter((n) => n.__typename === type);
    expect(open.timelineItems.totalCount).toBe(4);
    expect(byType(open, 'PullRequestCommit')).toEqual([
      {
        __typename: 'PullRequestCommit',
        commit: {
          oid: firstSha,
          messageHeadline: 'Add a.txt',
          messageBody: 'The first step.',
          author: { name: 'Curupira Test' },
        },
      },
      {
        __typename: 'PullRequestCommit',
        commit: {
          oid: second,
          messageHeadline: 'Add b.txt',
          messageBody: '',
          author: { name: 'Curupira Test' },
        },
      },
    ]);
    expect(byType(open, 'PullRequestReview')).toEqual([
      { __typename: 'PullRequestReview', state: 'CHANGES_REQUESTED', author: { login: 'rita' } },
    ]);
    expect(byType(open, 'IssueComment')).toEqual([
      { __typename: 'IssueComment', body: 'See the review', author: { login: 'rita' } },
    ]);
    expect(byType(open, 'MergedEvent')).toEqual([]);

    // Merged with a merge commit, the base contains the head (base..head is empty): the commits stay.
    const merge = await api(AUTHOR, '/repos/acme/api/pulls/1/merge', 'PUT', { merge_method: 'merge' });
    expect(merge.body).toMatchObject({ merged: true });
    const merged = world.pullRequest('acme/api', 1)!;
    const after = await pull<Timeline>(TIMELINE);
    expect(byType(after, 'PullRequestCommit').map((n) => (n.commit as { oid: string }).oid)).toEqual([
      firstSha,
      second,
    ]);
    expect(byType(after, 'MergedEvent')).toEqual([
      { __typename: 'MergedEvent', mergeRefName: 'main', createdAt: merged.mergedAt },
    ]);
    expect(byType(after, 'ClosedEvent')).toEqual([{ __typename: 'ClosedEvent', createdAt: merged.closedAt }]);
  });

  test('a forced push of the head shows up as HeadRefForcePushedEvent with both commits', async () => {
    keepReflogs(origin.url);
    const FORCED = `timelineItems(first: 10, itemTypes: [HEAD_REF_FORCE_PUSHED_EVENT, PULL_REQUEST_COMMIT]) {
      nodes {
        __typename
        ... on HeadRefForcePushedEvent { beforeCommit { oid } afterCommit { oid messageHeadline } ref { name } }
        ... on PullRequestCommit { commit { oid } }
      }
    }`;
    await commitFiles(work, { 'b.txt': 'fast-forward\n' }, 'Add b.txt');
    await git(['push', '-q', 'origin', 'feature'], { cwd: work });
    expect((await pull<Timeline>(FORCED)).timelineItems.nodes.map((n) => n.__typename)).toEqual([
      'PullRequestCommit',
      'PullRequestCommit',
    ]);
    const before = (await git(['rev-parse', 'HEAD'], { cwd: work })).trim();
    await git(['reset', '-q', '--hard', 'HEAD~1'], { cwd: work });
    await git(['commit', '-q', '--amend', '-m', 'Add a.txt, rewritten'], { cwd: work });
    const after = (await git(['rev-parse', 'HEAD'], { cwd: work })).trim();
    await git(['push', '-q', '--force', 'origin', 'feature'], { cwd: work });

    const timeline = await pull<Timeline>(FORCED);
    expect(timeline.timelineItems.nodes.filter((n) => n.__typename === 'HeadRefForcePushedEvent')).toEqual([
      {
        __typename: 'HeadRefForcePushedEvent',
        beforeCommit: { oid: before },
        afterCommit: { oid: after, messageHeadline: 'Add a.txt, rewritten' },
        ref: { name: 'feature' },
      },
    ]);
    expect(timeline.timelineItems.nodes.filter((n) => n.__typename === 'PullRequestCommit')).toEqual([
      { __typename: 'PullRequestCommit', commit: { oid: after } },
    ]);
  });

  test('an item type the simulator does not model is refused, not answered empty', async () => {
    const reply = await postGraphQL(
      sim.url,
      AUTHOR,
      `query { repository(owner: "acme", name: "api") { pullRequest(number: 1) {
        timelineItems(first: 5, itemTypes: [REVIEW_REQUESTED_EVENT]) { totalCount } } } }`,
    );
    expect(reply.body.errors?.[0]).toMatchObject({ type: 'SIMULATOR_UNSUPPORTED' });
  });
});

describe('timelineItems of an issue', () => {
  test('comments, closed and reopened events with their actors, and labels', async () => {
    world.addIssue('acme/api', { title: 'Crash', author: 'bob', labels: ['bug'] });
    world.addComment('acme/api', 2, { author: 'carol', body: 'Same here' });
    world.closeIssue('acme/api', 2, { actor: 'carol', stateReason: 'NOT_PLANNED' });
    world.reopenIssue('acme/api', 2, { actor: 'bob' });
    const reply = await postGraphQL<{ repository: { issue: Timeline } }>(
      sim.url,
      AUTHOR,
      `query { repository(owner: "acme", name: "api") { issue(number: 2) {
        timelineItems(first: 10, itemTypes: [LABELED_EVENT, ISSUE_COMMENT, CLOSED_EVENT, REOPENED_EVENT]) {
          totalCount
          nodes {
            __typename
            ... on LabeledEvent { label { name } actor { login } }
            ... on IssueComment { body }
            ... on ClosedEvent { stateReason actor { login } }
            ... on ReopenedEvent { actor { login } }
          }
        } } } }`,
    );
    expect(reply.body.errors).toBeUndefined();
    expect(reply.body.data!.repository.issue.timelineItems.nodes).toEqual([
      { __typename: 'LabeledEvent', label: { name: 'bug' }, actor: { login: 'bob' } },
      { __typename: 'IssueComment', body: 'Same here' },
      { __typename: 'ClosedEvent', stateReason: 'NOT_PLANNED', actor: { login: 'carol' } },
      { __typename: 'ReopenedEvent', actor: { login: 'bob' } },
    ]);
  });
});
