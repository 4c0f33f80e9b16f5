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
});
