/**
 * The `Store` contract, run against both backends (issue 17): the embedded SQLite file and
 * PostgreSQL (`state_db_url`). What only one backend has (SQLite's file checks, WAL, durability;
 * PostgreSQL's schemas, migrations and connection errors) is tested beside it.
 * Queues and deliveries have their own contract file.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STORE_BACKENDS, type StoreBackend } from '../../test/helpers/store-backends.js';
import { StateError } from '../core/errors.js';
import { identityKey, type RunStatus, type Task } from '../core/types.js';
import type { RunInit, SessionRecord, Store } from './types.js';

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

const FAILING_KEY = '["fix","acme/api","github-issues","7"]';
const FAILING_RUN: RunInit = {
  automationId: 'fix',
  taskKey: FAILING_KEY,
  repo: 'acme/api',
  taskType: 'github-issues',
  itemId: '7',
  itemKey: 'issue:7',
  itemTitle: 'Crash',
  itemUrl: 'https://github.com/acme/api/issues/7',
  status: 'failed',
};
function failure(runId: string, textDigest = 'aaaa', limit = 3) {
  return { taskKey: FAILING_KEY, automationId: 'fix', itemKey: 'issue:7', runId, textDigest, limit };
}

const BLOCKED: RunInit = {
  ...FAILING_RUN,
  automationId: 'triage',
  taskKey: task('7').key,
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

describe.each(STORE_BACKENDS)('the store ($name)', ({ name, backend: makeBackend }) => {
  let backend: StoreBackend;
  let clock: number;
  const now = () => clock;
  /** The test's state (each call opens it again); `readonly` for a reader beside the writer. */
  const open = (options: { readonly?: boolean } = {}): Promise<Store> =>
    backend.open({ now, reopen: 'main', ...options });

  beforeEach(() => {
    backend = makeBackend();
    clock = Date.parse('2025-03-01T10:00:00.000Z');
  });
  afterEach(async () => {
    await backend.cleanup();
  });

  it('says which backend holds it', async () => {
    const store = await open();
    expect(store.backend).toBe(name);
    expect(store.path.length).toBeGreaterThan(0);
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

    it('lists sessions by creation time, then by task key in byte order', async () => {
      const store = await open();
      // Byte order puts '"' (0x22) before 'a' and 'B' before 'a': a linguistic collation would not.
      for (const key of ['["a"]', '["B"]', '[a]', '["_"]']) {
        await store.saveSession(session('1', { taskKey: key, sessionId: key }));
      }
      expect((await store.listSessions()).map((s) => s.taskKey)).toEqual(['["B"]', '["_"]', '["a"]', '[a]']);
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
      expect(run).toEqual({
        id: run.id,
        automationId: 'triage',
        taskKey: task('5').key,
        repo: 'acme/api',
        taskType: 'github-issues',
        itemId: '5',
        itemKey: 'issue:5',
        itemTitle: 'Issue 5',
        itemUrl: 'https://github.com/acme/api/issues/5',
        status: 'queued',
        reason: null,
        createdAt: '2025-03-01T10:00:00.000Z',
        startedAt: null,
        finishedAt: null,
        profile: null,
        provider: null,
        sessionId: null,
        resumed: false,
        exitCode: null,
        signal: null,
        transcriptPath: null,
        branch: null,
        worktreePath: null,
        worktreeKept: false,
        commits: 0,
        usage: null,
        model: null,
        costUsd: null,
        prompt: null,
        scheduledFor: null,
        upstreamRunId: null,
        agentPid: null,
        agentOutcome: null,
        dismissedAt: null,
        screeningFindings: null,
        screeningReason: null,
        screenedDigest: null,
        attempt: 1,
        retryAt: null,
        host: null,
        baseCommit: null,
        headCommit: null,
        result: null,
        inputs: null,
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
          host: 'builder-1',
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
        host: 'builder-1',
      });
    });

    it('refuses a status it does not know', async () => {
      const store = await open();
      await expect(store.createRun(runInit('5', { status: 'exploded' as RunStatus }))).rejects.toThrow(
        StateError,
      );
      expect(await store.listRuns()).toEqual([]);
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

    it('round-trips every patchable field', async () => {
      const store = await open();
      const run = await store.createRun(runInit('5'));
      const outcome = { kind: 'exited', exitCode: 1, signal: null, summary: 'x' } as const;
      const patched = await store.updateRun(run.id, {
        resumed: true,
        signal: 'SIGTERM',
        model: 'opus',
        costUsd: 1.25,
        profile: 'p',
        provider: 'claude',
        agentPid: 4242,
        agentOutcome: outcome as never,
        dismissedAt: '2025-03-02T00:00:00.000Z',
        screeningFindings: [FINDING],
        screeningReason: 'blocked: x',
        screenedDigest: 'd1',
        retryAt: '2025-03-03T00:00:00.000Z',
        host: 'worker-2',
        reason: 'because',
      });
      expect(patched).toMatchObject({
        resumed: true,
        signal: 'SIGTERM',
        model: 'opus',
        costUsd: 1.25,
        profile: 'p',
        provider: 'claude',
        agentPid: 4242,
        agentOutcome: outcome,
        dismissedAt: '2025-03-02T00:00:00.000Z',
        screeningFindings: [FINDING],
        screeningReason: 'blocked: x',
        screenedDigest: 'd1',
        retryAt: '2025-03-03T00:00:00.000Z',
        host: 'worker-2',
        reason: 'because',
      });
      expect(await store.getRun(run.id)).toEqual(patched);
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
      expect(ids(await store.listRuns({ limit: 0 }))).toEqual([]);
      expect(await store.listRuns({ automationId: 'nobody' })).toEqual([]);
      expect(await store.countRuns({ automationId: 'triage', status: ['succeeded'], limit: 1 })).toBe(2);
      expect(await store.countRuns()).toBe(6);
    });

    it('searches runs by task, profile, repository, title text (wildcards literal) and creation window', async () => {
      const store = await open();
      const start = new Date(clock + 500).toISOString();
      const seeds: [string, Partial<RunInit>][] = [
        ['1', { profile: 'claude', itemTitle: 'Fix the Login page' }],
        ['2', { profile: 'codex', itemTitle: 'login: 100% broken' }],
        ['3', { profile: 'claude', repo: 'acme/web', itemTitle: 'Docs_typo' }],
        ['1', { profile: 'codex', itemTitle: 'Fix the Login page' }],
      ];
      for (const [id, overrides] of seeds) {
        clock += 1000;
        await store.createRun(runInit(id, { status: 'succeeded', ...overrides }));
      }
      const ids = (runs: { itemId: string; profile: string | null }[]) =>
        runs.map((r) => `${r.itemId}:${r.profile}`);
      expect(ids(await store.listRuns({ taskKey: task('1').key }))).toEqual(['1:codex', '1:claude']);
      expect(ids(await store.listRuns({ profile: 'claude' }))).toEqual(['3:claude', '1:claude']);
      expect(ids(await store.listRuns({ repo: 'acme/web' }))).toEqual(['3:claude']);
      expect(ids(await store.listRuns({ text: 'LOGIN' }))).toEqual(['1:codex', '2:codex', '1:claude']);
      expect(ids(await store.listRuns({ text: '100%' }))).toEqual(['2:codex']);
      expect(ids(await store.listRuns({ text: 's_t' }))).toEqual(['3:claude']);
      expect(await store.listRuns({ text: '%' })).toHaveLength(1);
      expect(ids(await store.listRuns({ text: 'login', profile: 'codex', limit: 1 }))).toEqual(['1:codex']);
      const third = new Date(Date.parse(start) + 2000).toISOString();
      expect(ids(await store.listRuns({ createdSince: third }))).toEqual(['1:codex', '3:claude']);
      expect(ids(await store.listRuns({ createdSince: start, createdBefore: third }))).toEqual([
        '2:codex',
        '1:claude',
      ]);
      expect(await store.countRuns({ text: 'login' })).toBe(3);
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

    it('lists only the unfinished runs of one host when asked', async () => {
      const store = await open();
      await store.createRun(runInit('1', { status: 'running', host: 'a' }));
      await store.createRun(runInit('2', { status: 'running', host: 'b' }));
      await store.createRun(runInit('3', { status: 'succeeded', host: 'a' }));
      const none = await store.createRun(runInit('4', { status: 'queued' }));
      await store.createRun(runInit('5', { status: 'queued' }));
      await store.updateRun(none.id, { host: 'a' });
      expect((await store.listUnfinishedRuns({ host: 'a' })).map((r) => r.itemId)).toEqual(['1', '4']);
      expect((await store.listUnfinishedRuns({ host: 'c' })).map((r) => r.itemId)).toEqual([]);
      expect((await store.listUnfinishedRuns()).map((r) => r.itemId)).toEqual(['1', '2', '4', '5']);
    });
  });

  describe('retries', () => {
    it('records the try, sets and clears the retry time, and lists the runs with one pending', async () => {
      const store = await open();
      const first = await store.createRun(FAILING_RUN);
      expect(first).toMatchObject({ attempt: 1, retryAt: null });
      const second = await store.createRun({ ...FAILING_RUN, attempt: 2 });
      expect(second.attempt).toBe(2);
      await store.updateRun(first.id, { retryAt: '2026-12-01T14:00:10.000Z' });
      expect((await store.listRuns({ retryPending: true })).map((r) => [r.id, r.retryAt])).toEqual([
        [first.id, '2026-12-01T14:00:10.000Z'],
      ]);
      expect(await store.countRuns({ retryPending: true })).toBe(1);
      await store.updateRun(first.id, { retryAt: null });
      expect(await store.listRuns({ retryPending: true })).toEqual([]);
    });

    it('stalled and parked are statuses the store accepts', async () => {
      const store = await open();
      for (const status of ['stalled', 'parked'] as const) {
        expect((await store.createRun({ ...FAILING_RUN, status })).status).toBe(status);
      }
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

    it('a merged run is calm (Done) unless it kept a worktree', async () => {
      const store = await open();
      const merged = await store.createRun(runInit('1', { status: 'merged' }));
      const keptMerged = await store.createRun(runInit('2', { status: 'merged' }));
      await store.updateRun(keptMerged.id, { worktreeKept: true });
      expect((await store.listRuns({ attention: true })).map((r) => r.id)).toEqual([keptMerged.id]);
      expect((await store.listRuns({ attention: false })).map((r) => r.id)).toEqual([merged.id]);
      expect((await store.listRuns({ status: ['merged'] })).map((r) => r.id).sort()).toEqual(
        [merged.id, keptMerged.id].sort(),
      );
    });

    it('an escalated run is in Needs attention (it waits for a person)', async () => {
      const store = await open();
      const run = await store.createRun({
        ...FAILING_RUN,
        status: 'escalated',
        reason: 'escalated: failed 3 times',
      });
      expect((await store.listRuns({ attention: true })).map((r) => r.id)).toEqual([run.id]);
    });

    it('pages with a cursor: each page continues below the last id of the previous one', async () => {
      const store = await open();
      for (let i = 0; i < 7; i += 1) await store.createRun(runInit(String(i)));
      const first = await store.listRuns({ limit: 3 });
      const second = await store.listRuns({ limit: 3, beforeId: first.at(-1)!.id });
      const third = await store.listRuns({ limit: 3, beforeId: second.at(-1)!.id });
      expect([...first, ...second, ...third].map((r) => r.itemId)).toEqual([
        '6',
        '5',
        '4',
        '3',
        '2',
        '1',
        '0',
      ]);
      expect(await store.countRuns({ beforeId: first.at(-1)!.id })).toBe(4);
    });

    it('gives the newest run of each task in one call', async () => {
      const store = await open();
      const first = await store.createRun(runInit('1', { status: 'failed' }));
      const retry = await store.createRun(runInit('1', { status: 'running', attempt: 2 }));
      const other = await store.createRun(runInit('2', { status: 'failed' }));
      const newest = await store.newestRunsOfTasks([
        task('1').key,
        task('2').key,
        task('9').key,
        task('1').key,
      ]);
      expect(newest.map((r) => r.id).sort()).toEqual([retry.id, other.id].sort());
      expect(newest.map((r) => r.id)).not.toContain(first.id);
      expect(await store.newestRunsOfTasks([])).toEqual([]);
    });

    it('lists the deliveries of some runs in one call', async () => {
      const store = await open();
      const runs = [];
      for (const id of ['1', '2', '3'])
        runs.push(await store.createRun(runInit(id, { status: 'succeeded' })));
      for (const run of runs.slice(0, 2)) {
        await store.beginPullRequest({
          runId: run.id,
          automationId: run.automationId,
          taskKey: run.taskKey,
          repo: run.repo,
          delivery: 'pr',
          headBranch: `curupira/${run.itemId}`,
        });
      }
      const found = await store.listPullRequests({ runIds: [runs[1]!.id, runs[2]!.id] });
      expect(found.map((pr) => [pr.runId, pr.headBranch])).toEqual([[runs[1]!.id, 'curupira/2']]);
      expect(await store.listPullRequests({ runIds: [] })).toEqual([]);
      expect(await store.listPullRequests({ runIds: runs.map((r) => r.id), states: ['merged'] })).toEqual([]);
    });

    it("computes a window's figures: sums per automation, profile and status, medians per scope", async () => {
      const store = await open();
      const MIN = 60_000;
      const t0 = clock;
      const at = (min: number) => new Date(t0 + min * MIN).toISOString();
      interface Seed {
        id: string;
        automation: string;
        profile: string | null;
        status: RunStatus;
        /** Minutes after t0: created (and started), run length, PR merged (or 'open'). */
        at: number;
        runMin: number | null;
        cost: number | null;
        attempt?: number;
        scheduledFor?: string;
        tokens?: [number, number, number];
        pr?: number | 'open';
      }
      async function seed(s: Seed) {
        clock = t0 + s.at * MIN;
        const run = await store.createRun(
          runInit(s.id, {
            automationId: s.automation,
            status: 'running',
            profile: s.profile,
            ...(s.attempt ? { attempt: s.attempt } : {}),
            ...(s.scheduledFor ? { scheduledFor: s.scheduledFor } : {}),
          }),
        );
        await store.updateRun(run.id, {
          status: s.status,
          ...(s.runMin === null ? {} : { startedAt: at(s.at), finishedAt: at(s.at + s.runMin) }),
          costUsd: s.cost,
          usage: s.tokens
            ? { inputTokens: s.tokens[0], cachedInputTokens: s.tokens[1], outputTokens: s.tokens[2] }
            : null,
        });
        if (s.pr === undefined) return;
        await store.beginPullRequest({
          runId: run.id,
          automationId: s.automation,
          taskKey: run.taskKey,
          repo: run.repo,
          delivery: 'pr',
          headBranch: `curupira/${s.id}`,
        });
        await store.updatePullRequest(run.id, { number: Number(s.id), state: 'open' });
        if (s.pr === 'open') return;
        clock = t0 + (s.at + s.pr) * MIN;
        await store.updatePullRequest(run.id, { state: 'merged' });
      }
      // Before the window: counts nowhere.
      await seed({
        id: '9',
        automation: 'fix',
        profile: 'claude',
        status: 'failed',
        at: -10,
        runMin: 1,
        cost: 5,
      });
      // Item 1: the first attempt failed; the retry's pull request merged 70 minutes after the item was picked up.
      await seed({
        id: '1',
        automation: 'fix',
        profile: 'claude',
        status: 'failed',
        at: 0,
        runMin: 2,
        cost: 0.5,
        tokens: [10, 1, 2],
      });
      await seed({
        id: '1',
        automation: 'fix',
        profile: 'claude',
        status: 'merged',
        at: 10,
        runMin: 10,
        cost: 1.5,
        attempt: 2,
        tokens: [20, 2, 4],
        pr: 60,
      });
      await seed({
        id: '2',
        automation: 'fix',
        profile: 'codex',
        status: 'merged',
        at: 30,
        runMin: 5,
        cost: 1,
        pr: 30,
      });
      await seed({
        id: '3',
        automation: 'fix',
        profile: null,
        status: 'blocked',
        at: 40,
        runMin: null,
        cost: null,
      });
      await seed({
        id: '4',
        automation: 'triage',
        profile: 'claude',
        status: 'succeeded',
        at: 50,
        runMin: 4,
        cost: 2,
        pr: 'open',
      });
      // A schedule's occurrence at minute 75, its run created at 80: 25 minutes from the occurrence to the merge.
      await seed({
        id: '5',
        automation: 'nightly',
        profile: 'claude',
        status: 'merged',
        at: 80,
        runMin: 3,
        cost: 1,
        scheduledFor: at(75),
        pr: 20,
      });

      const figures = await store.runFigures({ createdSince: at(-1), createdBefore: at(24 * 60) });
      const tally = (automation: string, profile: string | null, status: string) =>
        figures.tallies.find(
          (t) => t.automationId === automation && t.profile === profile && t.status === status,
        );
      expect(figures.tallies).toHaveLength(6);
      expect(tally('fix', 'claude', 'failed')).toEqual({
        automationId: 'fix',
        profile: 'claude',
        status: 'failed',
        runs: 1,
        costUsd: 0.5,
        inputTokens: 10,
        cachedInputTokens: 1,
        outputTokens: 2,
        pullRequestsOpened: 0,
        pullRequestsMerged: 0,
      });
      expect(tally('fix', 'claude', 'merged')).toMatchObject({
        runs: 1,
        costUsd: 1.5,
        pullRequestsOpened: 1,
        pullRequestsMerged: 1,
      });
      expect(tally('fix', null, 'blocked')).toMatchObject({ runs: 1, costUsd: 0, inputTokens: 0 });
      expect(tally('triage', 'claude', 'succeeded')).toMatchObject({
        pullRequestsOpened: 1,
        pullRequestsMerged: 0,
      });
      const median = (automationId: string | null, profile: string | null | undefined) =>
        figures.medians.find(
          (m) =>
            m.byAutomation === (automationId !== null) &&
            m.byProfile === (profile !== undefined) &&
            m.automationId === automationId &&
            m.profile === (profile ?? null),
        );
      // Durations 2, 10, 5, 4, 3 minutes; times to merge 70, 30, 25.
      expect(median(null, undefined)).toMatchObject({ durationMs: 4 * MIN, toMergeMs: 30 * MIN });
      expect(median('fix', undefined)).toMatchObject({ durationMs: 5 * MIN, toMergeMs: 50 * MIN });
      expect(median('fix', 'claude')).toMatchObject({ durationMs: 6 * MIN, toMergeMs: 70 * MIN });
      expect(median(null, 'claude')).toMatchObject({ durationMs: 3.5 * MIN, toMergeMs: 47.5 * MIN });
      expect(median('triage', 'claude')).toMatchObject({ durationMs: 4 * MIN, toMergeMs: null });
      expect(median('fix', null)).toBeUndefined();
      const one = await store.runFigures({
        createdSince: at(-1),
        createdBefore: at(24 * 60),
        automationId: 'triage',
      });
      expect(one.tallies.map((t) => t.automationId)).toEqual(['triage']);
      expect(await store.runFigures({ createdSince: at(-100), createdBefore: at(-50) })).toEqual({
        tallies: [],
        medians: [],
      });
    });

    it('remembers automations paused by hand across reopen', async () => {
      let store = await open();
      await store.setPaused('nightly', true);
      await store.setPaused('triage', true);
      await store.setPaused('triage', false);
      await store.setPaused('alpha', true);
      await store.close();
      store = await open();
      expect(await store.listPaused()).toEqual(['alpha', 'nightly']);
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

  describe('cost and budget parks', () => {
    it('sums the cost of runs started since a time, of one automation or all; unknown costs count nothing', async () => {
      const store = await open();
      expect(await store.sumCost({ since: '2025-01-01T00:00:00.000Z' })).toBe(0);
      const started = async (
        id: string,
        startedAt: string,
        costUsd: number | null,
        automationId = 'triage',
      ) => {
        const run = await store.createRun(runInit(id, { automationId }));
        await store.updateRun(run.id, { startedAt, costUsd });
      };
      await started('1', '2025-03-01T09:59:59.999Z', 5);
      await started('2', '2025-03-01T10:00:00.000Z', 0.25);
      await started('3', '2025-03-01T11:00:00.000Z', 1.5);
      await started('4', '2025-03-01T12:00:00.000Z', null);
      await started('5', '2025-03-01T12:00:00.000Z', 2, 'review');
      await store.createRun(runInit('6'));
      expect(await store.sumCost({ since: '2025-03-01T10:00:00.000Z' })).toBeCloseTo(3.75, 10);
      expect(await store.sumCost({ since: '2025-03-01T10:00:00.000Z', automationId: 'triage' })).toBeCloseTo(
        1.75,
        10,
      );
      expect(await store.sumCost({ since: '2025-03-02T00:00:00.000Z' })).toBe(0);
    });

    it('parks an automation until a time, replaces the park, and forgets it once it is over', async () => {
      const store = await open();
      await store.setBudgetPark({
        scope: 'triage',
        until: '2025-03-02T00:00:00.000Z',
        reason: 'daily budget',
      });
      await store.setBudgetPark({ scope: '*', until: '2025-03-01T12:00:00.000Z', reason: 'fleet budget' });
      expect(await store.listBudgetParks('2025-03-01T10:00:00.000Z')).toEqual([
        { scope: '*', until: '2025-03-01T12:00:00.000Z', reason: 'fleet budget' },
        { scope: 'triage', until: '2025-03-02T00:00:00.000Z', reason: 'daily budget' },
      ]);
      expect(await store.listBudgetParks('2025-03-01T12:00:00.000Z')).toEqual([
        { scope: 'triage', until: '2025-03-02T00:00:00.000Z', reason: 'daily budget' },
      ]);
      await store.setBudgetPark({ scope: 'triage', until: '2025-03-03T00:00:00.000Z', reason: 'again' });
      expect(await store.listBudgetParks('2025-03-02T12:00:00.000Z')).toEqual([
        { scope: 'triage', until: '2025-03-03T00:00:00.000Z', reason: 'again' },
      ]);
    });
  });

  describe('item failures (the local failure budget)', () => {
    it('counts failures per task and escalates at the limit, once', async () => {
      const store = await open();
      expect((await store.recordItemFailure(failure('r1'))).failures).toBe(1);
      clock += 1000;
      const second = await store.recordItemFailure(failure('r2'));
      expect(second).toMatchObject({ failures: 2, escalatedAt: null, lastRunId: 'r2' });
      clock += 1000;
      const third = await store.recordItemFailure(failure('r3'));
      expect(third).toMatchObject({
        failures: 3,
        escalatedAt: new Date(clock).toISOString(),
        lastRunId: 'r3',
      });
      expect(third.escalatedAt).toBe(third.updatedAt);
      clock += 1000;
      const fourth = await store.recordItemFailure(failure('r4'));
      expect(fourth).toMatchObject({ failures: 4, escalatedAt: third.escalatedAt });
      expect((await store.listEscalations()).map((e) => e.taskKey)).toEqual([FAILING_KEY]);
      await store.setEscalationNotice(FAILING_KEY, 'r5');
      expect(await store.getItemFailures(FAILING_KEY)).toEqual({
        taskKey: FAILING_KEY,
        automationId: 'fix',
        itemKey: 'issue:7',
        failures: 4,
        textDigest: 'aaaa',
        lastRunId: 'r4',
        escalatedAt: third.escalatedAt,
        noticeRunId: 'r5',
        updatedAt: new Date(clock).toISOString(),
      });
    });

    it('escalates at once with a limit of 1', async () => {
      const store = await open();
      const first = await store.recordItemFailure(failure('r1', 'aaaa', 1));
      expect(first).toMatchObject({ failures: 1, escalatedAt: '2025-03-01T10:00:00.000Z' });
    });

    it('new text starts the count again and lifts the escalation', async () => {
      const store = await open();
      for (const id of ['r1', 'r2', 'r3']) await store.recordItemFailure(failure(id));
      await store.setEscalationNotice(FAILING_KEY, 'r9');
      const fresh = await store.recordItemFailure(failure('r4', 'bbbb'));
      expect(fresh).toMatchObject({ failures: 1, escalatedAt: null, noticeRunId: null, textDigest: 'bbbb' });
      expect(await store.listEscalations()).toEqual([]);
    });

    it('lists escalations oldest first', async () => {
      const store = await open();
      const other = { ...failure('r1', 'x', 1), taskKey: '["fix","acme/api","github-issues","8"]' };
      await store.recordItemFailure(other);
      clock += 1000;
      await store.recordItemFailure(failure('r2', 'aaaa', 1));
      expect((await store.listEscalations()).map((e) => e.taskKey)).toEqual([other.taskKey, FAILING_KEY]);
    });

    it('a limit of 0 never escalates; clearing forgets everything', async () => {
      const store = await open();
      for (const id of ['r1', 'r2', 'r3', 'r4']) await store.recordItemFailure(failure(id, 'aaaa', 0));
      expect(await store.getItemFailures(FAILING_KEY)).toMatchObject({ failures: 4, escalatedAt: null });
      expect(await store.clearItemFailures(FAILING_KEY)).toBe(true);
      expect(await store.clearItemFailures(FAILING_KEY)).toBe(false);
      expect(await store.getItemFailures(FAILING_KEY)).toBeUndefined();
    });

    it("raises a count to another host's, never lowers it, never escalates by itself", async () => {
      const store = await open();
      const floor = (failures: number, textDigest = 'aaaa') => ({
        taskKey: FAILING_KEY,
        automationId: 'fix',
        itemKey: 'issue:7',
        runId: 'r_other',
        textDigest,
        failures,
      });
      expect(await store.raiseItemFailures(floor(2))).toMatchObject({ failures: 2, lastRunId: 'r_other' });
      await store.recordItemFailure(failure('r1', 'aaaa', 3));
      expect((await store.getItemFailures(FAILING_KEY))?.escalatedAt).toBe('2025-03-01T10:00:00.000Z');
      const kept = await store.raiseItemFailures(floor(1));
      expect(kept).toMatchObject({ failures: 3, lastRunId: 'r1', escalatedAt: '2025-03-01T10:00:00.000Z' });
      expect(await store.raiseItemFailures(floor(7))).toMatchObject({ failures: 7 });
      const fresh = await store.raiseItemFailures(floor(5, 'bbbb'));
      expect(fresh).toMatchObject({ failures: 5, textDigest: 'bbbb', escalatedAt: null, noticeRunId: null });
      expect(await store.listEscalations()).toEqual([]);
    });
  });

  describe('screening and allowances', () => {
    it('keeps a blocked run’s findings, verdict and digest, and finds it by task and digest', async () => {
      const store = await open();
      const run = await store.createRun({
        ...BLOCKED,
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
      const newer = await store.createRun({ ...BLOCKED, screenedDigest: 'd1' });
      expect((await store.findBlockedRun(BLOCKED.taskKey, 'd1'))?.id).toBe(newer.id);
      expect(await store.findBlockedRun(BLOCKED.taskKey, 'd2')).toBeUndefined();
      const other = await store.createRun({ ...BLOCKED, status: 'succeeded', screenedDigest: 'd3' });
      expect(await store.findBlockedRun(BLOCKED.taskKey, 'd3')).toBeUndefined();
      expect((await store.getRun(other.id))?.screeningFindings).toBeNull();
    });

    it('an allowance lets that digest through exactly once, and only blocked runs can be allowed', async () => {
      clock = Date.parse('2026-02-01T10:00:00Z');
      const store = await open();
      const run = await store.createRun({ ...BLOCKED, screenedDigest: 'd1' });
      const allowance = await store.addAllowance(run.id, 'alice');
      expect(allowance).toEqual({
        id: allowance.id,
        runId: run.id,
        taskKey: BLOCKED.taskKey,
        textDigest: 'd1',
        allowedBy: 'alice',
        allowedAt: '2026-02-01T10:00:00.000Z',
        usedAt: null,
      });
      expect(typeof allowance.id).toBe('number');
      expect(await store.listAllowances({ pending: true })).toHaveLength(1);
      expect(await store.takeAllowance(BLOCKED.taskKey, 'other-text')).toBeUndefined();
      expect((await store.takeAllowance(BLOCKED.taskKey, 'd1'))?.usedAt).toBe('2026-02-01T10:00:00.000Z');
      expect(await store.takeAllowance(BLOCKED.taskKey, 'd1')).toBeUndefined();
      expect(await store.listAllowances({ pending: true })).toEqual([]);
      expect(await store.listAllowances({ runId: run.id })).toHaveLength(1);
      // Given back (its run failed before the agent started): the time the person allowed it stays.
      const back = await store.addAllowance(run.id, 'alice', '2026-02-01T09:00:00.000Z');
      expect(back.allowedAt).toBe('2026-02-01T09:00:00.000Z');
      expect((await store.takeAllowance(BLOCKED.taskKey, 'd1'))?.allowedAt).toBe('2026-02-01T09:00:00.000Z');
      const ok = await store.createRun({ ...BLOCKED, status: 'succeeded' });
      await expect(store.addAllowance(ok.id, 'alice')).rejects.toThrow(StateError);
      await expect(store.addAllowance(ok.id, 'alice')).rejects.toThrow(/was not blocked by screening/);
      const unscreened = await store.createRun({ ...BLOCKED });
      await expect(store.addAllowance(unscreened.id, 'alice')).rejects.toThrow(/was not blocked/);
      await expect(store.addAllowance('r_nope', 'alice')).rejects.toThrow(/does not exist/);
    });

    it('uses waiting allowances oldest first, one per take', async () => {
      const store = await open();
      const run = await store.createRun({ ...BLOCKED, screenedDigest: 'd1' });
      const first = await store.addAllowance(run.id, 'alice');
      const second = await store.addAllowance(run.id, 'bob');
      expect(second.id).toBeGreaterThan(first.id);
      expect((await store.takeAllowance(BLOCKED.taskKey, 'd1'))?.id).toBe(first.id);
      expect((await store.listAllowances({ pending: true })).map((a) => a.allowedBy)).toEqual(['bob']);
      expect((await store.listAllowances({})).map((a) => a.allowedBy)).toEqual(['alice', 'bob']);
    });

    it('a take sent again with its token (its answer lost) gets the allowance it took, not another', async () => {
      const store = await open();
      const run = await store.createRun({ ...BLOCKED, screenedDigest: 'd1' });
      const first = await store.addAllowance(run.id, 'alice');
      const second = await store.addAllowance(run.id, 'bob');
      expect((await store.takeAllowance(BLOCKED.taskKey, 'd1', 'take-1'))?.id).toBe(first.id);
      // The same call again: its own allowance, and bob's still waits.
      expect((await store.takeAllowance(BLOCKED.taskKey, 'd1', 'take-1'))?.id).toBe(first.id);
      expect((await store.listAllowances({ pending: true })).map((a) => a.id)).toEqual([second.id]);
      // Another call takes the next one; without a token, as before.
      expect((await store.takeAllowance(BLOCKED.taskKey, 'd1', 'take-2'))?.id).toBe(second.id);
      expect(await store.takeAllowance(BLOCKED.taskKey, 'd1', 'take-3')).toBeUndefined();
      expect(await store.takeAllowance(BLOCKED.taskKey, 'd1')).toBeUndefined();
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
      await store.recordItemKeys('review', []);

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

    it('keeps the first record of a key given twice in one call', async () => {
      const store = await open();
      await store.recordItemKeys('triage', [
        { itemKey: 'issue:1', runId: null, skipped: true },
        { itemKey: 'issue:1', runId: 'r_a', skipped: false },
      ]);
      expect(await store.listItemKeys('triage')).toEqual([
        { itemKey: 'issue:1', runId: null, skipped: true },
      ]);
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
      await store.setMeta('empty', '');
      expect(await store.getMeta('empty')).toBe('');
    });
  });

  describe('lifecycle', () => {
    it('reports use after close as a StateError, and closing twice is harmless', async () => {
      const store = await open();
      await store.close();
      await store.close();
      await expect(store.getMeta('x')).rejects.toThrow(/is closed/);
      await expect(store.setMeta('x', 'y')).rejects.toBeInstanceOf(StateError);
      await expect(store.createRun(runInit('1'))).rejects.toBeInstanceOf(StateError);
    });
  });

  describe('read-only', () => {
    it('shows an empty state when there is none yet, and refuses to write', async () => {
      const store = await open({ readonly: true });
      expect(await store.listRuns()).toEqual([]);
      expect(await store.countRuns()).toBe(0);
      expect(await store.listSessions()).toEqual([]);
      expect(await store.listUnfinishedRuns()).toEqual([]);
      expect(await store.listPaused()).toEqual([]);
      expect(await store.getMeta('k')).toBeUndefined();
      await expect(store.setMeta('k', 'v')).rejects.toThrow(/read-only/);
    });

    it('reads what a running writer has committed, and refuses to write', async () => {
      const writer = await open();
      const run = await writer.createRun(runInit('1', { status: 'blocked', screenedDigest: 'd' }));
      await writer.saveSession(session('1'));

      const reader = await open({ readonly: true });
      expect(await reader.getRun(run.id)).toEqual(run);
      expect(await reader.listSessions()).toHaveLength(1);
      await expect(reader.createRun(runInit('2'))).rejects.toThrow(StateError);
      await expect(reader.deleteSession(task('1').key)).rejects.toThrow(/read-only/);
      await expect(reader.updateRun(run.id, {})).rejects.toThrow(/read-only/);
      await expect(reader.recordItemKeys('triage', [])).rejects.toThrow(/read-only/);
      await expect(reader.recordItemFailure(failure('r1'))).rejects.toThrow(/read-only/);
      await expect(reader.addAllowance(run.id, 'alice')).rejects.toThrow(/read-only/);
      await expect(reader.takeAllowance(run.taskKey, 'd')).rejects.toThrow(/read-only/);
      await expect(reader.setPaused('triage', true)).rejects.toThrow(/read-only/);
      await expect(reader.putCronState({ automationId: 'x', createdAt: 'now' } as never)).rejects.toThrow(
        /read-only/,
      );

      await writer.updateRun(run.id, { status: 'succeeded' });
      expect((await reader.getRun(run.id))?.status).toBe('succeeded');
    });
  });
});
