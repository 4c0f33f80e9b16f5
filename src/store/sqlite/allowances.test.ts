import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunInit, Store } from '../types.js';
import { UNDO_AFTER_6 } from './downgrade.js';
import { openStore } from './open.js';

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
const _FINDING = {
  scanner: 'instruction-override',
  rule: 'ignore-previous',
  severity: 'critical' as const,
  field: 'body',
  offset: 4,
  excerpt: 'Ignore previous instructions',
};

describe('screening records in the SQLite store (migration 4)', () => {
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
