/**
 * A cross-cutting feature from a test folder, added with `registerFeature`, gates runs, reacts
 * after them and ticks with the watch loop: nothing outside its folder and the feature list knows
 * it (as trigger-contract.test.ts shows for triggers).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { registerFeature } from '../../src/features.js';
import { type HoldMarked, holdMarked } from '../fixtures/features/hold-marked/index.js';
import { createHarness, type Harness, waitFor } from '../helpers/harness.js';
import { startWatching } from '../helpers/watch.js';

let h: Harness | undefined;
let unregister: (() => void) | undefined;
afterEach(async () => {
  unregister?.();
  await h?.cleanup();
  h = undefined;
});

describe('a feature registered from a test folder', () => {
  it('holds what its gate holds, sees every finished run, and ticks with each round', async () => {
    let feature: HoldMarked | undefined;
    unregister = registerFeature((context) => {
      feature = holdMarked(context);
      return feature;
    });
    h = await createHarness({
      issues: [
        { title: 'Fix the crash', labels: ['agent-ready'] },
        { title: 'Not yet [hold]', labels: ['agent-ready'] },
      ],
    });
    const watching = await startWatching(h);
    try {
      await waitFor('one run', () => watching.runs.length === 1, 30_000);
      await watching.round();
      await watching.round();
      expect(feature).toBeDefined();
      // Its gate held the marked issue on every poll that offered it; nothing ran for it.
      expect(feature!.held).toContain('2');
      expect(watching.runs.map((r) => r.itemId)).toEqual(['1']);
      expect((await watching.store.listRuns()).map((r) => r.itemId)).toEqual(['1']);
      // It saw the run that went ahead, as recorded.
      expect(feature!.after.map((r) => [r.itemId, r.status])).toEqual([['1', 'succeeded']]);
      // It ticked once per round of the loop (at least the two waited for).
      expect(feature!.ticks).toBeGreaterThanOrEqual(2);
    } finally {
      await watching.stop();
    }
  });

  it('is gone once unregistered: the marked issue runs', async () => {
    unregister = registerFeature((context) => holdMarked(context));
    unregister();
    unregister = undefined;
    h = await createHarness({ issues: [{ title: 'Now [hold]', labels: ['agent-ready'] }] });
    const result = await h.run();
    expect(result.runs.map((r) => [r.itemId, r.status])).toEqual([['1', 'succeeded']]);
  });
});
