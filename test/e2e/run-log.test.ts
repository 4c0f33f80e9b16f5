/**
 * The run log (issue 12, item 5): `run_log = true` keeps one `agent:log` issue per
 * `log_window_days` window in the repository, one comment per finished run; across a window
 * boundary (an injected clock) the next issue opens and the old one is closed. A restart within
 * the window goes on writing to the same issue.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { defaultRunnerId } from '../../src/coordination/lease.js';
import { logWindow } from '../../src/coordination/run-log.js';
import type { Clock } from '../../src/core/clock.js';
import { systemClock } from '../../src/core/clock.js';
import { runEngine } from '../../src/features.js';
import { createHarness, type Harness, issueAutomation, onlyRun } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const DAY = 86_400_000;

/** Real time shifted by `offset` (sleeps are real): the engine believes it is another day. */
function shiftedClock(offset: { ms: number }): Clock {
  return { now: () => Date.now() + offset.ms, sleep: (ms, signal) => systemClock.sleep(ms, signal) };
}

describe('the run log (slow)', () => {
  it('one log issue per window with one entry per run; rotates across the window boundary', async () => {
    h = await createHarness({
      issues: [{ title: 'First [[fake:commit]]', labels: ['agent-ready'] }],
      settingsExtra: 'log_window_days = 7',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: 'run_log = true\nonce = true' }),
    });
    const harness = h;
    const window = logWindow(Date.now(), 7);
    const boundary = Date.parse(`${window.end}T00:00:00Z`) + DAY;
    const offset = { ms: boundary - 3_600_000 - Date.now() };
    const run = async () => {
      const store = await harness.openStore();
      try {
        return await runEngine({ ...harness.engineOptions(store), clock: shiftedClock(offset) });
      } finally {
        await store.close();
      }
    };
    const logIssues = () =>
      [...harness.world.repo('acme/api')!.items.values()].filter((i) => i.labels.includes('agent:log'));

    const first = onlyRun((await run()).runs);
    expect(first.status).toBe('succeeded');
    expect(logIssues().map((i) => [i.title, i.state, i.author])).toEqual([
      [`curupira run log: ${window.start} – ${window.end}`, 'OPEN', 'octocat'],
    ]);
    const [old] = logIssues();
    expect(old!.comments.map((c) => c.body.split('\n')[0])).toEqual([
      // …and the runner that ran it (seed 001's `runner`: here the host name, as no runner_id is set).
      `Run \`${first.id}\` · automation \`fix\` · acme/api#1 · **succeeded** · ${/ · (\d+ s|\d+ min \d+ s) · /.exec(old!.comments[0]!.body.split('\n')[0]!)![1]} · runner \`${defaultRunnerId()}\``,
    ]);

    // Two hours later: the next window. A new log issue opens; the old one is closed.
    offset.ms += 2 * 3_600_000;
    const next = logWindow(Date.now() + offset.ms, 7);
    expect(next.start).not.toBe(window.start);
    harness.world.addIssue('acme/api', { title: 'Second [[fake:commit]]', labels: ['agent-ready'] });
    const second = onlyRun((await run()).runs);
    expect(second.status).toBe('succeeded');
    const issues = logIssues().sort((a, b) => a.number - b.number);
    expect(issues.map((i) => [i.title, i.state])).toEqual([
      [`curupira run log: ${window.start} – ${window.end}`, 'CLOSED'],
      [`curupira run log: ${next.start} – ${next.end}`, 'OPEN'],
    ]);
    expect(harness.world.issue('acme/api', issues[0]!.number)?.stateReason).toBe('COMPLETED');
    expect(issues[0]!.comments).toHaveLength(1);
    expect(issues[1]!.comments.map((c) => c.body)).toEqual([
      expect.stringContaining(`Run \`${second.id}\` · automation \`fix\` · acme/api#`),
    ]);

    // A restart within the window: the same issue gets the entry, no third issue.
    harness.world.addIssue('acme/api', { title: 'Third [[fake:commit]]', labels: ['agent-ready'] });
    const third = onlyRun((await run()).runs);
    expect(logIssues()).toHaveLength(2);
    expect(issues[1]!.comments.map((c) => c.body)).toEqual([
      expect.stringContaining(`Run \`${second.id}\``),
      expect.stringContaining(`Run \`${third.id}\``),
    ]);
    // The log issues themselves are never run.
    expect(harness.agentRuns('claude')).toHaveLength(3);
  }, 120_000);
});
