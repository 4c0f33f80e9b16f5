import { describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { FakeClock } from '../core/clock.js';
import { GitHubRateLimitError } from '../core/errors.js';
import type { Item } from '../core/types.js';
import { silentLogger } from '../log.js';
import type { Store } from '../store/types.js';
import type { DiscoverRequest, TriggerSource } from '../triggers/source.js';
import { EventFeed, type PollContext } from './feed.js';

function automation() {
  const { settings } = loadSettingsFromText(
    `[repositories.api]
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
    '/tmp/settings.toml',
  );
  return settings.automations[0]!;
}

function item(n: number): Item {
  return {
    id: String(n),
    title: `Issue ${n}`,
    url: `https://example.com/${n}`,
    body: '',
    itemKey: `issue:${n}`,
    fields: { issue_number: String(n) },
  };
}

function context(clock: FakeClock): PollContext {
  return { store: {} as Store, clock, log: silentLogger(), limit: 2, preview: false };
}

describe('EventFeed', () => {
  it('times the wait after a failed poll from when the failure came back, not from the request', async () => {
    const clock = new FakeClock();
    const source: TriggerSource = {
      async discover() {
        // A request that took a minute of retries before it failed.
        await clock.advance(60_000);
        throw new Error('GitHub is down');
      },
    };
    const feed = new EventFeed(automation(), source, 30);
    await expect(feed.poll(context(clock))).rejects.toThrow('GitHub is down');
    expect(feed.nextPollAt).toBe(clock.now() + 30_000);
  });

  it('after a rate limit the client gave up on, waits for its reset, not just the backoff', async () => {
    const clock = new FakeClock();
    const resetAt = new Date(clock.now() + 3_600_000);
    const source: TriggerSource = {
      async discover() {
        throw new GitHubRateLimitError('GitHub rate limit exhausted', { resetAt });
      },
    };
    const feed = new EventFeed(automation(), source, 30);
    await expect(feed.poll(context(clock))).rejects.toThrow('rate limit exhausted');
    expect(feed.nextPollAt).toBe(resetAt.getTime());
  });

  it('pages past items it already dispatched, and reports what waits beyond the batch', async () => {
    const clock = new FakeClock();
    const all = [1, 2, 3, 4, 5].map(item);
    const requests: DiscoverRequest[] = [];
    const source: TriggerSource = {
      async discover(request) {
        requests.push(request);
        const out: Item[] = [];
        let examined = 0;
        for (const candidate of all) {
          if (out.length >= request.limit) break;
          examined += 1;
          if (request.wanted && !request.wanted(candidate)) continue;
          out.push(candidate);
        }
        request.onTotal?.({ matching: all.length, examined });
        return out;
      },
    };
    const feed = new EventFeed(automation(), source, 30);
    const first = await feed.poll(context(clock));
    expect(first.map((t) => t.item.id)).toEqual(['1', '2']);
    expect(feed.waiting).toBe(3);
    for (const task of first) feed.markDispatched(task);
    const second = await feed.poll(context(clock));
    expect(second.map((t) => t.item.id)).toEqual(['3', '4']);
    expect(feed.waiting).toBe(1);
  });

  it('knows which items its last search saw matching, dispatched or not, and a 304 keeps that true', async () => {
    const clock = new FakeClock();
    let matching = [1, 2, 3].map(item);
    let changed = true;
    let searches = 0;
    const source: TriggerSource = {
      async discover(request) {
        searches += 1;
        const out: Item[] = [];
        for (const candidate of matching) {
          if (out.length >= request.limit) break;
          if (request.wanted && !request.wanted(candidate)) continue;
          out.push(candidate);
        }
        return out;
      },
      async probe() {
        return { changed, etag: 'e1' };
      },
    };
    const feed = new EventFeed(automation(), source, 30, 600_000);
    const first = await feed.poll(context(clock));
    for (const task of first) feed.markDispatched(task);
    const [one, two] = first;
    const start = clock.now();
    // The second search pages past 1 and 2 (dispatched) and still saw them match.
    await clock.advance(30_000);
    const second = await feed.poll(context(clock));
    expect(second.map((t) => t.item.id)).toEqual(['3']);
    for (const task of second) feed.markDispatched(task);
    expect([one, two].map((t) => feed.matchedSince(t!.key, start + 30_000))).toEqual([true, true]);
    // Nothing changed since (a 304): still true a poll later.
    changed = false;
    await clock.advance(60_000);
    await feed.poll(context(clock));
    expect(searches).toBe(2);
    expect(feed.matchedSince(one!.key, start + 90_000)).toBe(true);
    // Issue 1 closed: the next search no longer returns it.
    changed = true;
    matching = [2, 3].map(item);
    await clock.advance(120_000);
    await feed.poll(context(clock));
    expect(feed.matchedSince(one!.key, start + 210_000)).toBe(false);
    expect(feed.matchedSince(two!.key, start + 210_000)).toBe(true);
    expect(feed.matchedSince(two!.key, start + 210_001)).toBe(false);
    // A person's "Run now" searches even when the probe says nothing changed.
    changed = false;
    await clock.advance(30_000);
    await feed.poll(context(clock));
    expect(searches).toBe(3);
    feed.searchNow();
    await clock.advance(30_000);
    await feed.poll(context(clock));
    expect(searches).toBe(4);
    // Once: the poll after it trusts the probe again.
    await clock.advance(30_000);
    await feed.poll(context(clock));
    expect(searches).toBe(4);
  });
});
