/**
 * Cost budgets end to end (issue 15, item 4): a fake Codex agent reports 2,000,000 input tokens
 * of gpt-5-codex ($2.50 at the built-in price) while it runs. Over `max_cost_per_run` the agent is
 * stopped mid-run with its session kept and the automation parks until the next UTC day (an
 * injected clock), then resumes the session; at 80 % the run gets a warning in the log and its
 * record. Nothing is written to GitHub.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Clock, systemClock } from '../../src/core/clock.js';
import type { BudgetReachedEvent } from '../../src/cost/budget.js';
import { utcDayStart } from '../../src/cost/budget.js';
import { Engine } from '../../src/features.js';
import { createLogger } from '../../src/log.js';
import { createHarness, type Harness, onlyRun, runBuiltCli, writeRequests } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** Real sleeps, with the day the test says. */
function clockAt(now: { ms: number }): Clock {
  return { now: () => now.ms, sleep: (ms, signal) => systemClock.sleep(ms, signal) };
}

async function codexHarness(title: string, settingsExtra: string): Promise<Harness> {
  h = await createHarness({
    provider: 'codex',
    profileExtra: 'model = "gpt-5-codex"',
    settingsExtra,
    issues: [{ title, labels: ['agent-ready'] }],
  });
  return h;
}

async function pass(
  harness: Harness,
  clock: Clock,
  hooks: { onBudgetReached?: (e: BudgetReachedEvent) => void; lines?: string[] } = {},
) {
  const store = await harness.openStore();
  try {
    const log = hooks.lines
      ? createLogger({ console: { write: (t: string) => hooks.lines!.push(t) } as never, format: 'json' })
      : undefined;
    const engine = new Engine({
      ...harness.engineOptions(store, log ? { log } : {}),
      clock,
      ...(hooks.onBudgetReached ? { onBudgetReached: hooks.onBudgetReached } : {}),
    });
    const result = await engine.run();
    const session = await store.getSession(result.runs[0]?.taskKey ?? '');
    return { result, status: engine.automations()[0]!, session };
  } finally {
    await store.close();
  }
}

describe('cost budgets', () => {
  it('max_cost_per_run stops the running agent, keeps its session, parks the automation until the next UTC day, then resumes it', async () => {
    const harness = await codexHarness(
      'Costly [[fake:usage=2000000]] [[fake:sleep=60]]',
      'max_cost_per_run = 1.0',
    );
    // Today (UTC) by the real clock, so that the CLI's `status` (real time) sees the park too.
    const tomorrow = utcDayStart(Date.now()) + 86_400_000;
    const until = new Date(tomorrow).toISOString();
    const now = { ms: Date.now() };
    const reached: BudgetReachedEvent[] = [];
    const first = await pass(harness, clockAt(now), { onBudgetReached: (e) => reached.push(e) });
    const stopped = onlyRun(first.result.runs);
    expect(stopped.status).toBe('cancelled');
    expect(stopped.reason).toBe(
      `budget reached: $2.50 of $1.00 (max_cost_per_run); 'fix' parked until ${until}; the session is kept and resumes then`,
    );
    expect(stopped.costUsd).toBeCloseTo(2.5, 6);
    expect(stopped.model).toBe('gpt-5-codex');
    expect(first.session?.sessionId).toBe(stopped.sessionId);
    expect(reached).toEqual([
      expect.objectContaining({
        budget: 'run',
        automationId: 'fix',
        runId: stopped.id,
        limitUsd: 1,
        parkedUntil: until,
      }),
    ]);
    expect(first.status.budget).toMatchObject({ state: 'parked', parkedUntil: until });
    const cli = (...args: string[]) =>
      runBuiltCli(['--config', harness.settingsFile, ...args], { env: harness.env });
    const status = await cli('status');
    expect(status.stdout).toMatch(
      new RegExp(` {2}fix +github-issues +enabled · parked until ${until} \\(budget reached: `),
    );
    const runs = await cli('runs');
    expect(runs.stdout).toMatch(/ cancelled +\S+ \S+ +\S+ +\$2\.50 +fix /);
    expect((await cli('runs', 'show', stopped.id)).stdout).toContain('  cost:        $2.50 (gpt-5-codex)');

    // Later the same day: parked, so no agent starts (and the saved session waits).
    now.ms = tomorrow - 60_000;
    const parked = await pass(harness, clockAt(now));
    expect(parked.result.runs).toEqual([]);
    expect(parked.status.budget?.state).toBe('parked');
    expect(harness.agentRuns('codex')).toHaveLength(1);

    // The next UTC day: the session resumes (without the directives, so it finishes cheaply).
    now.ms = tomorrow + 60_000;
    const next = await pass(harness, clockAt(now));
    const resumed = onlyRun(next.result.runs);
    expect(resumed).toMatchObject({ status: 'succeeded', resumed: true, sessionId: stopped.sessionId });
    expect(next.status.budget?.state).toBe('ok');
    expect(harness.agentRuns('codex')).toHaveLength(2);
    expect(writeRequests(harness)).toEqual([]);
  }, 120_000);

  it('at 80 % of max_cost_per_run the run finishes with a warning in the log and its record', async () => {
    const harness = await codexHarness(
      'Pricey [[fake:usage=2000000]] [[fake:commit]]',
      'max_cost_per_run = 3.0',
    );
    const lines: string[] = [];
    const { result, status } = await pass(harness, systemClock, { lines });
    const run = onlyRun(result.runs);
    expect(run.status).toBe('succeeded');
    expect(run.reason).toBe('budget warning: 83 % used, $2.50 of $3.00 (max_cost_per_run)');
    // 2,000,000 + 1,200 input tokens (800 cached) and 150 output tokens of gpt-5-codex.
    expect(run.costUsd).toBeCloseTo((2_000_400 * 1.25 + 800 * 0.125 + 150 * 10) / 1e6, 9);
    const warnings = lines
      .map((l) => JSON.parse(l) as { msg: string; note?: string })
      .filter((l) => l.msg === 'Budget 80 % used');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.note).toBe(run.reason);
    expect(status.budget?.state).toBe('ok');
  }, 120_000);

  it('the global max_cost_per_day counts every run: at 80 % the status shows a warning', async () => {
    const harness = await codexHarness(
      'Daily [[fake:usage=2000000]] [[fake:commit]]',
      'max_cost_per_day = 3.0',
    );
    const { result, status } = await pass(harness, systemClock);
    expect(onlyRun(result.runs).status).toBe('succeeded');
    expect(status.budget).toMatchObject({ state: 'warning' });
    expect(status.budget?.spentTodayUsd).toBeCloseTo(onlyRun(result.runs).costUsd!, 9);
  }, 120_000);
});
