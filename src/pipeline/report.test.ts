import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { recordReportedResult, reportedResultOf } from './report.js';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-report-'));
  store = await openStore(join(dir, 'state.sqlite3'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function runningRun(): Promise<string> {
  const run = await store.createRun({
    automationId: 'triage',
    taskKey: 'triage:1',
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: '1',
    itemKey: 'issue:1',
    itemTitle: 'Crash',
    itemUrl: 'https://github.com/acme/api/issues/1',
    status: 'running',
  });
  return run.id;
}

describe('the result tool’s seam', () => {
  it('keeps a declared outcome on the running run, and it wins over the final message’s line', async () => {
    const id = await runningRun();
    const answer = await recordReportedResult(
      store,
      id,
      { outcome: 'duplicate', reason: 'same as #12\nsecond line', fields: { duplicate_of: '12' } },
      ['ready-for-agent', 'duplicate'],
    );
    const result = {
      outcome: 'duplicate',
      reason: 'same as #12 | second line',
      fields: { duplicate_of: '12' },
      via: 'tool',
    };
    expect(answer).toEqual({ ok: true, result });
    expect((await store.getRun(id))?.result).toEqual(result);
    expect(await reportedResultOf(store, id, ['ready-for-agent', 'duplicate'], '#1 ready-for-agent')).toEqual(
      {
        kind: 'result',
        result,
      },
    );
  });

  it('refuses an outcome outside the set (naming the set), bad fields, and a finished run', async () => {
    const id = await runningRun();
    expect(await recordReportedResult(store, id, { outcome: 'wontfix' }, ['ready-for-agent'])).toEqual({
      ok: false,
      error: "unknown outcome 'wontfix': report one of ready-for-agent, noop, skipped, failed",
    });
    expect(
      await recordReportedResult(store, id, { outcome: 'noop', fields: { 'Bad Key': 'x' } }, []),
    ).toMatchObject({ ok: false });
    await store.updateRun(id, { status: 'succeeded' });
    expect(await recordReportedResult(store, id, { outcome: 'noop' }, [])).toEqual({
      ok: false,
      error: `run ${id} is succeeded: a result is reported while it runs`,
    });
    expect((await store.getRun(id))?.result).toBeNull();
    // Without a tool result, the line is read.
    expect(await reportedResultOf(store, id, [], 'noop: nothing')).toMatchObject({
      result: { outcome: 'noop', via: 'line' },
    });
  });
});
