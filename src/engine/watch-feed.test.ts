import { describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { FakeClock } from '../core/clock.js';
import type { Item, RunRecord } from '../core/types.js';
import { silentLogger } from '../log.js';
import type { Store } from '../store/types.js';
import type { PollContext, WatchLook } from '../triggers/types.js';
import { WatchFeed } from './watch-feed.js';

const [automation] = loadSettingsFromText(
  `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
prompt = "Review \${review_range}"
`,
  '/work/settings.toml',
).settings.automations;

function item(key: string): Item {
  return { id: key.replace(/[^a-z0-9]/g, '-'), title: key, url: '', body: '', itemKey: key, fields: {} };
}

/** A watch whose head does not move: every look finds the same review; a scan asked is its own item. */
function feed() {
  const looks: (string | undefined)[] = [];
  const watch = new WatchFeed(
    automation!,
    {
      scans: ['baseline'],
      async look(_context: PollContext, asked?: string): Promise<WatchLook> {
        looks.push(asked);
        return { item: item(asked ? `review:${asked}:abc` : 'review:incremental:abc') };
      },
    },
    60,
  );
  return { watch, looks };
}

/** The state's meta table, as much of a store as a watch uses. */
function metaStore(meta = new Map<string, string>()): Store {
  return {
    getMeta: async (key: string) => meta.get(key),
    setMeta: async (key: string, value: string) => {
      meta.set(key, value);
    },
  } as unknown as Store;
}

const context: PollContext = {
  store: metaStore(),
  clock: new FakeClock(0),
  log: silentLogger(),
  limit: 10,
  preview: false,
};

describe('WatchFeed: a scan asked now', () => {
  it('runs whatever was offered before, looks at once, and the watch’s own looks wait until it ends', async () => {
    const { watch, looks } = feed();
    expect(watch.scans).toEqual(['baseline']);
    const [own] = await watch.poll(context);
    watch.markDispatched(own!);
    // The same head again: not offered twice.
    expect(await watch.poll(context)).toEqual([]);

    watch.askScan('baseline');
    expect(watch.nextPollAt).toBe(0);
    const [asked] = await watch.poll(context);
    expect(asked!.item.itemKey).toBe('review:baseline:abc');
    expect(looks.at(-1)).toBe('baseline');
    watch.markDispatched(asked!);

    // Queued or running: the watch's own looks wait (no look is made at all).
    const before = looks.length;
    expect(await watch.poll(context)).toEqual([]);
    expect(looks).toHaveLength(before);

    // Asked again at the same head, while the first waits: it is offered (the scheduler dedupes).
    watch.askScan('baseline');
    expect(await watch.poll(context)).toHaveLength(1);

    await watch.runFinished(asked!, context);
    expect(watch.nextPollAt).toBe(0);
    expect(await watch.poll(context)).toHaveLength(1);
    expect(looks.at(-1)).toBeUndefined();
  });

  it('a preview (run --dry-run) never takes the asked scan', async () => {
    const { watch, looks } = feed();
    watch.askScan('baseline');
    await watch.poll({ ...context, preview: true });
    expect(looks).toEqual([undefined]);
    // Still asked: the next real poll takes it.
    expect((await watch.poll(context))[0]!.item.itemKey).toBe('review:baseline:abc');
  });

  it('a scan asked whose look fails stays asked, and is looked for again soon', async () => {
    const looks: (string | undefined)[] = [];
    let fail = true;
    const watch = new WatchFeed(
      automation!,
      {
        scans: ['baseline'],
        async look(_context: PollContext, asked?: string): Promise<WatchLook> {
          looks.push(asked);
          if (fail) throw new Error('GitHub answered 502');
          return { item: item(asked ? `review:${asked}:abc` : 'review:incremental:abc') };
        },
      },
      600,
    );
    watch.askScan('baseline');
    expect(await watch.poll(context)).toEqual([]);
    // Not a whole interval (600 s) later: within the retry delay.
    expect(watch.nextPollAt).toBeLessThanOrEqual(context.clock.now() + 30_000);
    fail = false;
    const [asked] = await watch.poll(context);
    expect(asked!.item.itemKey).toBe('review:baseline:abc');
    expect(looks).toEqual(['baseline', 'baseline']);
  });

  it('a scan asked whose run had not started is asked again after a restart, and not once it ran', async () => {
    const meta = new Map<string, string>();
    const own = { ...context, store: metaStore(meta) };
    const before = feed();
    before.watch.askScan('baseline');
    const [asked] = await before.watch.poll(own);
    expect(asked!.item.itemKey).toBe('review:baseline:abc');
    // curupira stops while the scan waits for a slot: the next process's watch asks it again.
    const after = feed();
    const [again] = await after.watch.poll(own);
    expect(again!.item.itemKey).toBe('review:baseline:abc');
    expect(after.looks).toEqual(['baseline']);
    after.watch.markDispatched(again!);
    await after.watch.runFinished(again!, own);
    // It ran: a later start does not ask it again.
    const later = feed();
    const [plain] = await later.watch.poll(own);
    expect(plain!.item.itemKey).toBe('review:incremental:abc');
    expect(later.looks).toEqual([undefined]);
  });

  it('a skip recorded before a restart, at the same head, is not recorded again', async () => {
    const runs: RunRecord[] = [];
    const store = {
      ...metaStore(),
      createRun: async (init: Partial<RunRecord>) => {
        const run = { ...init, id: `r_${runs.length}` } as RunRecord;
        runs.unshift(run);
        return run;
      },
      updateRun: async (id: string, patch: Partial<RunRecord>) => {
        const at = runs.findIndex((r) => r.id === id);
        runs[at] = { ...runs[at]!, ...patch };
        return runs[at]!;
      },
      listRuns: async (filter: { limit?: number }) => runs.slice(0, filter.limit ?? runs.length),
    } as unknown as Store;
    const own = { ...context, store };
    const skipping = () =>
      new WatchFeed(
        automation!,
        {
          async look(): Promise<WatchLook> {
            return { item: item(`review:incremental:${head}`), skip: 'No new commits since the last review' };
          },
        },
        60,
      );
    let head = 'abc';
    await skipping().poll(own);
    expect(runs.map((r) => r.status)).toEqual(['skipped']);
    // Restarted at the same head: nothing new to say.
    await skipping().poll(own);
    expect(runs).toHaveLength(1);
    // A new head that is skipped too is recorded.
    head = 'def';
    await skipping().poll(own);
    expect(runs.map((r) => r.itemKey)).toEqual(['review:incremental:def', 'review:incremental:abc']);
  });
});
