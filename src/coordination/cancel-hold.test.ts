/**
 * An operator's cancel holds its item on every host that shares the store, on both backends (a
 * fleet keeps its state in PostgreSQL), until a person retries the run.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STORE_BACKENDS, type StoreBackend } from '../../test/helpers/store-backends.js';
import { loadSettingsFromText } from '../config/load.js';
import type { GateRequest, RunOutcome } from '../core/feature.js';
import { runInit } from '../core/task-fields.js';
import { taskFromItem } from '../engine/task.js';
import { silentLogger } from '../log.js';
import { CancelHoldFeature } from './cancel-hold-feature.js';

const { settings } = loadSettingsFromText(
  `[repositories.api]
remote = "https://example.com/acme/api.git"
[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix"
`,
  join('/tmp', 'settings.toml'),
);
const automation = settings.automations[0]!;
const task = taskFromItem(automation, {
  id: '7',
  title: 'Crash',
  url: 'https://github.com/acme/api/issues/7',
  body: '',
  itemKey: 'issue:7',
  fields: { issue_number: '7' },
});

function request(resumed: boolean): GateRequest {
  return { automation, task, resumed, signal: new AbortController().signal };
}

describe.each(STORE_BACKENDS)('an operator’s cancel holds its item ($name)', ({ backend: make }) => {
  let backend: StoreBackend;
  beforeEach(() => {
    backend = make();
  });
  afterEach(async () => {
    await backend.cleanup();
  });

  it('on another host and after a restart, until the run is retried; other cancels do not hold', async () => {
    const here = await backend.open({ reopen: 'fleet' });
    const there = await backend.open({ reopen: 'fleet' });
    const mine = new CancelHoldFeature({ store: here, log: silentLogger() });
    const other = new CancelHoldFeature({ store: there, log: silentLogger() });
    const created = await here.createRun(runInit(automation, task, 'preparing'));
    const run = await here.updateRun(created.id, {
      status: 'cancelled',
      finishedAt: new Date().toISOString(),
    });
    const outcome: RunOutcome = { automation, task, run, renoted: true };

    // Stopped because its item no longer matches: it resumes when the item matches again.
    await mine.afterRun({ ...outcome, cancelledBy: 'unmatched' });
    expect(await other.gate(request(true))).toEqual({ kind: 'go' });

    await mine.afterRun({ ...outcome, cancelledBy: 'operator' });
    for (const resumed of [true, false]) {
      const verdict = await other.gate(request(resumed));
      expect(verdict.kind).toBe('hold');
      expect(verdict.kind === 'hold' ? verdict.previous?.id : undefined).toBe(run.id);
    }
    const restarted = new CancelHoldFeature({ store: here, log: silentLogger() });
    expect((await restarted.gate(request(true))).kind).toBe('hold');

    await other.retried(run);
    expect(await mine.gate(request(true))).toEqual({ kind: 'go' });
    expect(await restarted.gate(request(false))).toEqual({ kind: 'go' });
  });
});
