import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../core/errors.js';
import type { RunInit, Store } from '../types.js';
import { UNDO_AFTER_6 } from './downgrade.js';
import { openStore } from './open.js';
import { SCHEMA_VERSION } from './schema.js';

let dir: string;
let store: Store;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-allow-'));
  store = await openStore(join(dir, 'state.sqlite3'), { now: () => Date.parse('2026-02-01T10:00:00Z') });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const INIT: RunInit = {
  automationId: 'triage',
  taskKey: '["triage","acme/api","github-issues","7"]',
  repo: 'acme/api',
  taskType: 'github-issues',
  itemId: '7',
  itemKey: 'issue:7',
  itemTitle: 'Crash',
  itemUrl: 'https://github.com/acme/api/issues/7',
  status: 'blocked',
};
const FINDING = {
  scanner: 'instruction-override',
  rule: 'ignore-previous',
  severity: 'critical' as const,
  field: 'body',
  offset: 4,
  excerpt: 'Ignore previous instructions',
};

describe('screening records in the SQLite store (migration 4)', () => {
  it('keeps a blocked run’s findings, verdict and digest, and finds it by task and digest', async () => {
    // Screening is migration 4; later migrations (the failure budget) add to it.
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(4);
    const run = await store.createRun({
      ...INIT,
      reason: 'blocked: x',
      screeningFindings: [FINDING],
      screeningReason: 'blocked: x',
      screenedDigest: 'd1',
    });
    expect(run).toMatchObject({
      screeningFindings: [FINDING],
      screeningReason: 'blocked: x',
      screenedDigest: 'd1',
    });
    expect((await store.findBlockedRun(INIT.taskKey, 'd1'))?.id).toBe(run.id);
    expect(await store.findBlockedRun(INIT.taskKey, 'd2')).toBeUndefined();
    const other = await store.createRun({ ...INIT, status: 'succeeded', screenedDigest: 'd3' });
    expect(await store.findBlockedRun(INIT.taskKey, 'd3')).toBeUndefined();
    expect((await store.getRun(other.id))?.screeningFindings).toBeNull();
  });

  it('an allowance lets that digest through exactly once, and only blocked runs can be allowed', async () => {
    const run = await store.createRun({ ...INIT, screenedDigest: 'd1' });
    const allowance = await store.addAllowance(run.id, 'alice');
    expect(allowance).toMatchObject({
      runId: run.id,
      taskKey: INIT.taskKey,
      textDigest: 'd1',
      allowedBy: 'alice',
      allowedAt: '2026-02-01T10:00:00.000Z',
      usedAt: null,
    });
    expect(await store.listAllowances({ pending: true })).toHaveLength(1);
    expect(await store.takeAllowance(INIT.taskKey, 'other-text')).toBeUndefined();
    expect((await store.takeAllowance(INIT.taskKey, 'd1'))?.usedAt).toBe('2026-02-01T10:00:00.000Z');
    expect(await store.takeAllowance(INIT.taskKey, 'd1')).toBeUndefined();
    expect(await store.listAllowances({ pending: true })).toEqual([]);
    expect(await store.listAllowances({ runId: run.id })).toHaveLength(1);
    const ok = await store.createRun({ ...INIT, status: 'succeeded' });
    await expect(store.addAllowance(ok.id, 'alice')).rejects.toThrow(StateError);
    await expect(store.addAllowance('r_nope', 'alice')).rejects.toThrow(/does not exist/);
  });

  it('migrates a version-3 file without losing its runs', async () => {
    await store.createRun({ ...INIT, status: 'succeeded' });
    await store.close();
    const file = join(dir, 'state.sqlite3');
    const db = new Database(file);
    db.exec(`${UNDO_AFTER_6} DROP TABLE IF EXISTS item_failures; DROP TABLE IF EXISTS writes; DROP TABLE allowances; DROP INDEX runs_blocked_by_task;
      ALTER TABLE runs DROP COLUMN screening_findings; ALTER TABLE runs DROP COLUMN screening_reason;
      ALTER TABLE runs DROP COLUMN screened_digest; PRAGMA user_version = 3;`);
    db.close();
    store = await openStore(file);
    const [run] = await store.listRuns();
    expect(run).toMatchObject({ status: 'succeeded', screeningFindings: null, screenedDigest: null });
    expect(await store.listAllowances({})).toEqual([]);
  });
});
