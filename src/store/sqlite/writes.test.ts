import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerSecret } from '../../security/redact.js';
import { openStore } from '../index.js';
import type { Store } from '../types.js';
import { UNDO_AFTER_6 } from './downgrade.js';

let dir: string;
let store: Store;
const NOW = Date.parse('2026-02-01T10:00:00Z');
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-writes-'));
  store = await openStore(join(dir, 'state.sqlite3'), { now: () => NOW });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const COMMENT = {
  marker: 'result:r_1',
  repo: 'acme/api',
  number: 7,
  write: { kind: 'comment', body: 'done' },
} as const;

// What the write queue does on either backend is in src/store/queues.contract.test.ts.
describe('the write queue table (migration 5)', () => {
  it('a secret in a queued body is redacted before it reaches the file', async () => {
    const secret = 'ghp_queueSecret1234567890abcdef';
    registerSecret(secret);
    const queued = await store.enqueueWrite({
      ...COMMENT,
      write: { kind: 'comment', body: `token ${secret}` },
    });
    expect(JSON.stringify(queued.write)).not.toContain(secret);
  });

  it('migrates a version-4 file', async () => {
    await store.enqueueWrite(COMMENT);
    await store.close();
    const file = join(dir, 'state.sqlite3');
    const db = new Database(file);
    db.exec(
      `${UNDO_AFTER_6} DROP TABLE IF EXISTS item_failures; DROP TABLE writes; PRAGMA user_version = 4;`,
    );
    db.close();
    store = await openStore(file, { now: () => NOW });
    expect(await store.listWrites()).toEqual([]);
    expect((await store.enqueueWrite(COMMENT)).status).toBe('pending');
  });
});
