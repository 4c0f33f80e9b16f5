/** "Reviewed up to" moves only when a review finished, whatever its kind; the next scope follows it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { reviewDoneKey, reviewedUpTo, settleReview } from './progress.js';
import { incrementalScope, NO_NEW_COMMITS } from './range.js';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-review-progress-'));
  store = await openStore(join(dir, 'state.sqlite3'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const history = {
  isAncestor: async () => true,
  commitsBetween: async () => [],
};

describe('reviewed up to', () => {
  it('starts unset, stays put after a review that did not finish, moves after one that did', async () => {
    expect(await reviewedUpTo(store, 'review-api')).toBeNull();
    expect(await settleReview(store, 'review-api', 'r_1')).toBeUndefined();
    expect(await reviewedUpTo(store, 'review-api')).toBeNull();

    const done = { summary: 'Two problems.', reviewedCommit: 'c'.repeat(40), at: '2025-03-01T10:00:00.000Z' };
    await store.setMeta(reviewDoneKey('r_2'), JSON.stringify(done));
    expect(await settleReview(store, 'review-api', 'r_2')).toEqual(done);
    expect(await reviewedUpTo(store, 'review-api')).toBe('c'.repeat(40));
    expect(await reviewedUpTo(store, 'review-web')).toBeNull();

    // The next incremental review pinned at the same commit has nothing to do.
    expect(await incrementalScope(history, 'c'.repeat(40), await reviewedUpTo(store, 'review-api'))).toEqual({
      kind: 'skip',
      reason: NO_NEW_COMMITS,
    });
  });
});
