/**
 * Idle polls that cost nothing (issue 15, item 8), against the simulator: a poll first asks the
 * repository's most recently updated issue with the last ETag; a 304 (free) skips the search, a
 * change searches at once, and `max_staleness_seconds` forces a search now and then.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { FakeClock } from '../core/clock.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import { type RecordedRequest, type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import type { Store } from '../store/types.js';
import { noService } from '../triggers/service.js';
import type { EventFeed, PollContext } from './feed.js';
import { createFeed } from './feed-factory.js';

const TOKEN = 'idle-poll-token';
let sim: Simulator;
let world: SimWorld;

beforeEach(async () => {
  world = new SimWorld();
  world.addToken(TOKEN, 'alice');
  world.addRepo('acme/api');
  world.addLabel('acme/api', 'ready');
  world.addIssue('acme/api', { title: 'First', body: '', labels: ['ready'], author: 'alice' });
  sim = await startSimulator({ world });
});
afterEach(async () => {
  await sim.close();
});

function feedFor(clock: FakeClock, polling = '') {
  const { settings } = loadSettingsFromText(
    `[settings.github]
api_url = "${sim.url}"
[settings.polling]
poll_interval_seconds = 30
${polling}
[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "claude"
[agents.defaults]
profile = "main"
[automations.fix]
repository = "api"
repo = "acme/api"
labels = ["ready"]
prompt = "Fix \${issue_number}"
`,
    '/tmp/curupira-idle/settings.toml',
  );
  const client = createGitHubClient({ apiUrl: sim.url, tokens: staticTokenSource(TOKEN), clock });
  const automation = settings.automations[0]!;
  const feed = createFeed(automation, settings.execution.polling, {
    github: () => client,
    clock,
    log: silentLogger(),
    service: noService,
  }) as EventFeed;
  const context: PollContext = { store: {} as Store, clock, log: silentLogger(), limit: 100, preview: false };
  /** One poll; what it found is taken by the engine (marked dispatched). */
  const poll = async (): Promise<string[]> => {
    const tasks = await feed.poll(context);
    for (const task of tasks) feed.markDispatched(task);
    return tasks.map((t) => t.item.id);
  };
  return { feed, poll };
}

/** What the requests since `from` were: probes (`REST 200` / `REST 304`) and searches. */
function kinds(from: number): string[] {
  return sim.requests.slice(from).map((r) => (r.path === '/graphql' ? 'search' : `REST ${r.status}`));
}

/** Rate-limit points spent: GraphQL points plus REST requests charged to the core budget. */
function points(requests: readonly RecordedRequest[]): number {
  return requests.reduce((sum, r) => sum + r.cost + r.coreCost, 0);
}

describe('idle polls', () => {
  it('a 304 skips the search and costs nothing; a change searches at once', async () => {
    const clock = new FakeClock(Date.UTC(2026, 4, 1));
    const { poll, feed } = feedFor(clock);
    expect(await poll()).toEqual(['1']);
    expect(kinds(0)).toEqual(['REST 200', 'search']);

    await clock.advance(30_000);
    let from = sim.requests.length;
    expect(await poll()).toEqual([]);
    expect(kinds(from)).toEqual(['REST 304']);
    expect(points(sim.requests.slice(from))).toBe(0);
    expect(sim.rateLimits.core.peek('alice').used).toBe(1);
    expect(feed.idleSkips).toBe(1);

    // A new labelled issue changes the newest-updated issue: the next poll searches and finds it.
    world.addIssue('acme/api', { title: 'Second', body: '', labels: ['ready'], author: 'alice' });
    await clock.advance(30_000);
    from = sim.requests.length;
    expect(await poll()).toEqual(['2']);
    expect(kinds(from)).toEqual(['REST 200', 'search']);

    // A label added to an older issue changes it too.
    world.addIssue('acme/api', { title: 'Third', body: '', labels: [], author: 'alice' });
    await clock.advance(30_000);
    await poll();
    world.addLabels('acme/api', 3, ['ready']);
    await clock.advance(30_000);
    from = sim.requests.length;
    expect(await poll()).toEqual(['3']);
    expect(kinds(from)).toEqual(['REST 200', 'search']);
  });

  it('max_staleness_seconds forces a search even when nothing changed', async () => {
    const clock = new FakeClock(Date.UTC(2026, 4, 1));
    const { poll } = feedFor(clock, 'max_staleness_seconds = 120');
    await poll();
    const from = sim.requests.length;
    for (let i = 0; i < 4; i += 1) {
      await clock.advance(40_000);
      await poll();
    }
    // 40, 80: fresh (304, skipped); 120: stale (304, searched); 160: fresh again.
    expect(kinds(from)).toEqual(['REST 304', 'REST 304', 'REST 304', 'search', 'REST 304']);
  });

  it('a forgotten task (an operator retry, a launch that never started) searches on the next poll', async () => {
    const clock = new FakeClock(Date.UTC(2026, 4, 1));
    const { poll, feed } = feedFor(clock);
    await poll();
    expect(feed.forgetKey(JSON.stringify(['fix', 'acme/api', 'github-issues', '1']))).toBe(true);
    await clock.advance(30_000);
    const from = sim.requests.length;
    expect(await poll()).toEqual(['1']);
    expect(kinds(from)).toEqual(['REST 304', 'search']);
  });

  it('an idle hour costs 0 points with max_staleness_seconds = 0 (polled every 30 s to 300 s)', async () => {
    const clock = new FakeClock(Date.UTC(2026, 4, 1));
    const { poll, feed } = feedFor(clock, 'max_staleness_seconds = 0');
    await poll();
    const from = sim.requests.length;
    const end = clock.now() + 3_600_000;
    while (feed.nextPollAt <= end) {
      await clock.advance(Math.max(0, feed.nextPollAt - clock.now()));
      await poll();
    }
    const idle = sim.requests.slice(from);
    expect(idle.length).toBeGreaterThan(10);
    expect(idle.every((r) => r.status === 304)).toBe(true);
    expect(points(idle)).toBe(0);
  });
});
