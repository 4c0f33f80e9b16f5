/** Daily budgets over a real state file and an injected clock: warnings, parks, the next UTC day. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { FakeClock } from '../core/clock.js';
import { runInit, taskFromItem } from '../engine/task.js';
import { silentLogger } from '../log.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { type BudgetReachedEvent, CostBudgets } from './budget.js';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-cost-'));
  store = await openStore(join(dir, 'state.sqlite3'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function settings(extra: string, automationExtra = ''): Settings {
  const automation = (id: string) => `[automations.${id}]
repository = "api"
schedule = "0 3 * * *"
prompt = "Tidy"
${automationExtra}
`;
  return loadSettingsFromText(
    `[settings]
${extra}
[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "codex"
model = "gpt-5-codex"
[agents.defaults]
profile = "main"
${automation('a')}
${automation('b')}
`,
    join(dir, 'settings.toml'),
  ).settings;
}

/** $1.25 per million input tokens (gpt-5-codex): USD → a usage total. */
function usd(amount: number) {
  return { inputTokens: Math.round(amount * 800_000), cachedInputTokens: 0, outputTokens: 0 };
}

/** A finished run of `automationId` that started at `at` and cost `cost`. */
async function pastRun(s: Settings, automationId: string, at: string, cost: number): Promise<void> {
  const automation = s.automations.find((a) => a.id === automationId)!;
  const item = { id: at, title: 't', url: 'u', body: '', itemKey: `cron:${at}`, fields: {} };
  const run = await store.createRun(runInit(automation, taskFromItem(automation, item), 'succeeded'));
  await store.updateRun(run.id, { startedAt: at, costUsd: cost });
}

describe('daily budgets', () => {
  it('counts today’s finished runs and live spend; warns at 80 %, stops and parks at 100 %, lifts the next UTC day', async () => {
    const s = settings('max_cost_per_automation_per_day = 5.0');
    const clock = new FakeClock(Date.parse('2026-06-01T20:00:00Z'));
    await pastRun(s, 'a', '2026-05-31T23:00:00.000Z', 100); // yesterday: does not count
    await pastRun(s, 'a', '2026-06-01T08:00:00.000Z', 3);
    const reached: BudgetReachedEvent[] = [];
    const budgets = new CostBudgets({
      store,
      clock,
      log: silentLogger(),
      settings: () => s,
      onBudgetReached: (e) => reached.push(e),
    });
    await budgets.refresh();
    const [a, b] = s.automations as [Settings['automations'][0], Settings['automations'][0]];
    expect(budgets.status(a)).toEqual({ spentTodayUsd: 3, limitPerDayUsd: 5, state: 'ok' });

    const one = budgets.meter(a, 'run-1');
    expect(one.usage(usd(1.2))).toEqual({ cost: expect.closeTo(1.2, 9) });
    expect(budgets.status(a).state).toBe('warning');
    expect(one.warning()).toBe('budget warning: 84 % used, $4.20 of $5.00 (max_cost_per_automation_per_day)');
    // A second run of the same automation takes it over: it stops, and so does the first at its next event.
    const two = budgets.meter(a, 'run-2');
    expect(two.usage(usd(1)).stop).toBe(
      "budget reached: $5.20 of $5.00 (max_cost_per_automation_per_day); 'a' parked until 2026-06-02T00:00:00.000Z",
    );
    expect(one.usage(usd(1.3)).stop).toContain('budget reached');
    expect(reached).toHaveLength(1);
    expect(reached[0]).toMatchObject({
      budget: 'automation',
      automationId: 'a',
      runId: 'run-2',
      limitUsd: 5,
    });
    expect(budgets.parked('a')?.until).toBe('2026-06-02T00:00:00.000Z');
    expect(budgets.parked('b')).toBeUndefined();
    expect(budgets.status(b).state).toBe('ok');
    one.end();
    two.end();

    // A restart the same day keeps the park (it is in the state file).
    const again = new CostBudgets({ store, clock, log: silentLogger(), settings: () => s });
    await again.refresh();
    expect(again.parked('a')?.reason).toContain('budget reached');

    await clock.advance(4 * 3_600_000 + 60_000);
    expect(await again.unparked()).toEqual(['a']);
    expect(again.parked('a')).toBeUndefined();
    expect(again.status(a)).toEqual({ spentTodayUsd: 0, limitPerDayUsd: 5, state: 'ok' });
    expect(await again.unparked()).toEqual([]);
  });

  it('the global [settings] max_cost_per_day parks every automation; an automation’s own budget wins over the default', async () => {
    const s = settings(
      'max_cost_per_day = 2.0\nmax_cost_per_automation_per_day = 100',
      'max_cost_per_day = 50',
    );
    const clock = new FakeClock(Date.parse('2026-06-01T10:00:00Z'));
    const budgets = new CostBudgets({ store, clock, log: silentLogger(), settings: () => s });
    await budgets.refresh();
    const [a] = s.automations;
    expect(budgets.status(a!).limitPerDayUsd).toBe(50);
    const meter = budgets.meter(a!, 'run-1');
    expect(meter.usage(usd(2)).stop).toBe(
      'budget reached: $2.00 of $2.00 ([settings] max_cost_per_day); every automation parked until 2026-06-02T00:00:00.000Z',
    );
    expect(budgets.parked('a')).toBeDefined();
    expect(budgets.parked('b')).toBeDefined();
  });

  it('a model without a price costs nothing against a budget (unknown, not zero)', async () => {
    const s = settings('max_cost_per_run = 0.01');
    const clock = new FakeClock(Date.parse('2026-06-01T10:00:00Z'));
    const budgets = new CostBudgets({ store, clock, log: silentLogger(), settings: () => s });
    await budgets.refresh();
    const automation = {
      ...s.automations[0]!,
      profile: { ...s.automations[0]!.profile, model: 'local-llm' },
    };
    expect(budgets.meter(automation, 'run-1').usage(usd(100))).toEqual({ cost: null });
    expect(budgets.parked('a')).toBeUndefined();
  });
});
