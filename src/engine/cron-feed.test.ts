import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { AutomationFor } from '../config/types.js';
import { FakeClock } from '../core/clock.js';
import { silentLogger } from '../log.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { scheduleOf } from '../triggers/cron/item.js';
import { type PollContext, ScheduleFeed } from './feed.js';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-cron-'));
  store = await openStore(join(dir, 'state.sqlite3'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function automation(extra: string, timezone = 'UTC'): AutomationFor<'cron'> {
  const text = `[repositories.api]
remote = "https://github.com/acme/api.git"
[agents.defaults]
timezone = "${timezone}"
[automations.nightly]
repository = "api"
prompt = "Run at \${cron_scheduled_for} (missed: \${cron_missed})"
${extra}
`;
  const [resolved] = loadSettingsFromText(text, join(dir, 'settings.toml')).settings.automations;
  if (resolved?.triggerType !== 'cron') throw new Error('expected a cron automation');
  return resolved;
}

function context(clock: FakeClock, preview = false): PollContext {
  return { store, clock, log: silentLogger(), limit: 100, preview };
}

/** One poll, then (like the engine) the run finishes at once. */
async function pollAndFinish(feed: ScheduleFeed, clock: FakeClock): Promise<string[]> {
  const tasks = await feed.poll(context(clock));
  for (const task of tasks) {
    feed.markDispatched(task);
    await feed.runFinished(task, context(clock));
  }
  return tasks.map((t) => t.item.scheduledFor!);
}

function cronFeed(cron: AutomationFor<'cron'>, intervalSeconds: number): ScheduleFeed {
  return new ScheduleFeed(cron, scheduleOf(cron), intervalSeconds);
}

describe('ScheduleFeed of a cron automation', () => {
  it('fires once per occurrence, in the automation’s timezone', async () => {
    const clock = new FakeClock(Date.parse('2026-01-10T07:00:00Z'));
    const feed = cronFeed(automation('schedule = "0 9 * * *"', 'Europe/Rome'), 1);
    expect(await pollAndFinish(feed, clock)).toEqual([]);
    await clock.set(Date.parse('2026-01-10T08:00:05Z')); // 09:00 in Rome (UTC+1 in winter)
    const [task] = await feed.poll(context(clock));
    expect(task!.item.scheduledFor).toBe('2026-01-10T08:00:00.000Z');
    expect(task!.item.fields.cron_missed).toBe(false);
    expect(task!.identity.id).toBe(String(Date.parse('2026-01-10T08:00:00Z') / 1000));
    feed.markDispatched(task!);
    expect(await feed.poll(context(clock))).toEqual([]);
    await feed.runFinished(task!, context(clock));
    expect(await feed.poll(context(clock))).toEqual([]);
    await clock.set(Date.parse('2026-07-10T07:00:10Z')); // 09:00 in Rome (UTC+2 in summer)
    expect(await pollAndFinish(feed, clock)).toEqual(['2026-07-10T07:00:00.000Z']);
  });

  it('coalesces a long sleep into one occurrence and runs it when missed = "run"', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T10:00:00Z'));
    const feed = cronFeed(automation('schedule = "*/5 * * * *"\nmissed = "run"'), 1);
    await pollAndFinish(feed, clock);
    await clock.advance(3 * 3600_000 + 4 * 60_000); // asleep for three hours: 36 ticks passed
    const tasks = await feed.poll(context(clock));
    expect(tasks.map((t) => t.item.scheduledFor)).toEqual(['2026-03-02T13:00:00.000Z']); // the latest, 240 s late
    expect(tasks[0]!.item.missed).toBe(true);
    expect(tasks[0]!.item.fields.cron_missed).toBe(true);
    expect(await store.listRuns({ automationId: 'nightly' })).toEqual([]);
  });

  it.each(['', 'missed = "run"', 'missed = "skip"'])(
    'a schedule added at 08:08 does not fire (or record) that day’s 03:00, which was before it existed [%s]',
    async (missed) => {
      const clock = new FakeClock(Date.parse('2026-03-02T08:08:00Z'));
      const config = automation(`schedule = "0 3 * * *"\n${missed}`);
      expect(await pollAndFinish(cronFeed(config, 1), clock)).toEqual([]);
      expect(await store.getCronState('nightly')).toMatchObject({ lastScheduledFor: null });
      // A restart later that day still knows when it was first seen (the state keeps it).
      await clock.set(Date.parse('2026-03-02T20:00:00Z'));
      expect(await pollAndFinish(cronFeed(config, 1), clock)).toEqual([]);
      expect(await store.listRuns({ automationId: 'nightly' })).toEqual([]);
      // The next day's fire is the first one, on time.
      await clock.set(Date.parse('2026-03-03T03:00:20Z'));
      const tasks = await cronFeed(config, 1).poll(context(clock));
      expect(tasks.map((t) => [t.item.scheduledFor, t.item.missed])).toEqual([
        ['2026-03-03T03:00:00.000Z', false],
      ]);
    },
  );

  it('a fire that is on time when the schedule is first seen still runs', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T03:01:00Z'));
    const feed = cronFeed(automation('schedule = "0 3 * * *"'), 1);
    expect(await pollAndFinish(feed, clock)).toEqual(['2026-03-02T03:00:00.000Z']);
  });

  it('start_date opens the window before the schedule was first seen', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T08:08:00Z'));
    const feed = cronFeed(automation('schedule = "0 3 * * *"\nstart_date = 2026-03-02'), 1);
    const tasks = await feed.poll(context(clock));
    expect(tasks.map((t) => [t.item.scheduledFor, t.item.missed])).toEqual([
      ['2026-03-02T03:00:00.000Z', true],
    ]);
  });

  it('a tick from before today is not run on first start', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T01:00:00Z'));
    const feed = cronFeed(automation('schedule = "0 3 * * *"'), 1);
    expect(await feed.poll(context(clock))).toEqual([]);
  });

  it('skips a missed fire with missed = "skip" and leaves a run record saying so', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T10:00:00Z'));
    const feed = cronFeed(automation('schedule = "0 * * * *"\nmissed = "skip"'), 1);
    await pollAndFinish(feed, clock);
    await clock.set(Date.parse('2026-03-02T11:03:01Z')); // 181 s after the 11:00 fire
    expect(await feed.poll(context(clock))).toEqual([]);
    const [run] = await store.listRuns({ automationId: 'nightly' });
    expect(run).toMatchObject({ status: 'skipped', scheduledFor: '2026-03-02T11:00:00.000Z' });
    expect(run!.reason).toMatch(/^missed: .* 181 s late .*missed = "skip"/);
    expect(run!.finishedAt).not.toBeNull();
    // The skipped fire is not offered again, and the next one is on time.
    expect(await feed.poll(context(clock))).toEqual([]);
    await clock.set(Date.parse('2026-03-02T12:00:30Z'));
    expect(await pollAndFinish(feed, clock)).toEqual(['2026-03-02T12:00:00.000Z']);
  });

  it('a fire noticed 179 s late is on time', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T10:00:00Z'));
    const feed = cronFeed(automation('schedule = "0 * * * *"'), 1);
    await pollAndFinish(feed, clock);
    await clock.set(Date.parse('2026-03-02T11:02:59Z'));
    const tasks = await feed.poll(context(clock));
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.item.missed).toBe(false);
  });

  it('resumes a claimed occurrence after a restart, without calling it missed', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T10:00:00Z'));
    const config = automation('schedule = "0 * * * *"');
    await pollAndFinish(cronFeed(config, 1), clock);
    await clock.set(Date.parse('2026-03-02T11:00:10Z'));
    const first = await cronFeed(config, 1).poll(context(clock)); // claimed; then the process dies
    expect(first).toHaveLength(1);
    await clock.set(Date.parse('2026-03-02T15:00:00Z')); // restarted four hours later
    const again = await cronFeed(config, 1).poll(context(clock));
    expect(again.map((t) => t.item.scheduledFor)).toEqual(['2026-03-02T11:00:00.000Z']);
    expect(again[0]!.key).toBe(first[0]!.key);
    expect(again[0]!.item.missed).toBe(false);
  });

  it('honours start and end dates (inclusive, in the timezone)', async () => {
    const clock = new FakeClock(Date.parse('2026-04-01T00:00:00Z'));
    const feed = cronFeed(
      automation(
        'schedule = "0 12 * * *"\nstart_date = 2026-04-03\nend_date = 2026-04-04',
        'America/New_York',
      ),
      1,
    );
    const fired: string[] = [];
    for (let day = 1; day <= 6; day += 1) {
      await clock.set(Date.parse(`2026-04-0${day}T16:00:30Z`)); // 12:00 EDT
      fired.push(...(await pollAndFinish(feed, clock)));
    }
    expect(fired).toEqual(['2026-04-03T16:00:00.000Z', '2026-04-04T16:00:00.000Z']);
  });

  it('runs a daily job exactly once across the fall-back night in New York', async () => {
    const clock = new FakeClock(Date.parse('2026-10-31T12:00:00Z'));
    const feed = cronFeed(automation('schedule = "30 1 * * *"', 'America/New_York'), 1);
    const fired: string[] = [];
    for (let t = Date.parse('2026-11-01T04:00:00Z'); t <= Date.parse('2026-11-01T08:00:00Z'); t += 60_000) {
      await clock.set(t);
      fired.push(...(await pollAndFinish(feed, clock)));
    }
    expect(fired).toEqual(['2026-11-01T05:30:00.000Z']); // 01:30 EDT, the first of the two
  });

  it('runs a daily job once on the spring-forward day in Rome, at the first valid time', async () => {
    const clock = new FakeClock(Date.parse('2026-03-28T12:00:00Z'));
    const feed = cronFeed(automation('schedule = "30 2 * * *"', 'Europe/Rome'), 1);
    const fired: string[] = [];
    for (let t = Date.parse('2026-03-29T00:00:00Z'); t <= Date.parse('2026-03-29T04:00:00Z'); t += 60_000) {
      await clock.set(t);
      fired.push(...(await pollAndFinish(feed, clock)));
    }
    expect(fired).toEqual(['2026-03-29T01:00:00.000Z']); // 02:30 does not exist; 03:00 CEST
  });

  it('resets its marks when the schedule changes', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T10:00:00Z'));
    await pollAndFinish(cronFeed(automation('schedule = "0 * * * *"'), 1), clock);
    await clock.set(Date.parse('2026-03-02T10:30:00Z'));
    const changed = cronFeed(automation('schedule = "15 * * * *"'), 1);
    // 10:15 passed before the change: a new baseline starts now, so it is not due.
    expect(await pollAndFinish(changed, clock)).toEqual([]);
    await clock.set(Date.parse('2026-03-02T11:15:20Z'));
    expect(await pollAndFinish(changed, clock)).toEqual(['2026-03-02T11:15:00.000Z']);
  });

  it('previews without writing', async () => {
    const clock = new FakeClock(Date.parse('2026-03-02T10:10:00Z'));
    const feed = cronFeed(automation('schedule = "0 * * * *"\nstart_date = 2026-03-01\nmissed = "skip"'), 1);
    const tasks = await feed.poll(context(clock, true));
    expect(tasks).toHaveLength(0); // the 10:00 fire is due but 600 s late: missed, and skipped
    await clock.set(Date.parse('2026-03-02T11:00:30Z'));
    expect(await feed.poll(context(clock, true))).toHaveLength(1);
    expect(await store.getCronState('nightly')).toBeUndefined();
    expect(await store.listRuns()).toEqual([]);
  });
});
