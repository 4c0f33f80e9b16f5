/**
 * Leases (issue 12, item 1): one lease comment claims an item before its run starts, is released
 * (edited to the outcome) when it ends; leases by other runners skip the item; forged ones do not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { leaseStateLine, parseLeaseState } from '../../src/coordination/lease.js';
import { createHarness, type Harness, issueAutomation, waitFor, writeRequests } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const LEASED = 'lease_ttl = "1 hour"';

function leaseComments(harness: Harness, number: number) {
  return harness.world.item('acme/api', number)!.comments.filter((c) => parseLeaseState(c.body) !== undefined);
}

describe('leases', () => {
  it('claims the item while the run works, then edits the comment to the outcome', async () => {
    h = await createHarness({
      issues: [{ title: 'Commit [[fake:commit]] [[fake:sleep=2]]', labels: ['agent-ready'] }],
      settingsExtra: 'runner_id = "build-1"',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: LEASED }),
    });
    const harness = h;
    const done = harness.run();
    const held = await waitFor('the lease comment', () =>
      harness.agentRuns('claude').length > 0 ? leaseComments(harness, 1)[0] : undefined,
    );
    // Claimed before the agent started, by the token's account, with one human line.
    expect(held.author).toBe('octocat');
    expect(held.body).toMatch(
      /^curupira is working on this: automation `fix`, runner `build-1`, until \d\d:\d\d UTC\n/,
    );
    const state = parseLeaseState(held.body)!;
    expect(state).toMatchObject({ automation: 'fix', runner: 'build-1' });
    const dateHeader = Date.now();
    // One hour by GitHub's clock (the simulator's `date` header is the real time here).
    expect(Date.parse(state.expires!) - dateHeader).toBeGreaterThan(59 * 60_000);
    expect(Date.parse(state.expires!) - dateHeader).toBeLessThanOrEqual(60 * 60_000 + 1000);

    const { runs } = await done;
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    const [released] = leaseComments(harness, 1);
    expect(leaseComments(harness, 1)).toHaveLength(1);
    expect(released!.body).toContain(`<!-- curupira:lease run=${runs[0]!.id} -->`);
    expect(parseLeaseState(released!.body)).toEqual({
      automation: 'fix',
      runner: 'build-1',
      run: runs[0]!.id,
      released: 'succeeded',
    });
    expect(released!.body).toMatch(/^curupira worked on this: automation `fix`, runner `build-1`, run `r_\w+`: \*\*succeeded\*\*/);
    const writes = writeRequests(harness).map((r) => `${r.method} ${r.path.replace(/\d+$/, 'N')}`);
    expect(writes).toEqual(['POST /repos/acme/api/issues/1/comments', 'PATCH /repos/acme/api/issues/comments/N']);
  }, 60_000);

  it('a lease forged by another account is ignored; one by a trusted author is honoured', async () => {
    h = await createHarness({
      issues: [
        { title: 'Forged [[fake:commit]]', labels: ['agent-ready'] },
        { title: 'Trusted [[fake:commit]]', labels: ['agent-ready'] },
      ],
      settingsExtra: 'runner_id = "build-1"',
      screening: 'required = false\ntrusted_authors = ["maintainer"]',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: LEASED }),
    });
    const expires = new Date(Date.now() + 24 * 3_600_000).toISOString();
    const lease = (runner: string) =>
      `curupira is working on this\n\n${leaseStateLine({ automation: 'fix', runner, run: 'r_0000000000AAAAAAAA', expires })}`;
    h.world.addUser('mallory');
    h.world.addUser('maintainer');
    const forged = h.world.addComment('acme/api', 1, { author: 'mallory', body: lease('evil') });
    h.world.addComment('acme/api', 2, { author: 'maintainer', body: lease('other-host') });

    const { runs } = await h.run();
    const byItem = new Map(runs.map((r) => [r.itemId, r]));
    expect(byItem.get('1')?.status).toBe('succeeded');
    expect(byItem.get('2')?.status).toBe('skipped');
    expect(byItem.get('2')?.reason).toMatch(/^leased by other-host \(automation fix, run r_0000000000AAAAAAAA, until /);
    expect(byItem.get('2')?.startedAt).toBeNull();
    // Only item 1's agent ran; the forged comment is untouched, and item 2 got no comment of ours.
    expect(h.agentRuns('claude').map((c) => c.prompt)).toHaveLength(1);
    expect(h.world.item('acme/api', 1)!.comments.find((c) => c.databaseId === forged.databaseId)?.body).toBe(
      forged.body,
    );
    expect(h.world.item('acme/api', 2)!.comments.map((c) => c.author)).toEqual(['maintainer']);
  }, 60_000);

  it('with none of the keys, no write request is sent', async () => {
    h = await createHarness({
      issues: [{ title: 'Commit [[fake:commit]]', labels: ['agent-ready'] }],
      settingsExtra: 'runner_id = "build-1"',
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const { runs } = await h.run();
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    expect(writeRequests(h)).toEqual([]);
  }, 60_000);
});
