import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../core/errors.js';
import { registerSecret } from '../../security/redact.js';
import { openStore } from '../index.js';
import type { Store } from '../types.js';
import { UNDO_AFTER_6 } from './downgrade.js';
import { SCHEMA_VERSION } from './schema.js';

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

describe('the write queue table (migration 5)', () => {
  it('keeps a queued write with its marker, and finds it due', async () => {
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(5);
    const queued = await store.enqueueWrite({ ...COMMENT, runId: 'r_1' });
    expect(queued).toMatchObject({
      marker: 'result:r_1',
      repo: 'acme/api',
      number: 7,
      write: { kind: 'comment', body: 'done' },
      runId: 'r_1',
      status: 'pending',
      attempts: 0,
      nextAttemptAt: '2026-02-01T10:00:00.000Z',
      resultId: null,
      sentAt: null,
    });
    expect((await store.listDueWrites('2026-02-01T10:00:00.000Z')).map((w) => w.id)).toEqual([queued.id]);
    expect(await store.listDueWrites('2026-02-01T09:59:59.000Z')).toEqual([]);
    expect(await store.listWrites({ runId: 'r_1' })).toHaveLength(1);
  });

  it('enqueueing the same marker replaces the write and makes it pending again, keeping the comment id', async () => {
    const first = await store.enqueueWrite(COMMENT);
    await store.updateWrite(first.id, { status: 'sent', attempts: 2, resultId: 41, sentAt: 'x' });
    const again = await store.enqueueWrite({ ...COMMENT, write: { kind: 'comment', body: 'edited' } });
    expect(again).toMatchObject({ id: first.id, status: 'pending', attempts: 0, resultId: 41, sentAt: null });
    expect(again.write).toEqual({ kind: 'comment', body: 'edited' });
    expect(await store.listWrites()).toHaveLength(1);
  });

  it('a later notBefore keeps a write back; updates of a missing write fail', async () => {
    await store.enqueueWrite({ ...COMMENT, notBefore: '2026-02-01T11:00:00.000Z' });
    expect(await store.listDueWrites('2026-02-01T10:30:00.000Z')).toEqual([]);
    expect(await store.listDueWrites('2026-02-01T11:00:00.000Z')).toHaveLength(1);
    await expect(store.updateWrite(999, { status: 'failed' })).rejects.toThrow(StateError);
  });

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
