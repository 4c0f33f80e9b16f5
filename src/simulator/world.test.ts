import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { DEMO_TOKEN, demoFixture, demoWorld } from './demo.js';
import { searchIssues } from './search.js';
import { runSimulatorFromFixture } from './server.js';
import { postGraphQL } from './testing.js';
import { realTimeClock, SimWorld, worldFromFixture } from './world.js';

describe('building a world', () => {
  test('issues and pull requests share one number sequence per repository', () => {
    const world = new SimWorld();
    world.addRepo('acme/api');
    world.addRepo('acme/web');
    expect(world.addIssue('acme/api', { title: 'a' }).number).toBe(1);
    expect(world.addPullRequest('acme/api', { title: 'b' }).number).toBe(2);
    expect(world.addIssue('acme/api', { title: 'c' }).number).toBe(3);
    expect(world.addIssue('acme/web', { title: 'd' }).number).toBe(1);
    expect(() => world.addIssue('acme/api', { title: 'dup', number: 2 })).toThrow(
      /acme\/api#2 already exists/,
    );
    expect(() => world.addIssue('acme/nope', { title: 'x' })).toThrow(
      "the simulated world has no repository 'acme/nope'",
    );
  });

  test('timestamps are distinct and predictable by default, and follow an injected clock', () => {
    const stepping = new SimWorld();
    stepping.addRepo('acme/api');
    const a = stepping.addIssue('acme/api', { title: 'a' });
    const b = stepping.addIssue('acme/api', { title: 'b' });
    expect(a.createdAt).toMatch(/^2026-01-01T00:0\d:00Z$/);
    expect(b.createdAt > a.createdAt).toBe(true);
    const fixed = new SimWorld({ now: () => Date.UTC(2030, 5, 1, 8, 30) });
    fixed.addRepo('acme/api');
    expect(fixed.addIssue('acme/api', { title: 'x' }).createdAt).toBe('2030-06-01T08:30:00Z');
  });

  test('labels match case-insensitively and keep the repository spelling', () => {
    const world = new SimWorld();
    world.addRepo('acme/api');
    world.addLabel('acme/api', 'Agent-Ready', { color: '00ff00' });
    const issue = world.addIssue('acme/api', { title: 'x', labels: ['agent-ready'] });
    expect(issue.labels).toEqual(['Agent-Ready']);
    expect(world.removeLabel('acme/api', 1, 'AGENT-READY')).toBe(true);
    expect(world.removeLabel('acme/api', 1, 'agent-ready')).toBe(false);
  });

  test('merging a pull request closes the issues it references, as GitHub does', () => {
    const world = new SimWorld();
    world.addRepo('acme/api');
    world.addIssue('acme/api', { title: 'bug' });
    world.addPullRequest('acme/api', { title: 'fix' });
    world.linkPullRequest('acme/api', 2, 1);
    world.mergePullRequest('acme/api', 2);
    expect(world.issue('acme/api', 1)).toMatchObject({ state: 'CLOSED', stateReason: 'COMPLETED' });
    expect(world.pullRequest('acme/api', 2)?.mergedAt).not.toBeNull();
  });

  test('bots are named name[bot] or app/name and are a different account from a user named name', () => {
    const world = new SimWorld();
    const bot = world.addUser('app/renovate');
    expect(bot).toMatchObject({ __typename: 'Bot', login: 'renovate[bot]' });
    expect(world.actor('renovate[bot]')).toBe(bot);
    expect(world.actor('renovate')).toBeUndefined();
  });
});

describe('tokens', () => {
  test('only known tokens authenticate, unless any token is accepted', () => {
    const world = new SimWorld();
    world.addToken('known', 'alice');
    expect(world.viewerForToken('other')).toBeUndefined();
    world.acceptAnyToken('octocat');
    expect(world.viewerForToken('other')?.login).toBe('octocat');
    expect(world.viewerForToken('known')?.login).toBe('alice');
    expect(world.viewerForToken('')).toBeUndefined();
    expect(world.firstTokenLogin()).toBe('alice');
  });
});

describe('fixtures', () => {
  test('the demo fixture has acme/widgets with one agent-ready issue and a working token', () => {
    const world = demoWorld();
    expect(world.repo('acme/widgets')?.defaultBranch).toBe('main');
    expect(world.repo('acme/widgets')?.items.size).toBe(4);
    const ready = searchIssues(world, 'repo:acme/widgets is:issue is:open label:agent-ready', {
      viewer: 'octocat',
    });
    expect(ready.items.map((i) => i.title)).toEqual(['Widget list crashes when a widget has no name']);
    expect(world.viewerForToken(DEMO_TOKEN)?.login).toBe('octocat');
    expect(world.issue('acme/widgets', 1)?.createdAt.startsWith('2026-01-05')).toBe(true);
  });

  test('a fixture with projects and pull requests loads them all', () => {
    const world = worldFromFixture({
      tokens: { t: 'alice' },
      repos: [
        {
          name: 'acme/api',
          issues: [{ title: 'Bug', number: 7 }],
          pullRequests: [
            {
              title: 'Fix',
              closingIssues: [7],
              draft: true,
              reviews: [{ author: 'bob', state: 'APPROVED' }],
            },
          ],
        },
      ],
      projects: [
        {
          owner: 'acme',
          title: 'Board',
          items: [
            { issue: 'acme/api#7', status: 'Todo' },
            { draft: { title: 'Idea' }, status: 'Done', archived: true },
          ],
        },
      ],
    });
    const pr = world.pullRequest('acme/api', 8);
    expect(pr).toMatchObject({ isDraft: true, closingIssues: [7], mergeStateStatus: 'DRAFT' });
    expect(pr?.reviews.map((r) => r.state)).toEqual(['APPROVED']);
    expect(world.project('acme', 1)?.items.map((i) => i.isArchived)).toEqual([false, true]);
  });

  test('a broken fixture says what is wrong', () => {
    expect(() => worldFromFixture({ repos: [{ name: 'acme/api', issues: [{ body: 'no title' }] }] })).toThrow(
      'acme/api.issues[].title must be a non-empty string',
    );
    expect(() =>
      worldFromFixture({
        repos: [{ name: 'acme/api' }],
        projects: [{ owner: 'acme', title: 'B', items: [{ issue: 'acme/api#9' }] }],
      }),
    ).toThrow('the simulated world has no issue or pull request acme/api#9');
    expect(() =>
      worldFromFixture({
        repos: [{ name: 'acme/api', issues: [{ title: 'x' }] }],
        projects: [{ owner: 'acme', title: 'B', items: [{ issue: 'acme/api#1', status: 'Blocked' }] }],
      }),
    ).toThrow("project acme/1 has no Status 'Blocked' (it has Todo, In Progress, Done)");
  });

  test('runSimulatorFromFixture serves the fixture file over HTTP', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'curupira-sim-'));
    const file = join(dir, 'demo.json');
    writeFileSync(file, JSON.stringify(demoFixture));
    const sim = await runSimulatorFromFixture(file);
    try {
      expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const reply = await postGraphQL<{ search: { nodes: { number: number }[] } }>(
        sim.url,
        DEMO_TOKEN,
        '{ search(type: ISSUE, query: "repo:acme/widgets label:agent-ready", first: 5) { nodes { ... on Issue { number } } } }',
      );
      expect(reply.body.data?.search.nodes).toEqual([{ number: 1 }]);
    } finally {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
    await expect(runSimulatorFromFixture(join(dir, 'missing.json'))).rejects.toThrow(
      /cannot read simulator fixture/,
    );
  });
});

describe('the real-time clock (the demo)', () => {
  test('follows the real time, each reading at least a second after the one before', () => {
    let now = Date.parse('2026-12-07T10:00:00Z');
    const clock = realTimeClock(() => now);
    expect([clock(), clock(), clock()].map((t) => new Date(t).toISOString())).toEqual([
      '2026-12-07T10:00:00.000Z',
      '2026-12-07T10:00:01.000Z',
      '2026-12-07T10:00:02.000Z',
    ]);
    now += 60_000;
    expect(new Date(clock()).toISOString()).toBe('2026-12-07T10:01:00.000Z');
    const world = new SimWorld({ now: realTimeClock(() => now) });
    const first = world.timestamp();
    expect(first).toBe('2026-12-07T10:01:00Z');
    expect(world.timestamp() > first).toBe(true);
  });
});
