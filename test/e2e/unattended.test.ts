/**
 * Issue 15, items 1, 2, 3 and 5 end to end: retries with backoff on an injected clock (and how
 * they feed the failure budget), a silent agent stopped as `stalled`, each provider's real
 * usage-limit message parking its runs while other providers keep running, and auto-pause.
 * Agents are the fake CLIs; GitHub is the simulator; no write request is sent.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Provider } from '../../src/agents/schemas.js';
import { FakeClock } from '../../src/core/clock.js';
import { RESUME_SESSION_PROMPT } from '../../src/engine/executor.js';
import { Engine, type EngineEvent } from '../../src/features.js';
import { pauseReasonKey } from '../../src/retries/unattended.js';
import {
  createHarness,
  fakeProcessAlive,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
  waitFor,
  writeRequests,
} from '../helpers/harness.js';
import { startWatching } from '../helpers/watch.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('retries (injected clock)', () => {
  it('retries a failing task after 10 s then 20 s, resuming its session, until the failure budget escalates it', async () => {
    h = await createHarness({
      issues: [{ title: 'Broken [[fake:fail]]', labels: ['agent-ready'] }],
      agentEnv: { FAKE_AGENT_FAIL_RESUME: '1' },
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const harness = h;
    const store = await harness.openStore();
    const clock = new FakeClock(Date.UTC(2026, 11, 1, 14, 0, 0));
    const start = clock.now();
    const events: EngineEvent[] = [];
    const daemon = await startWatching(harness, {
      store,
      engine: { clock, random: () => 0.5, onEvent: (event) => events.push(event) },
    });
    const { engine, runs } = daemon;
    try {
      await waitFor('the first run', () => runs.length === 1, 30_000);
      expect(runs[0]).toMatchObject({ status: 'failed', attempt: 1, resumed: false });
      expect(runs[0]!.retryAt).toBe(new Date(start + 10_000).toISOString());
      expect(engine.automations()[0]!.retries).toEqual([
        { itemId: '1', item: 'acme/api#1', note: 'retry 2/3 at 14:00:10', at: start + 10_000 },
      ]);
      expect(events[0]).toMatchObject({
        kind: 'retry_scheduled',
        attempt: 2,
        maxAttempts: 3,
        at: start + 10_000,
      });

      // Not before its backoff.
      await clock.advance(9_000);
      // A whole round of the loop at the new time offers what is due: nothing yet.
      expect(await daemon.round()).toMatchObject({ running: [], queued: 0, retrying: 1 });
      expect(runs).toHaveLength(1);
      await clock.advance(1_000);
      await waitFor('the second try', () => runs.length === 2, 30_000);
      expect(runs[1]).toMatchObject({ status: 'failed', attempt: 2, resumed: true });
      expect(runs[1]!.retryAt).toBe(new Date(start + 10_000 + 20_000).toISOString());
      expect((await store.getRun(runs[0]!.id))?.retryAt).toBeNull();

      await clock.advance(19_000);
      expect(await daemon.round()).toMatchObject({ running: [], queued: 0, retrying: 1 });
      expect(runs).toHaveLength(2);
      await clock.advance(1_000);
      await waitFor('the third try', () => runs.length === 3, 30_000);
      // The third failure spends the budget (max_item_failures = 3): escalated, not retried.
      expect(runs[2]).toMatchObject({ status: 'failed', attempt: 3, resumed: true, retryAt: null });
      expect(runs[2]!.reason).toContain('escalated: failed 3 times');
      expect(engine.automations()[0]!.retries).toBeUndefined();

      await clock.advance(10 * 60_000);
      // The item is polled again at the new time (its poll is due) and stays escalated.
      expect(await daemon.round()).toMatchObject({ running: [], queued: 0, retrying: 0 });
      expect(runs).toHaveLength(3);
    } finally {
      await daemon.stop();
      await store.close();
    }
    const agentRuns = harness.agentRuns('claude');
    expect(agentRuns).toHaveLength(3);
    expect(agentRuns.slice(1).map((r) => [r.resumeOf, r.prompt])).toEqual([
      [agentRuns[0]!.sessionId, RESUME_SESSION_PROMPT],
      [agentRuns[0]!.sessionId, RESUME_SESSION_PROMPT],
    ]);
    expect(writeRequests(harness)).toEqual([]);
  }, 120_000);

  it('retries and new items take turns: a new item waits behind at most one retry (max_active_tasks = 1)', async () => {
    h = await createHarness({
      settingsExtra: 'max_active_tasks = 1\nmax_item_failures = 0\npause_after_failures = 0',
      issues: [1, 2, 3, 4, 5].map((n) => ({ title: `Broken ${n} [[fake:fail]]`, labels: ['agent-ready'] })),
      agentEnv: { FAKE_AGENT_FAIL_RESUME: '1' },
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const harness = h;
    const store = await harness.openStore();
    const clock = new FakeClock(Date.UTC(2026, 11, 1, 14, 0, 0));
    const daemon = await startWatching(harness, { store, engine: { clock, random: () => 0.5 } });
    const { runs } = daemon;
    try {
      await waitFor('the first try of each failing item', () => runs.length === 5, 60_000);
      expect(runs.map((r) => [r.itemTitle, r.status, r.attempt])).toEqual(
        [1, 2, 3, 4, 5].map((n) => [`Broken ${n} [[fake:fail]]`, 'failed', 1]),
      );
      // A new item arrives while every retry is due.
      harness.world.addIssue('acme/api', {
        title: 'New work',
        body: '',
        labels: ['agent-ready'],
        author: 'octocat',
      });
      await clock.advance(60_000);
      await waitFor('the new item', () => runs.some((r) => r.itemTitle === 'New work'), 60_000);
      const after = runs.slice(5);
      const at = after.findIndex((r) => r.itemTitle === 'New work');
      expect(after.slice(0, at).every((r) => r.attempt === 2)).toBe(true);
      // It starts after at most one retry, not after all five.
      expect(at).toBeLessThanOrEqual(1);
      expect(after[at]).toMatchObject({ status: 'succeeded', attempt: 1 });
    } finally {
      await daemon.stop();
      await store.close();
    }
  }, 120_000);

  it('a one-shot `curupira run` leaves the retry to the next run: one try per run, and `runs` shows no retry', async () => {
    h = await createHarness({
      issues: [{ title: 'Broken [[fake:fail]]', labels: ['agent-ready'] }],
      agentEnv: { FAKE_AGENT_FAIL_RESUME: '1' },
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const first = onlyRun((await h.run()).runs);
    expect(first).toMatchObject({ status: 'failed', attempt: 1, retryAt: null });
    const second = onlyRun((await h.run()).runs);
    expect(second).toMatchObject({ status: 'failed', resumed: true });
    expect(h.agentRuns('claude')).toHaveLength(2);
  }, 120_000);
});

describe('stalls', () => {
  it('an agent silent for stall_timeout_minutes is stopped with its group and recorded as stalled', async () => {
    h = await createHarness({
      issues: [{ title: 'Quiet [[fake:sleep=60]]', labels: ['agent-ready'] }],
      settingsExtra: 'stall_timeout_minutes = 0.01',
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const began = Date.now();
    const run = onlyRun((await h.run({ killGraceMs: 500 })).runs);
    expect(Date.now() - began).toBeLessThan(30_000);
    expect(run.status).toBe('stalled');
    expect(run.reason).toContain(
      'printed nothing for 0.6 seconds (stall_timeout_minutes), so it was stopped',
    );
    expect(run.reason).toContain('its session is kept');
    const [agent] = h.agentRuns('claude');
    expect(fakeProcessAlive(agent!.pid, join(h!.binDir, 'fake-agent.mjs'))).toBe(false);
    // A stall is a failure: it counts against the budget.
    const store = await h.openStore();
    try {
      expect((await store.getItemFailures(run.taskKey))?.failures).toBe(1);
    } finally {
      await store.close();
    }
  }, 60_000);
});

/** How each fake CLI's limit message gives its reset (see LIMIT_MESSAGES in the fake agent). */
const LIMITS: { provider: Provider; reset: 'exact' | 'minutes' | 'date' | 'backoff' }[] = [
  { provider: 'claude', reset: 'exact' },
  { provider: 'codex', reset: 'minutes' },
  { provider: 'gemini', reset: 'minutes' },
  { provider: 'copilot', reset: 'minutes' },
  { provider: 'cursor', reset: 'date' },
  { provider: 'qwen', reset: 'backoff' },
  { provider: 'opencode', reset: 'backoff' },
  { provider: 'kilo', reset: 'backoff' },
  { provider: 'pi', reset: 'backoff' },
];

describe('usage limits (slow: one world per provider)', () => {
  it.each(LIMITS)(
    '$provider: its real limit message parks the run until the reset',
    async ({ provider, reset }) => {
      const resetAt = Math.floor(Date.now() / 1000) + (reset === 'date' ? 3 * 86_400 : 7200);
      h = await createHarness({
        provider,
        issues: [{ title: 'Limited [[fake:limit]]', labels: ['agent-ready'] }],
        agentEnv: { FAKE_AGENT_LIMIT_RESET: String(resetAt) },
        automation: issueAutomation('fix', { prompt: '${issue_title}' }),
      });
      const run = onlyRun((await h.run()).runs);
      expect(run.status).toBe('parked');
      expect(run.reason).toMatch(/^(usage|rate) limit of /);
      const until = Date.parse(run.retryAt ?? '');
      const finished = Date.parse(run.finishedAt ?? '');
      if (reset === 'exact') expect(until).toBe(resetAt * 1000);
      if (reset === 'minutes') expect(Math.abs(until - resetAt * 1000)).toBeLessThan(2 * 60_000);
      if (reset === 'date') expect(until).toBeGreaterThan(finished + 86_400_000);
      if (reset === 'backoff') {
        expect(until - finished).toBeGreaterThan(14 * 60_000);
        expect(until - finished).toBeLessThanOrEqual(15 * 60_000 + 5_000);
        expect(run.reason).toContain('(no reset time given: a backoff)');
      }
      // A parked run is no failure: the budget is untouched, and the next start waits for the reset.
      const store = await h.openStore();
      try {
        expect(await store.getItemFailures(run.taskKey)).toBeUndefined();
      } finally {
        await store.close();
      }
      expect((await h.run()).runs).toEqual([]);
      expect(h.agentRuns(provider)).toHaveLength(1);
    },
    60_000,
  );

  it('watching (injected clock): the parked task runs again at the reset, resuming its session, with the same try', async () => {
    const now = Date.now();
    const reset = Math.floor(now / 1000) + 3600;
    h = await createHarness({
      issues: [{ title: 'Limited [[fake:limit]]', labels: ['agent-ready'] }],
      agentEnv: { FAKE_AGENT_LIMIT_RESET: String(reset) },
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const harness = h;
    const store = await harness.openStore();
    const clock = new FakeClock(now);
    const daemon = await startWatching(harness, { store, engine: { clock } });
    const { engine, runs } = daemon;
    try {
      await waitFor('the parked run', () => runs.length === 1, 30_000);
      expect(runs[0]).toMatchObject({
        status: 'parked',
        attempt: 1,
        retryAt: new Date(reset * 1000).toISOString(),
      });
      expect(engine.automations()[0]).toMatchObject({
        parkedUntil: reset * 1000,
        retries: [{ itemId: '1', note: expect.stringMatching(/^parked until \d\d:\d\d:\d\d$/) }],
      });
      await clock.advance(reset * 1000 - now - 60_000);
      expect(await daemon.round()).toMatchObject({ running: [], queued: 0, retrying: 1 });
      expect(runs).toHaveLength(1);
      await clock.advance(60_000);
      await waitFor('the run after the reset', () => runs.length === 2, 30_000);
      // The continue prompt carries no directive: the resumed session finishes the task.
      expect(runs[1]).toMatchObject({ status: 'succeeded', resumed: true, attempt: 1 });
    } finally {
      await daemon.stop();
      await store.close();
    }
    expect(harness.agentRuns('claude').map((r) => r.resumeOf !== null)).toEqual([false, true]);
  }, 120_000);

  it("one provider's limit parks only its runs; another provider's automation keeps running", async () => {
    h = await createHarness({
      issues: [
        { title: 'One [[fake:limit]]', labels: ['agent-ready'] },
        { title: 'Two [[fake:limit]]', labels: ['agent-ready'] },
      ],
      settingsExtra: 'max_active_tasks = 1',
    });
    const harness = h;
    harness.configure({
      automation: `${issueAutomation('claude-fix', { prompt: '${issue_title}' })}
${issueAutomation('codex-fix', { prompt: 'Fix issue ${issue_number}', extra: 'profile = "other"' })}
[agents.profiles.other]
provider = "codex"
env = { FAKE_AGENT_LOG = ${JSON.stringify(harness.logDir)} }
sandbox_write_paths = [${JSON.stringify(harness.logDir)}]
`,
    });
    const result = await harness.run();
    const parked = result.runs.filter((r) => r.status === 'parked');
    expect(parked.map((r) => r.automationId)).toEqual(['claude-fix']);
    // The second claude task waited for the reset: no claude agent started after the first.
    expect(harness.agentRuns('claude')).toHaveLength(1);
    const codex = result.runs.filter((r) => r.automationId === 'codex-fix');
    expect(codex.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(harness.agentRuns('codex')).toHaveLength(2);

    const listed = await runBuiltCli(['--config', harness.settingsFile, 'runs'], { env: harness.env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/parked .*claude-fix/);
    expect(listed.stdout).toMatch(/└ parked until \d\d:\d\d:\d\d/);
  }, 120_000);
});

describe('auto-pause', () => {
  it('pauses an automation whose last pause_after_failures runs failed, says why, and resumes on request', async () => {
    h = await createHarness({
      issues: [
        { title: 'Broken one [[fake:fail]]', labels: ['agent-ready'] },
        { title: 'Broken two [[fake:fail]]', labels: ['agent-ready'] },
      ],
      settingsExtra: 'pause_after_failures = 2\nmax_item_failures = 0',
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const harness = h;
    const store = await harness.openStore();
    const events: EngineEvent[] = [];
    let engine: Engine;
    try {
      engine = new Engine({ ...harness.engineOptions(store), onEvent: (event) => events.push(event) });
      const result = await engine.run();
      expect(result.runs.map((r) => r.status)).toEqual(['failed', 'failed']);
      expect(await store.listPaused()).toEqual(['fix']);
      const reason = await store.getMeta(pauseReasonKey('fix'));
      expect(reason).toMatch(
        /^paused automatically: its last 2 runs all failed \(pause_after_failures = 2\), the last \S+ \(failed\); `curupira resume fix` or Resume on the board runs it again$/,
      );
      expect(events).toEqual([{ kind: 'automation_paused', automationId: 'fix', reason }]);
      expect(engine.automations()[0]).toMatchObject({ paused: true, pausedReason: reason });
    } finally {
      await store.close();
    }
    // Paused: the next start runs nothing.
    expect((await harness.run()).runs).toEqual([]);
    expect(harness.agentRuns('claude')).toHaveLength(2);

    const cli = (...args: string[]) =>
      runBuiltCli(['--config', harness.settingsFile, ...args], { env: harness.env });
    const status = await cli('status');
    expect(status.stdout).toMatch(
      /fix\s+github-issues\s+paused: paused automatically: its last 2 runs all failed/,
    );
    expect((await cli('resume', 'fix')).stdout).toContain('Resumed fix');
    const after = await cli('status');
    expect(after.stdout).toMatch(/fix\s+github-issues\s+enabled/);
    // Resumed: the sessions run again.
    expect((await harness.run()).runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
  }, 120_000);
});
