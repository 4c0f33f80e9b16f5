import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../index.js';
import type { Store } from '../types.js';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-prstore-'));
  store = await openStore(join(dir, 'state.sqlite3'));
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function delivery(): Promise<string> {
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
  await store.beginPullRequest({
    runId: run.id,
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: 'curupira/fix/1',
  });
  return run.id;
}

describe('pull request gates and marks (migration 11)', () => {
  it('keeps a gate with its own since-when, apart from the lifecycle state', async () => {
    const runId = await delivery();
    const begun = await store.getPullRequest(runId);
    expect(begun?.gate).toBeNull();
    expect(begun?.gateSince).toBeNull();
    const open = await store.updatePullRequest(runId, { state: 'open', number: 2 });
    const gated = await store.updatePullRequest(runId, { gate: 'ci_failing', gateDetail: 'test failed' });
    expect(gated.state).toBe('open');
    expect(gated.since).toBe(open.since);
    expect(gated.gate).toBe('ci_failing');
    expect(gated.gateDetail).toBe('test failed');
    expect(gated.gateSince).not.toBeNull();
    // The same gate again does not move its since-when.
    const again = await store.updatePullRequest(runId, { gate: 'ci_failing', gateDetail: 'still' });
    expect(again.gateSince).toBe(gated.gateSince);
    expect(again.gateDetail).toBe('still');
  });

  it('sets, replaces, lists and deletes marks per delivery', async () => {
    const runId = await delivery();
    expect(await store.getPullRequestMark(runId, 'reviews')).toBeUndefined();
    await store.setPullRequestMark(runId, 'reviews', '10');
    const replaced = await store.setPullRequestMark(runId, 'reviews', '12');
    expect(replaced.value).toBe('12');
    await store.setPullRequestMark(runId, 'rounds', '1');
    expect((await store.listPullRequestMarks(runId)).map((m) => [m.key, m.value])).toEqual([
      ['reviews', '12'],
      ['rounds', '1'],
    ]);
    expect(await store.deletePullRequestMark(runId, 'rounds')).toBe(true);
    expect(await store.deletePullRequestMark(runId, 'rounds')).toBe(false);
    expect((await store.getPullRequestMark(runId, 'reviews'))?.value).toBe('12');
    expect(await store.listPullRequestMarks('no-such-run')).toEqual([]);
  });
});
