import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { FakeClock } from '../core/clock.js';
import { silentLogger } from '../log.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { createGitHubIssuesSource } from '../triggers/github-issues/index.js';
import { noService } from '../triggers/service.js';
import { createGitHubClient, type GitHubClient } from './client.js';
import { type IssueNode, SEARCH_ISSUES } from './operations.js';
import { PAGE_SIZE, searchAll } from './search.js';
import { staticTokenSource } from './token.js';

const TOKEN = 'search-token';
let sim: Simulator;
let client: GitHubClient;

/** acme/big: 1,500 open `agent-ready` issues. acme/small: 130 of them, and 20 without the label. */
beforeAll(async () => {
  const world = new SimWorld();
  world.addToken(TOKEN, 'alice');
  world.addRepo('acme/big');
  world.addRepo('acme/small');
  for (let i = 1; i <= 1500; i += 1)
    world.addIssue('acme/big', { title: `Big ${i}`, labels: ['agent-ready'] });
  for (let i = 1; i <= 150; i += 1) {
    world.addIssue('acme/small', { title: `Small ${i}`, labels: i <= 130 ? ['agent-ready'] : [] });
  }
  sim = await startSimulator({ world });
  client = createGitHubClient({
    apiUrl: sim.url,
    tokens: staticTokenSource(TOKEN),
    clock: new FakeClock(),
    random: () => 0.5,
  });
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  sim.resetRequests();
});

function search(repo: string, limit: number) {
  return searchAll<IssueNode>(
    client,
    SEARCH_ISSUES,
    `repo:${repo} is:issue is:open label:agent-ready sort:created-asc`,
    'Issue',
    limit,
  );
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe('search pagination', () => {
  it('batch_size 250 follows cursors in pages of at most 100: three requests', async () => {
    const result = await search('acme/big', 250);
    expect(result.nodes.map((n) => n.number)).toEqual(range(1, 250));
    expect(result.pages).toBe(3);
    expect(result.total).toBe(1500);
    expect(sim.requests.map((r) => r.variables?.first)).toEqual([100, 100, 50]);
    expect(sim.requests[0]?.variables?.after).toBeNull();
    // Each page starts where the previous one ended.
    expect(sim.requests[1]?.variables?.after).toEqual(expect.any(String));
    expect(sim.requests[2]?.variables?.after).not.toBe(sim.requests[1]?.variables?.after);
    expect(sim.requests.every((r) => r.operationName === 'CurupiraSearchIssues' && r.status === 200)).toBe(
      true,
    );
  });

  it("batch_size 1000 with 1,500 matches returns exactly GitHub's 1,000 and stops", async () => {
    const result = await search('acme/big', 1000);
    expect(result.nodes.map((n) => n.number)).toEqual(range(1, 1000));
    expect(result.total).toBe(1500);
    expect(sim.requests).toHaveLength(10);
    expect(sim.requests.every((r) => r.variables?.first === PAGE_SIZE)).toBe(true);
  });

  it('fewer matches than batch_size stop at the last page', async () => {
    const result = await search('acme/small', 1000);
    expect(result.nodes.map((n) => n.number)).toEqual(range(1, 130));
    expect(result.total).toBe(130);
    expect(sim.requests.map((r) => r.variables?.first)).toEqual([100, 100]);
  });

  it('a post-filter keeps paging until batch_size accepted results', async () => {
    const result = await searchAll<IssueNode>(
      client,
      SEARCH_ISSUES,
      'repo:acme/big is:issue is:open label:agent-ready sort:created-asc',
      'Issue',
      120,
      undefined,
      (node) => node.number % 2 === 0,
    );
    expect(result.nodes.map((n) => n.number)).toEqual(range(1, 120).map((n) => n * 2));
    expect(sim.requests.map((r) => r.variables?.first)).toEqual([100, 100, 100]);
  });

  it('no match at all costs one request', async () => {
    const result = await search('acme/none', 100);
    expect(result).toEqual({ nodes: [], total: 0, pages: 1, examined: 0 });
    expect(sim.requests).toHaveLength(1);
  });

  it('a github-issues automation with batch_size = 1000 discovers 1,000 of 1,500 issues', async () => {
    const text = `[settings.github]
api_url = "${sim.url}"
[settings.polling]
batch_size = 1000
[repositories.big]
remote = "https://github.com/acme/big.git"
[automations.all]
repository = "big"
repo = "acme/big"
labels = "agent-ready"
prompt = "Fix \${issue_number}"
`;
    const { settings } = loadSettingsFromText(text, '/tmp/curupira-search-test/settings.toml');
    const automation = settings.automations[0];
    if (automation?.triggerType !== 'github-issues') throw new Error('expected a github-issues automation');
    const source = createGitHubIssuesSource(automation, {
      github: () => client,
      clock: new FakeClock(),
      log: silentLogger(),
      service: noService,
    });
    const items = await source.discover({ limit: settings.execution.polling.batch_size });
    expect(items).toHaveLength(1000);
    expect(items.at(-1)?.fields.issue_number).toBe('1000');
    expect(new Set(items.map((i) => i.itemKey)).size).toBe(1000);
    expect(sim.requests).toHaveLength(10);
  });
});
