import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunInit, Store } from '../types.js';
import { UNDO_AFTER_6 } from './downgrade.js';
import { openStore } from './open.js';
import { MIGRATIONS } from './schema.js';

let dir: string;
let store: Store;
const now = Date.parse('2026-02-01T10:00:00Z');
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-failures-'));
  store = await openStore(join(dir, 'state.sqlite3'), { now: () => now });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const KEY = '["fix","acme/api","github-issues","7"]';
const RUN: RunInit = {
  automationId: 'fix',
  taskKey: KEY,
  repo: 'acme/api',
  taskType: 'github-issues',
  itemId: '7',
  itemKey: 'issue:7',
  itemTitle: 'Crash',
  itemUrl: 'https://github.com/acme/api/issues/7',
  status: 'failed',
};
function failure(runId: string, textDigest = 'aaaa', limit = 3) {
  return { taskKey: KEY, automationId: 'fix', itemKey: 'issue:7', runId, textDigest, limit };
}

describe('item failures (the local failure budget)', () => {
  it('migrates a file from before the failure budget without losing its runs', async () => {
    // The failure budget is the last migration (issue 12 numbers it 6; see schema.ts).
    const version = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE item_failures'));
    expect(version).toBeGreaterThan(0);
    await store.createRun({ ...RUN, status: 'failed' });
    await store.close();
    const file = join(dir, 'state.sqlite3');
    const db = new Database(file);
    db.exec(`${UNDO_AFTER_6} DROP TABLE item_failures; PRAGMA user_version = ${version};`);
    db.close();
    store = await openStore(file, { now: () => now });
    expect((await store.listRuns()).map((r) => r.status)).toEqual(['failed']);
    expect((await store.recordItemFailure(failure('r1'))).failures).toBe(1);
  });
});
