import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../core/errors.js';
import { identityKey, type Task } from '../../core/types.js';
import type { RunInit, Store } from '../types.js';
import { openStore } from './open.js';
import { ATTENTION_SQL } from './store.js';

let dir: string;
let opened: Store[];
let clock: number;

function now(): number {
  return clock;
}

async function open(name = 'state.sqlite3', options: { readonly?: boolean } = {}): Promise<Store> {
  const store = await openStore(join(dir, name), { now, ...options });
  opened.push(store);
  return store;
}

function task(id: string, automationId = 'triage'): Task {
  const identity = { automationId, repo: 'acme/api', taskType: 'github-issues', id };
  return {
    identity,
    key: identityKey(identity),
    fingerprint: `fp-${id}`,
    item: {
      id,
      title: `Issue ${id}`,
      url: `https://github.com/acme/api/issues/${id}`,
      body: 'Steps:\n- run `make`\n- see "é" fail',
      fields: { issue_number: Number(id), labels: ['bug', 'p1'], nested: { draft: false, none: null } },
      itemKey: `issue:${id}`,
    },
  };
}

function runInit(id: string, overrides: Partial<RunInit> = {}): RunInit {
  const t = task(id, overrides.automationId);
  return {
    automationId: t.identity.automationId,
    taskKey: t.key,
    repo: t.identity.repo,
    taskType: t.identity.taskType,
    itemId: id,
    itemKey: t.item.itemKey,
    itemTitle: t.item.title,
    itemUrl: t.item.url,
    status: 'queued',
    ...overrides,
  };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-store-'));
  opened = [];
  clock = Date.parse('2025-03-01T10:00:00.000Z');
});

afterEach(async () => {
  for (const store of opened) await store.close();
  await rm(dir, { recursive: true, force: true });
});

// What every backend does is in ../store.contract.test.ts; what only the SQLite file does is here.

describe('board queries (serve)', () => {
  it('the attention query (with the calm statuses added since migration 3) still uses its index', async () => {
    const store = await open();
    await store.createRun(runInit('1', { status: 'merged' }));
    await store.close();
    const db = new Database(join(dir, 'state.sqlite3'), { readonly: true });
    try {
      const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM runs WHERE ${ATTENTION_SQL}`).all() as {
        detail: string;
      }[];
      expect(plan.map((p) => p.detail).join('\n')).toContain('runs_attention');
    } finally {
      db.close();
    }
  });
});

describe('lifecycle', () => {
  it('reports a database locked by another process as a busy StateError', async () => {
    const path = join(dir, 'busy.sqlite3');
    const store = await openStore(path, { busyTimeoutMs: 50 });
    opened.push(store);
    const other = new Database(path);
    other.exec('BEGIN EXCLUSIVE');
    try {
      const error = await store.setMeta('k', 'v').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateError);
      expect((error as StateError).message).toMatch(/is busy/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await store.setMeta('k', 'v');
    expect(await store.getMeta('k')).toBe('v');
  });
});

describe('read-only', () => {
  it('shows an empty ledger for a missing file and creates nothing', async () => {
    const store = await open('missing/state.sqlite3', { readonly: true });
    expect(await store.listRuns()).toEqual([]);
    expect(await store.listSessions()).toEqual([]);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
    await expect(store.setMeta('k', 'v')).rejects.toThrow(/read-only/);
  });
});
