import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../core/clock.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { createFollower } from './follow.js';

const TOKEN = 'ghp_followTestToken000000000000000000001';
let dir: string;
let sim: Simulator;
let world: SimWorld;
let store: Store;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-follow-'));
  world = new SimWorld();
  world.addToken(TOKEN, 'octocat');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Crash' });
  sim = await startSimulator({ world });
  store = await openStore(join(dir, 'state.sqlite3'));
});

afterEach(async () => {
  await store.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

/** A succeeded run of issue #1 whose delivery opened pull request #2 (not linked to the issue). */
async function delivered(): Promise<string> {
  const run = await store.createRun({
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: '1',
    itemKey: 'issue:1',
    itemTitle: 'Crash',
    itemUrl: 'https://github.com/acme/api/issues/1',
    status: 'succeeded',
  });
  const pr = world.addPullRequest('acme/api', {
    title: 'Fix',
    headRefName: 'curupira/fix/x',
    author: 'octocat',
  });
  await store.beginPullRequest({
    runId: run.id,
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: 'curupira/fix/x',
  });
  await store.updatePullRequest(run.id, { number: pr.number, state: 'open', headSha: 'a'.repeat(40) });
  return run.id;
}

function follower() {
  const tokens = staticTokenSource(TOKEN);
  return createFollower({
    store,
    clock: systemClock,
    log: silentLogger(),
    github: createGitHubClient({ apiUrl: sim.url, tokens, maxAttempts: 1 }),
    intervalSeconds: () => 0,
    paceMs: 0,
  });
}

describe('following delivered pull requests', () => {
  it('open: nothing changes and nothing is written', async () => {
    const runId = await delivered();
    expect(await follower().sweep()).toEqual({ checked: 1, merged: 0, closed: 0 });
    expect((await store.getPullRequest(runId))!.state).toBe('open');
    expect(sim.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('merged: the delivery is merged, the run says so, and the issue GitHub left open is closed as completed', async () => {
    const runId = await delivered();
    world.mergePullRequest('acme/api', 2);
    expect(world.issue('acme/api', 1)!.state).toBe('OPEN');
    expect((await follower().sweep()).merged).toBe(1);
    expect((await store.getPullRequest(runId))!.state).toBe('merged');
    expect((await store.getRun(runId))!.reason).toMatch(/^merged: pull request #2 merged at /);
    expect(world.issue('acme/api', 1)).toMatchObject({ state: 'CLOSED', stateReason: 'COMPLETED' });
  });

  it('closed unmerged: needs a person, with one comment however often the sweep runs', async () => {
    const runId = await delivered();
    world.closePullRequest('acme/api', 2);
    const sweeper = follower();
    expect((await sweeper.sweep()).closed).toBe(1);
    await sweeper.sweep();
    await follower().sweep();
    expect((await store.getPullRequest(runId))!.state).toBe('needs_human');
    const comments = world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('closed without being merged');
    expect(comments[0]!.body).toContain(`<!-- curupira:closed run=${runId} -->`);
    expect(world.issue('acme/api', 1)!.state).toBe('OPEN');
  });
});
