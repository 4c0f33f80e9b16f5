import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../../core/errors.js';
import { identityKey, type RunStatus, type Task } from '../../core/types.js';
import type { RunInit, SessionRecord, Store } from '../types.js';
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

function session(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  const t = task(id);
  return {
    taskKey: t.key,
    automationId: 'triage',
    runId: 'r_0000000000AAAAAAAA',
    provider: 'claude',
    profile: 'default',
    sessionId: `sess-${id}`,
    prompt: `Fix issue ${id}`,
    promptTemplateHash: 'h1',
    task: t,
    worktreePath: `/work/wt/${id}`,
    branch: `curupira/triage/issue-${id}`,
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
    resumeFailures: 0,
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

describe('sessions', () => {
  it('counts failed resumes of a session, keeps the count when the session is saved again, and resets it for a new id', async () => {
    const store = await open();
    expect(await store.recordResumeFailure(task('1').key)).toBe(0);
    await store.saveSession(session('1'));
    expect(await store.recordResumeFailure(task('1').key)).toBe(1);
    expect(await store.recordResumeFailure(task('1').key)).toBe(2);
    await store.saveSession(session('1', { updatedAt: '2025-01-02T00:00:00.000Z' }));
    expect((await store.getSession(task('1').key))?.resumeFailures).toBe(2);
    await store.saveSession(session('1', { sessionId: 'sess-other' }));
    expect((await store.getSession(task('1').key))?.resumeFailures).toBe(0);
  });

  it('saves, reads, lists and deletes sessions by task key, with the task snapshot intact', async () => {
    const store = await open();
    expect(await store.getSession(task('1').key)).toBeUndefined();

    await store.saveSession(session('1'));
    await store.saveSession(session('2', { worktreePath: null, branch: null }));

    expect(await store.getSession(task('1').key)).toEqual(session('1'));
    expect((await store.listSessions()).map((s) => s.sessionId)).toEqual(['sess-1', 'sess-2']);
    expect((await store.getSession(task('2').key))?.worktreePath).toBeNull();

    await store.deleteSession(task('1').key);
    expect(await store.getSession(task('1').key)).toBeUndefined();
    expect(await store.listSessions()).toHaveLength(1);
  });

  it('replaces the saved session of a task instead of adding a second one', async () => {
    const store = await open();
    await store.saveSession(session('1'));
    await store.saveSession(session('1', { sessionId: 'sess-new', updatedAt: '2025-01-02T00:00:00.000Z' }));

    const sessions = await store.listSessions();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]!.sessionId).toBe('sess-new');
    expect(sessions[0]!.updatedAt).toBe('2025-01-02T00:00:00.000Z');
  });

  it('keeps sessions across close and reopen', async () => {
    const first = await open();
    await first.saveSession(session('7'));
    await first.close();

    const second = await open();
    expect(await second.getSession(task('7').key)).toEqual(session('7'));
  });
});

describe('run ledger', () => {
  it('creates a run with an id, the clock time and empty outcome fields', async () => {
    const store = await open();
    const run = await store.createRun(runInit('5'));

    expect(run.id).toMatch(/^r_[0-9A-Z]{18}$/);
    expect(run).toMatchObject({
      automationId: 'triage',
      taskKey: task('5').key,
      itemKey: 'issue:5',
      status: 'queued',
      createdAt: '2025-03-01T10:00:00.000Z',
      startedAt: null,
      finishedAt: null,
      reason: null,
      sessionId: null,
      resumed: false,
      worktreeKept: false,
      commits: 0,
      usage: null,
      scheduledFor: null,
      upstreamRunId: null,
    });
    expect(await store.getRun(run.id)).toEqual(run);
    expect(await store.getRun('r_missing')).toBeUndefined();
  });

  it('records the optional fields a run is opened with', async () => {
    const store = await open();
    const run = await store.createRun(
      runInit('5', {
        status: 'skipped',
        reason: 'missed by 400 s',
        profile: 'fast',
        provider: 'codex',
        prompt: 'Do it',
        scheduledFor: '2025-03-01T09:00:00.000Z',
        upstreamRunId: 'r_upstream',
        resumed: true,
        sessionId: 'sess-9',
      }),
    );
    expect(await store.getRun(run.id)).toMatchObject({
      status: 'skipped',
      reason: 'missed by 400 s',
      profile: 'fast',
      provider: 'codex',
      prompt: 'Do it',
      scheduledFor: '2025-03-01T09:00:00.000Z',
      upstreamRunId: 'r_upstream',
      resumed: true,
      sessionId: 'sess-9',
    });
  });

  it('applies a patch, returns the new row, and leaves fields the patch omits alone', async () => {
    const store = await open();
    const run = await store.createRun(runInit('5', { prompt: 'original' }));

    const running = await store.updateRun(run.id, {
      status: 'running',
      startedAt: '2025-03-01T10:00:01.000Z',
      sessionId: 'sess-5',
    });
    expect(running).toMatchObject({ status: 'running', sessionId: 'sess-5', prompt: 'original' });

    const usage = { inputTokens: 1200, outputTokens: 340, cachedInputTokens: 800, costUsd: 0.0123 };
    const done = await store.updateRun(run.id, {
      status: 'succeeded',
      finishedAt: '2025-03-01T10:05:00.000Z',
      exitCode: 0,
      worktreeKept: true,
      worktreePath: '/wt/5',
      branch: 'curupira/triage/issue-5',
      commits: 3,
      usage,
      transcriptPath: '/t/5.jsonl',
    });
    expect(done).toMatchObject({
      status: 'succeeded',
      startedAt: '2025-03-01T10:00:01.000Z',
      sessionId: 'sess-5',
      exitCode: 0,
      worktreeKept: true,
      commits: 3,
      usage,
    });
    expect(await store.getRun(run.id)).toEqual(done);

    const cleared = await store.updateRun(run.id, { usage: null, sessionId: null, worktreeKept: false });
    expect(cleared).toMatchObject({ usage: null, sessionId: null, worktreeKept: false, commits: 3 });
    expect(await store.updateRun(run.id, {})).toEqual(cleared);
  });

  it('refuses to update a run that does not exist', async () => {
    const store = await open();
    await expect(store.updateRun('r_0000000000NOPE0000', { status: 'failed' })).rejects.toThrow(StateError);
    await expect(store.updateRun('r_0000000000NOPE0000', {})).rejects.toThrow(/does not exist/);
  });

  it('lists runs newest first, even when they were created in the same millisecond', async () => {
    const store = await open();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await store.createRun(runInit(String(i)))).id);

    const listed = await store.listRuns({ limit: 100 });
    expect(listed.map((r) => r.id)).toEqual([...ids].reverse());
    expect(listed[0]!.itemId).toBe('19');
  });

  it('keeps new runs after old ones when reopened with a clock that went backwards', async () => {
    const first = await open();
    const old = await first.createRun(runInit('1'));
    await first.close();

    clock -= 3_600_000;
    const second = await open();
    const fresh = await second.createRun(runInit('2'));
    expect(fresh.id > old.id).toBe(true);
    expect((await second.listRuns()).map((r) => r.itemId)).toEqual(['2', '1']);
  });

  it('filters runs by automation, status and kept worktree, and pages through them', async () => {
    const store = await open();
    const statuses: RunStatus[] = ['succeeded', 'failed', 'running', 'succeeded', 'blocked'];
    for (const [i, status] of statuses.entries()) {
      clock += 1000;
      const run = await store.createRun(runInit(String(i), { status }));
      if (i === 1) await store.updateRun(run.id, { worktreeKept: true });
    }
    await store.createRun(runInit('99', { automationId: 'review', status: 'failed' }));

    const ids = (runs: { itemId: string }[]) => runs.map((r) => r.itemId);
    expect(ids(await store.listRuns({ automationId: 'triage' }))).toEqual(['4', '3', '2', '1', '0']);
    expect(ids(await store.listRuns({ status: ['failed'] }))).toEqual(['99', '1']);
    expect(ids(await store.listRuns({ automationId: 'triage', status: ['failed', 'blocked'] }))).toEqual([
      '4',
      '1',
    ]);
    expect(ids(await store.listRuns({ status: [] }))).toHaveLength(6);
    expect(ids(await store.listRuns({ worktreeKept: true }))).toEqual(['1']);
    expect(ids(await store.listRuns({ worktreeKept: false }))).toHaveLength(5);
    expect(ids(await store.listRuns({ automationId: 'triage', limit: 2 }))).toEqual(['4', '3']);
    expect(ids(await store.listRuns({ automationId: 'triage', limit: 2, offset: 2 }))).toEqual(['2', '1']);
    expect(await store.listRuns({ automationId: 'nobody' })).toEqual([]);
  });

  it('returns at most 50 runs unless asked for more', async () => {
    const store = await open();
    for (let i = 0; i < 60; i++) await store.createRun(runInit(String(i)));
    expect(await store.listRuns()).toHaveLength(50);
    expect(await store.listRuns({ limit: Number.POSITIVE_INFINITY })).toHaveLength(60);
  });

  it('lists the runs a dead process left queued, preparing or running, oldest first', async () => {
    const store = await open();
    const statuses: RunStatus[] = ['queued', 'succeeded', 'preparing', 'cancelled', 'running', 'skipped'];
    for (const [i, status] of statuses.entries()) await store.createRun(runInit(String(i), { status }));

    const unfinished = await store.listUnfinishedRuns();
    expect(unfinished.map((r) => [r.itemId, r.status])).toEqual([
      ['0', 'queued'],
      ['2', 'preparing'],
      ['4', 'running'],
    ]);
  });
});

describe('board queries (serve)', () => {
  it('tells runs that need attention from the rest, generically by status, until dismissed', async () => {
    const store = await open();
    const statuses: RunStatus[] = ['succeeded', 'failed', 'blocked', 'timed_out', 'cancelled', 'running'];
    const ids: Record<string, string> = {};
    for (const status of statuses) ids[status] = (await store.createRun(runInit('1', { status }))).id;
    const kept = await store.createRun(runInit('2', { status: 'succeeded' }));
    await store.updateRun(kept.id, { worktreeKept: true });
    const attention = await store.listRuns({ attention: true });
    expect(attention.map((r) => r.id).sort()).toEqual(
      [ids.failed, ids.blocked, ids.timed_out, kept.id].sort(),
    );
    expect(await store.countRuns({ attention: true })).toBe(4);
    await store.updateRun(ids.failed!, { dismissedAt: '2026-01-01T00:00:00.000Z' });
    expect(await store.countRuns({ attention: true })).toBe(3);
    expect((await store.getRun(ids.failed!))?.dismissedAt).toBe('2026-01-01T00:00:00.000Z');
    const calm = await store.listRuns({ attention: false, status: ['succeeded', 'failed', 'cancelled'] });
    expect(calm.map((r) => r.id).sort()).toEqual([ids.succeeded, ids.failed, ids.cancelled].sort());
  });

  it('a merged run is calm (Done) unless it kept a worktree, and the attention query still uses its index', async () => {
    const store = await open();
    const merged = await store.createRun(runInit('1', { status: 'merged' }));
    const keptMerged = await store.createRun(runInit('2', { status: 'merged' }));
    await store.updateRun(keptMerged.id, { worktreeKept: true });
    expect((await store.listRuns({ attention: true })).map((r) => r.id)).toEqual([keptMerged.id]);
    expect((await store.listRuns({ attention: false })).map((r) => r.id)).toEqual([merged.id]);
    expect((await store.listRuns({ status: ['merged'] })).map((r) => r.id).sort()).toEqual(
      [merged.id, keptMerged.id].sort(),
    );
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

  it('pages with a cursor: each page continues below the last id of the previous one', async () => {
    const store = await open();
    for (let i = 0; i < 7; i += 1) await store.createRun(runInit(String(i)));
    const first = await store.listRuns({ limit: 3 });
    const second = await store.listRuns({ limit: 3, beforeId: first.at(-1)!.id });
    const third = await store.listRuns({ limit: 3, beforeId: second.at(-1)!.id });
    expect([...first, ...second, ...third].map((r) => r.itemId)).toEqual(['6', '5', '4', '3', '2', '1', '0']);
    expect(await store.countRuns({ beforeId: first.at(-1)!.id })).toBe(4);
  });

  it('remembers automations paused by hand across reopen', async () => {
    let store = await open();
    await store.setPaused('nightly', true);
    await store.setPaused('triage', true);
    await store.setPaused('triage', false);
    await store.close();
    store = await open();
    expect(await store.listPaused()).toEqual(['nightly']);
  });
});

describe('pruneRuns', () => {
  it('keeps the newest finished runs of the automation and returns the deleted ones, newest first', async () => {
    const store = await open();
    for (let i = 0; i < 6; i++) await store.createRun(runInit(String(i), { status: 'succeeded' }));
    await store.createRun(runInit('other', { automationId: 'review', status: 'failed' }));

    const deleted = await store.pruneRuns('triage', 2);

    expect(deleted.map((r) => r.itemId)).toEqual(['3', '2', '1', '0']);
    expect((await store.listRuns({ automationId: 'triage' })).map((r) => r.itemId)).toEqual(['5', '4']);
    expect(await store.listRuns({ automationId: 'review' })).toHaveLength(1);
    expect(await store.getRun(deleted[0]!.id)).toBeUndefined();
  });

  it('never deletes a run that has not finished, however old', async () => {
    const store = await open();
    await store.createRun(runInit('old-running', { status: 'running' }));
    await store.createRun(runInit('old-queued', { status: 'queued' }));
    for (let i = 0; i < 3; i++) await store.createRun(runInit(String(i), { status: 'failed' }));

    const deleted = await store.pruneRuns('triage', 1);

    expect(deleted.map((r) => r.itemId)).toEqual(['1', '0']);
    expect((await store.listRuns()).map((r) => r.itemId)).toEqual(['2', 'old-queued', 'old-running']);
    expect(await store.pruneRuns('triage', 0)).toHaveLength(1);
    expect((await store.listUnfinishedRuns()).map((r) => r.itemId)).toEqual(['old-running', 'old-queued']);
  });

  it('counts the finished runs it would keep or prune, per automation', async () => {
    const store = await open();
    await store.createRun(runInit('running', { status: 'running' }));
    for (let i = 0; i < 3; i++) await store.createRun(runInit(String(i), { status: 'succeeded' }));
    await store.createRun(runInit('other', { automationId: 'review', status: 'failed' }));
    expect(await store.countFinishedRuns('triage')).toBe(3);
    expect(await store.countFinishedRuns('review')).toBe(1);
    await store.pruneRuns('triage', 1);
    expect(await store.countFinishedRuns('triage')).toBe(1);
    expect(await store.countFinishedRuns('nobody')).toBe(0);
  });

  it('deletes nothing when the automation has no more than `keep` finished runs', async () => {
    const store = await open();
    for (let i = 0; i < 3; i++) await store.createRun(runInit(String(i), { status: 'succeeded' }));
    expect(await store.pruneRuns('triage', 3)).toEqual([]);
    expect(await store.listRuns()).toHaveLength(3);
  });

  it('rejects a keep count that is not a non-negative integer instead of deleting everything', async () => {
    const store = await open();
    await store.createRun(runInit('1', { status: 'succeeded' }));
    await expect(store.pruneRuns('triage', Number.NaN)).rejects.toThrow(RangeError);
    await expect(store.pruneRuns('triage', -1)).rejects.toThrow(RangeError);
    expect(await store.listRuns()).toHaveLength(1);
  });
});

describe('cron state', () => {
  it('round-trips and overwrites the schedule marks of an automation', async () => {
    const store = await open();
    expect(await store.getCronState('nightly')).toBeUndefined();

    const state = {
      automationId: 'nightly',
      createdAt: '2025-03-01T00:00:00.000Z',
      lastScheduledFor: null,
      pendingScheduledFor: '2025-03-02T02:00:00.000Z',
      lastExecutionAt: null,
      configHash: 'abc',
    };
    await store.putCronState(state);
    expect(await store.getCronState('nightly')).toEqual(state);

    const next = {
      ...state,
      lastScheduledFor: state.pendingScheduledFor,
      pendingScheduledFor: null,
      lastExecutionAt: '2025-03-02T02:00:05.000Z',
    };
    await store.putCronState(next);
    expect(await store.getCronState('nightly')).toEqual(next);
    expect(await store.getCronState('weekly')).toBeUndefined();
  });
});

describe('item memory', () => {
  it('remembers item keys per automation, idempotently, until cleared', async () => {
    const store = await open();
    await store.recordItemKeys('triage', [
      { itemKey: 'issue:1', runId: 'r_a', skipped: false },
      { itemKey: 'issue:2', runId: null, skipped: true },
    ]);
    await store.recordItemKeys('triage', [
      { itemKey: 'issue:1', runId: 'r_b', skipped: false },
      { itemKey: 'issue:3', runId: 'r_c', skipped: false },
    ]);
    await store.recordItemKeys('review', [{ itemKey: 'pr:9', runId: 'r_d', skipped: false }]);

    expect(await store.hasItemKey('triage', 'issue:1')).toBe(true);
    expect(await store.hasItemKey('triage', 'pr:9')).toBe(false);
    expect(await store.hasItemKey('review', 'pr:9')).toBe(true);
    expect(await store.listItemKeys('triage')).toEqual([
      { itemKey: 'issue:1', runId: 'r_a', skipped: false },
      { itemKey: 'issue:2', runId: null, skipped: true },
      { itemKey: 'issue:3', runId: 'r_c', skipped: false },
    ]);

    await store.clearItemKeys('triage');
    expect(await store.hasItemKey('triage', 'issue:1')).toBe(false);
    expect(await store.listItemKeys('triage')).toEqual([]);
    expect(await store.hasItemKey('review', 'pr:9')).toBe(true);
  });

  it('keeps item memory when the runs that made it are pruned', async () => {
    const store = await open();
    const run = await store.createRun(runInit('1', { status: 'succeeded' }));
    await store.recordItemKeys('triage', [{ itemKey: 'issue:1', runId: run.id, skipped: false }]);
    await store.pruneRuns('triage', 0);
    expect(await store.hasItemKey('triage', 'issue:1')).toBe(true);
  });
});

describe('meta', () => {
  it('stores small named values and overwrites them', async () => {
    const store = await open();
    expect(await store.getMeta('baseline:triage')).toBeUndefined();
    await store.setMeta('baseline:triage', 'hash-1');
    await store.setMeta('baseline:triage', 'hash-2');
    expect(await store.getMeta('baseline:triage')).toBe('hash-2');
  });
});

describe('lifecycle', () => {
  it('reports use after close as a StateError, and closing twice is harmless', async () => {
    const store = await open();
    await store.close();
    await store.close();
    await expect(store.getMeta('x')).rejects.toThrow(/is closed/);
    await expect(store.setMeta('x', 'y')).rejects.toBeInstanceOf(StateError);
  });

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

  it('reads what a running writer has committed, and refuses to write', async () => {
    const writer = await open();
    const run = await writer.createRun(runInit('1'));
    await writer.saveSession(session('1'));

    const reader = await open('state.sqlite3', { readonly: true });
    expect(await reader.getRun(run.id)).toEqual(run);
    expect(await reader.listSessions()).toHaveLength(1);
    await expect(reader.createRun(runInit('2'))).rejects.toThrow(StateError);
    await expect(reader.deleteSession(task('1').key)).rejects.toThrow(/read-only/);

    await writer.updateRun(run.id, { status: 'succeeded' });
    expect((await reader.getRun(run.id))?.status).toBe('succeeded');
  });
});
