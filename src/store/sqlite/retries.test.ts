/** Migration 10 (issue 15): a run's try number and when its task runs again by itself. */
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
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-retries-'));
  store = await openStore(join(dir, 'state.sqlite3'));
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const RUN: RunInit = {
  automationId: 'fix',
  taskKey: '["fix","acme/api","github-issues","7"]',
  repo: 'acme/api',
  taskType: 'github-issues',
  itemId: '7',
  itemKey: 'issue:7',
  itemTitle: 'Crash',
  itemUrl: 'https://github.com/acme/api/issues/7',
  status: 'failed',
};

describe('retries in the SQLite store (migration 7)', () => {
  it('migrates a file from before migration 7 without losing its runs', async () => {
    await store.createRun(RUN);
    await store.close();
    const version = MIGRATIONS.findIndex((m) => m.includes('ADD COLUMN retry_at'));
    expect(version).toBe(6);
    const file = join(dir, 'state.sqlite3');
    const db = new Database(file);
    // Every later migration is undone too (downgrade.ts), retries last.
    db.exec(`${UNDO_AFTER_6} PRAGMA user_version = ${version};`);
    db.close();
    store = await openStore(file);
    expect((await store.listRuns()).map((r) => [r.status, r.attempt, r.retryAt])).toEqual([
      ['failed', 1, null],
    ]);
  });
});
