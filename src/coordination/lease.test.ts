import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { FakeClock, systemClock } from '../core/clock.js';
import type { RunRecord, Task } from '../core/types.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import { type Simulator, startSimulator } from '../simulator/index.js';
import { SimWorld } from '../simulator/world.js';
import {
  defaultRunnerId,
  type LeaseDeps,
  Leases,
  leaseBody,
  leaseStateLine,
  parseLeaseState,
  untilText,
} from './lease.js';

const TOKEN = 'ghp_leaseTestToken000000000000000000001';
const START = Date.UTC(2026, 4, 1, 13, 5, 0);

describe('the lease comment', () => {
  it('round-trips values that would break an HTML comment', () => {
    const state = { automation: 'a--b', runner: 'x>y --', run: 'r_1', expires: '2026-05-01T14:05:00.000Z' };
    const line = leaseStateLine(state);
    expect(line.slice(4, -3)).not.toMatch(/--|>/);
    expect(parseLeaseState(`text\n${line}`)).toEqual(state);
  });

  it('has one human line with the expiry in UTC, and a marker the write queue finds', () => {
    const body = leaseBody(
      { automation: 'fix', runner: 'build-1', run: 'r_1', expires: '2026-05-01T14:05:00.000Z' },
      START,
    );
    expect(body.split('\n')[0]).toBe(
      'curupira is working on this: automation `fix`, runner `build-1`, until 14:05 UTC',
    );
    expect(body).toContain('<!-- curupira:lease run=r_1 -->');
    expect(untilText('2026-05-03T09:00:00.000Z', START)).toBe('2026-05-03 09:00 UTC');
  });

  it('ignores malformed markers', () => {
    expect(parseLeaseState('<!-- curupira:lease-state automation=fix run=r_1 -->')).toBeUndefined();
    expect(
      parseLeaseState('<!-- curupira:lease-state automation=fix runner=a run=r expires=soon -->'),
    ).toBeUndefined();
    expect(
      parseLeaseState('<!-- curupira:lease-state automation=fix runner=a run=r evil=1 -->'),
    ).toBeUndefined();
  });

  it('makes a runner id of the host name', () => {
    expect(defaultRunnerId('build-1.example.com')).toBe('build-1.example.com');
    expect(defaultRunnerId('my host!')).toBe('my-host-');
    expect(defaultRunnerId('???')).toBe('curupira');
  });
});

describe('claims against the simulator', () => {
  let sim: Simulator;
  let world: SimWorld;
  let githubNow = START;
  beforeEach(async () => {
    world = new SimWorld();
    world.addRepo('acme/api');
    world.addUser('octocat');
    world.addToken(TOKEN, 'octocat');
    world.addIssue('acme/api', { title: 'x', body: '', labels: [], author: 'octocat' });
    githubNow = START;
    sim = await startSimulator({ world, now: () => githubNow });
  });
  afterEach(async () => {
    await sim.close();
  });

  const automation = {
    id: 'fix',
    config: { lease_ttl: '1 hour', once: false },
  } as unknown as ResolvedAutomation;
  const task = {
    key: 'fix|acme/api|github-issues|1',
    identity: { automationId: 'fix', repo: 'acme/api', taskType: 'github-issues', id: '1' },
  } as unknown as Task;
  const runOf = (id: string) => ({ id }) as RunRecord;

  function leases(
    runner: string,
    clock = new FakeClock(Date.UTC(2030, 0, 1)),
  ): { leases: Leases; edits: string[] } {
    const edits: string[] = [];
    const settings = { automations: [automation], execution: { runner_id: runner } } as unknown as Settings;
    const deps: LeaseDeps = {
      client: createGitHubClient({
        apiUrl: sim.url,
        tokens: staticTokenSource(TOKEN),
        clock: systemClock,
        maxAttempts: 1,
      }),
      clock,
      log: silentLogger(),
      settings: () => settings,
      trust: async () => ({ trustedAuthors: [], minAuthorAssociation: 'COLLABORATOR', teams: new Map() }),
      queueEdit: async (_item, _run, marker, body) => {
        edits.push(`${marker}\n${body}`);
      },
    };
    return { leases: new Leases(deps), edits };
  }

  it('judges expiry by GitHub clock and renews at half-life', async () => {
    // The local clock is years off: only GitHub's `date` header counts.
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const { leases: mine, edits } = leases('build-1', clock);
    const claim = await mine.claim(automation, task, runOf('r_1'));
    expect(claim?.kind).toBe('claimed');
    const state = () => parseLeaseState(world.item('acme/api', 1)!.comments[0]!.body)!;
    expect(state().expires).toBe('2026-05-01T14:05:00.000Z');

    githubNow += 30 * 60_000;
    await clock.advance(30 * 60_000);
    await expect.poll(() => state().expires).toBe('2026-05-01T14:35:00.000Z');
    if (claim?.kind !== 'claimed') return;
    await claim.lease.release('succeeded');
    expect(edits).toHaveLength(1);
    expect(edits[0]).toContain('lease run=r_1\ncurupira worked on this');
    expect(clock.pending).toBe(0);
  });

  it('two runners racing: one wins, the loser deletes its own comment', async () => {
    const a = leases('host-a').leases;
    const b = leases('host-b').leases;
    const [ra, rb] = await Promise.all([
      a.claim(automation, task, runOf('r_a')),
      b.claim(automation, task, runOf('r_b')),
    ]);
    const kinds = [ra?.kind, rb?.kind].sort();
    expect(kinds).toEqual(['claimed', 'leased']);
    expect(world.item('acme/api', 1)!.comments).toHaveLength(1);
    const loser = ra?.kind === 'leased' ? ra : rb;
    expect(loser?.kind === 'leased' && loser.reason).toMatch(
      /^leased by host-[ab] \(automation fix, run r_[ab], until 14:05 UTC\)$/,
    );
    for (const r of [ra, rb]) if (r?.kind === 'claimed') await r.lease.release('succeeded');
  });

  it('what another lease says is shown on one printable line', async () => {
    const expires = new Date(githubNow + 60_000).toISOString();
    world.addComment('acme/api', 1, {
      author: 'octocat',
      body: leaseStateLine({ automation: 'x', runner: 'evil\n<b>host</b>', run: 'r_9', expires }),
    });
    const check = await leases('host-a').leases.check(automation, task);
    expect(check.kind === 'leased' && check.reason).toBe(
      'leased by evil?<b>host</b> (automation x, run r_9, until 13:06 UTC)',
    );
  });

  it('an expired lease does not count; the same runner takes its unexpired lease back', async () => {
    const first = leases('host-a').leases;
    const claimed = await first.claim(automation, task, runOf('r_1'));
    expect(claimed?.kind).toBe('claimed');
    // A restart of host-a: a new Leases, a new run; the same comment is edited for it.
    const again = await leases('host-a').leases.claim(automation, task, runOf('r_2'));
    expect(again).toMatchObject({ kind: 'claimed', takenBack: true });
    expect(world.item('acme/api', 1)!.comments).toHaveLength(1);
    expect(parseLeaseState(world.item('acme/api', 1)!.comments[0]!.body)?.run).toBe('r_2');
    expect((await leases('host-b').leases.check(automation, task)).kind).toBe('leased');
    githubNow += 61 * 60_000;
    expect((await leases('host-b').leases.check(automation, task)).kind).toBe('free');
    for (const r of [claimed, again]) if (r?.kind === 'claimed') await r.lease.release('cancelled');
  });

  it('GitHub unreachable: the claim says so and posts nothing', async () => {
    sim.setWriteFaults({ fraction: 1, status: 502 });
    const result = await leases('host-a').leases.claim(automation, task, runOf('r_1'));
    expect(result?.kind).toBe('unreachable');
    sim.setWriteFaults(null);
    expect(world.item('acme/api', 1)!.comments).toEqual([]);
  });
});
