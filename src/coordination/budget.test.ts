/** The local failure budget over a real state file: counting, escalation, its notice, and what lifts it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { Settings } from '../config/types.js';
import type { Item, RunRecord, RunStatus } from '../core/types.js';
import { runInit, taskFromItem } from '../engine/task.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { checkBudget, countRun, failureBudget } from './budget.js';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-budget-'));
  store = await openStore(join(dir, 'state.sqlite3'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function settings(extra = '', automationExtra = ''): Settings {
  return loadSettingsFromText(
    `[settings]
workspace_dir = "ws"
state_db_path = "state.sqlite3"
${extra}
[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "claude"
[agents.defaults]
profile = "main"
[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix \${issue_title}"
${automationExtra}
`,
    join(dir, 'settings.toml'),
  ).settings;
}

function item(body: string): Item {
  return {
    id: '7',
    title: 'Crash',
    url: 'https://github.com/acme/api/issues/7',
    body,
    itemKey: 'issue:7',
    fields: { issue_number: '7', issue_body: body },
  };
}

const AT = '2026-02-01T10:00:00.000Z';

async function finishedRun(s: Settings, body: string, status: RunStatus): Promise<RunRecord> {
  const automation = s.automations[0]!;
  const task = taskFromItem(automation, item(body));
  const run = await store.createRun({ ...runInit(automation, task, status), reason: 'agent exited with 1' });
  return countRun(store, s, automation, task, run);
}

function gate(s: Settings, body: string) {
  const automation = s.automations[0]!;
  return checkBudget(store, s, automation, taskFromItem(automation, item(body)), AT);
}

describe('the local failure budget', () => {
  it('defaults to 3, settings-wide, and an automation overrides it', () => {
    expect(failureBudget(settings(), settings().automations[0]!)).toBe(3);
    const s = settings('max_item_failures = 5', 'max_item_failures = 1');
    expect(failureBudget(s, s.automations[0]!)).toBe(1);
  });

  it('escalates at the third failure, records one escalated run, then holds silently', async () => {
    const s = settings();
    expect((await finishedRun(s, 'b', 'failed')).reason).toBe('agent exited with 1');
    expect(await gate(s, 'b')).toEqual({ kind: 'run' });
    await finishedRun(s, 'b', 'timed_out');
    const third = await finishedRun(s, 'b', 'failed');
    expect(third.reason).toBe(
      `agent exited with 1; escalated: failed 3 times (max_item_failures = 3); 'fix' runs this item no more until \`curupira reset ${third.id}\` (or Retry on the board) or the item's title or body changes`,
    );
    const first = await gate(s, 'b');
    expect(first.kind).toBe('escalated');
    if (first.kind !== 'escalated') return;
    expect(first.run).toMatchObject({ status: 'escalated', finishedAt: AT, startedAt: null });
    expect(first.run.reason).toMatch(/^escalated: failed 3 times \(max_item_failures = 3\)/);
    expect((await gate(s, 'b')).kind).toBe('held');
    expect(await store.countRuns({ status: ['escalated'] })).toBe(1);
  });

  it('cancelled and blocked runs do not count; a success forgets the failures', async () => {
    const s = settings();
    await finishedRun(s, 'b', 'failed');
    await finishedRun(s, 'b', 'cancelled');
    await finishedRun(s, 'b', 'blocked');
    expect((await store.listEscalations()).length).toBe(0);
    const key = taskFromItem(s.automations[0]!, item('b')).key;
    expect((await store.getItemFailures(key))?.failures).toBe(1);
    await finishedRun(s, 'b', 'succeeded');
    expect(await store.getItemFailures(key)).toBeUndefined();
  });

  it('new text lifts the escalation; so does a reset; 0 disables the budget', async () => {
    const s = settings();
    for (let i = 0; i < 3; i += 1) await finishedRun(s, 'old', 'failed');
    expect((await gate(s, 'old')).kind).toBe('escalated');
    expect(await gate(s, 'edited body')).toEqual({ kind: 'run' });
    expect(await store.listEscalations()).toEqual([]);

    for (let i = 0; i < 3; i += 1) await finishedRun(s, 'old', 'failed');
    expect((await gate(s, 'old')).kind).toBe('escalated');
    const off = settings('max_item_failures = 0');
    expect(await gate(off, 'old')).toEqual({ kind: 'run' });
  });
});
