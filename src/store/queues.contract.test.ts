/**
 * The store's queues and deliveries, on both backends (issue 17): the GitHub write queue,
 * notifications, webhook deliveries, delivered pull requests and their marks. Each test runs
 * against SQLite and PostgreSQL and expects the same records, order and errors.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshSchema, TEST_PG_URL, type TestSchema } from '../../test/helpers/pg.js';
import { STORE_BACKENDS, type StoreBackend } from '../../test/helpers/store-backends.js';
import { StateError } from '../core/errors.js';
import { openPostgresStore } from './postgres/open.js';
import { PgQueues, QUEUE_TABLES_DDL, type QueueMethods } from './postgres/queues.js';
import type { PullRequestInit, Store, WriteInit } from './types.js';

const NOW = Date.parse('2026-02-01T10:00:00Z');
const at = (ms: number) => new Date(ms).toISOString();

const COMMENT = {
  marker: 'result:r_1',
  repo: 'acme/api',
  number: 7,
  write: { kind: 'comment', body: 'done' },
} as const satisfies WriteInit;

function comment(marker: string, overrides: Partial<WriteInit> = {}): WriteInit {
  return { ...COMMENT, marker, write: { kind: 'comment', body: marker }, ...overrides };
}

function notification(key: string, overrides: Record<string, string> = {}) {
  return {
    key,
    target: 'ops',
    eventId: key.split('@')[0] ?? key,
    event: 'run.failed',
    payload: JSON.stringify({ key }),
    ...overrides,
  };
}

function pullRequest(runId: string, overrides: Partial<PullRequestInit> = {}): PullRequestInit {
  return {
    runId,
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: `curupira/fix/${runId}`,
    ...overrides,
  };
}

/** Every write method of the queues rejects with a read-only `StateError` (ids: a write and a notification). */
async function expectRefused(
  reader: Pick<Store, QueueMethods>,
  writeId: number,
  notificationId: number,
): Promise<void> {
  const refused: (() => Promise<unknown>)[] = [
    () => reader.enqueueWrite(comment('other')),
    () => reader.updateWrite(writeId, { status: 'sent' }),
    () => reader.enqueueNotification(notification('e2@ops')),
    () => reader.updateNotification(notificationId, { status: 'sent' }),
    () => reader.recordWebhookDelivery({ id: 'd1', event: 'issues', pruneBefore: at(NOW) }),
    () => reader.beginPullRequest(pullRequest('r_2')),
    () => reader.updatePullRequest('r_1', { state: 'open' }),
    () => reader.setPullRequestMark('r_1', 'rounds', '2'),
    () => reader.deletePullRequestMark('r_1', 'rounds'),
  ];
  for (const call of refused) {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateError);
    expect((error as StateError).message).toMatch(/was opened read-only/);
  }
}

describe.each(STORE_BACKENDS)('store queues and deliveries ($name)', ({ backend: makeBackend }) => {
  let backend: StoreBackend;
  let store: Store;
  let clock: number;

  beforeEach(async () => {
    backend = makeBackend();
    clock = NOW;
    store = await backend.open({ now: () => clock });
  });

  afterEach(async () => {
    await backend.cleanup();
  });

  describe('the GitHub write queue', () => {
    it('keeps a queued write with its marker, and finds it due', async () => {
      const queued = await store.enqueueWrite({ ...COMMENT, runId: 'r_1' });
      expect(queued).toEqual({
        id: queued.id,
        marker: 'result:r_1',
        repo: 'acme/api',
        number: 7,
        write: { kind: 'comment', body: 'done' },
        runId: 'r_1',
        status: 'pending',
        attempts: 0,
        nextAttemptAt: '2026-02-01T10:00:00.000Z',
        lastError: null,
        resultId: null,
        createdAt: '2026-02-01T10:00:00.000Z',
        sentAt: null,
      });
      expect(typeof queued.id).toBe('number');
      expect((await store.listDueWrites('2026-02-01T10:00:00.000Z')).map((w) => w.id)).toEqual([queued.id]);
      expect(await store.listDueWrites('2026-02-01T09:59:59.000Z')).toEqual([]);
      expect(await store.listWrites({ runId: 'r_1' })).toEqual([queued]);
    });

    it('enqueueing the same marker replaces the write and makes it pending again, keeping the comment id', async () => {
      const first = await store.enqueueWrite({ ...COMMENT, runId: 'r_1' });
      await store.updateWrite(first.id, {
        status: 'sent',
        attempts: 2,
        resultId: 41,
        sentAt: 'x',
        lastError: 'boom',
      });
      clock = NOW + 60_000;
      const again = await store.enqueueWrite({
        ...COMMENT,
        runId: 'r_2',
        write: { kind: 'comment', body: 'edited' },
      });
      expect(again).toMatchObject({
        id: first.id,
        status: 'pending',
        attempts: 0,
        resultId: 41,
        sentAt: null,
        lastError: null,
        // The row's origin stays; only what is sent and when it is due are new.
        runId: 'r_1',
        createdAt: first.createdAt,
        nextAttemptAt: at(NOW + 60_000),
      });
      expect(again.write).toEqual({ kind: 'comment', body: 'edited' });
      expect(await store.listWrites()).toHaveLength(1);
    });

    it('a later notBefore keeps a write back; updates of a missing write fail', async () => {
      await store.enqueueWrite({ ...COMMENT, notBefore: '2026-02-01T11:00:00.000Z' });
      expect(await store.listDueWrites('2026-02-01T10:30:00.000Z')).toEqual([]);
      expect(await store.listDueWrites('2026-02-01T11:00:00.000Z')).toHaveLength(1);
      await expect(store.updateWrite(999, { status: 'failed' })).rejects.toThrow(StateError);
      await expect(store.updateWrite(999, {})).rejects.toThrow(/write 999 does not exist in state database/);
    });

    it("holds an item's later write back while an earlier one to it is pending, and lists the rest oldest due first", async () => {
      const a1 = await store.enqueueWrite(comment('a1', { notBefore: at(NOW + 5_000) }));
      const a2 = await store.enqueueWrite(comment('a2'));
      const b1 = await store.enqueueWrite(comment('b1', { number: 8, notBefore: at(NOW + 2_000) }));
      const c1 = await store.enqueueWrite(comment('c1', { repo: 'acme/web' }));
      const due = at(NOW + 10_000);
      // a2 is due before a1 but waits for it; another item, or the same number elsewhere, does not.
      expect((await store.listDueWrites(due)).map((w) => w.marker)).toEqual(['c1', 'b1', 'a1']);
      expect((await store.listDueWrites(at(NOW + 3_000))).map((w) => w.marker)).toEqual(['c1', 'b1']);
      expect((await store.listDueWrites(due, 2)).map((w) => w.id)).toEqual([c1.id, b1.id]);
      await store.updateWrite(a1.id, { status: 'sent', sentAt: at(NOW + 6_000) });
      expect((await store.listDueWrites(due)).map((w) => w.id)).toEqual([a2.id, c1.id, b1.id]);
      // A failed write no longer holds the item's queue either.
      await store.updateWrite(a2.id, { status: 'failed', lastError: 'gone' });
      await store.enqueueWrite(comment('a3'));
      expect((await store.listDueWrites(due)).map((w) => w.marker)).toEqual(['c1', 'a3', 'b1']);
      expect(await store.listDueWrites(due, 0)).toEqual([]);
    });

    it('lists writes in queue order, by status, run or marker', async () => {
      const one = await store.enqueueWrite(comment('m1', { runId: 'r_1' }));
      const two = await store.enqueueWrite(comment('m2', { runId: 'r_2', number: 0 }));
      const three = await store.enqueueWrite(comment('m3', { runId: 'r_1' }));
      await store.updateWrite(two.id, { status: 'sent' });
      expect((await store.listWrites()).map((w) => w.id)).toEqual([one.id, two.id, three.id]);
      expect((await store.listWrites({ status: 'pending' })).map((w) => w.marker)).toEqual(['m1', 'm3']);
      expect((await store.listWrites({ runId: 'r_1', status: 'pending' })).map((w) => w.marker)).toEqual([
        'm1',
        'm3',
      ]);
      expect(await store.listWrites({ marker: 'm2' })).toMatchObject([
        { id: two.id, number: 0, status: 'sent' },
      ]);
      expect(await store.listWrites({ marker: 'nothing' })).toEqual([]);
    });

    it('applies a patch, leaving what it omits, and keeps a comment id beyond 32 bits as a number', async () => {
      const queued = await store.enqueueWrite({
        ...COMMENT,
        write: { kind: 'add-labels', labels: [{ name: 'bug', color: 'ff0000' }] },
      });
      const started = await store.updateWrite(queued.id, {
        attempts: 1,
        nextAttemptAt: at(NOW + 30_000),
        lastError: 'rate limited',
      });
      expect(started).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: at(NOW + 30_000) });
      const sent = await store.updateWrite(queued.id, {
        status: 'sent',
        resultId: 2_712_345_678_901,
        lastError: null,
        sentAt: at(NOW + 31_000),
      });
      expect(sent).toMatchObject({ attempts: 1, resultId: 2_712_345_678_901, lastError: null });
      expect(await store.updateWrite(queued.id, {})).toEqual(sent);
      expect(sent.write).toEqual({ kind: 'add-labels', labels: [{ name: 'bug', color: 'ff0000' }] });
    });
  });

  describe('notifications', () => {
    it('queues a notification once per key: queueing it again leaves the row as it is', async () => {
      const queued = await store.enqueueNotification(notification('e1@ops'));
      expect(queued).toEqual({
        id: queued.id,
        key: 'e1@ops',
        target: 'ops',
        eventId: 'e1',
        event: 'run.failed',
        payload: '{"key":"e1@ops"}',
        status: 'pending',
        attempts: 0,
        nextAttemptAt: at(NOW),
        lastError: null,
        createdAt: at(NOW),
        sentAt: null,
      });
      expect(typeof queued.id).toBe('number');
      await store.updateNotification(queued.id, { status: 'sent', attempts: 1, sentAt: at(NOW + 1) });
      clock = NOW + 5_000;
      const again = await store.enqueueNotification(notification('e1@ops', { payload: '{"other":true}' }));
      expect(again).toMatchObject({
        id: queued.id,
        payload: '{"key":"e1@ops"}',
        status: 'sent',
        attempts: 1,
      });
      expect(await store.listNotifications()).toHaveLength(1);
    });

    it('lists due notifications oldest due first, and all of them in queue order or by status', async () => {
      const late = await store.enqueueNotification({ ...notification('e1@ops'), notBefore: at(NOW + 9_000) });
      const soon = await store.enqueueNotification({
        ...notification('e1@chat'),
        notBefore: at(NOW + 1_000),
      });
      const now = await store.enqueueNotification(notification('e2@ops'));
      expect((await store.listDueNotifications(at(NOW))).map((n) => n.id)).toEqual([now.id]);
      expect((await store.listDueNotifications(at(NOW + 9_000))).map((n) => n.id)).toEqual([
        now.id,
        soon.id,
        late.id,
      ]);
      expect((await store.listDueNotifications(at(NOW + 9_000), 2)).map((n) => n.id)).toEqual([
        now.id,
        soon.id,
      ]);
      await store.updateNotification(soon.id, { status: 'failed', lastError: 'HTTP 500', attempts: 5 });
      expect((await store.listDueNotifications(at(NOW + 9_000))).map((n) => n.id)).toEqual([now.id, late.id]);
      expect((await store.listNotifications()).map((n) => n.id)).toEqual([late.id, soon.id, now.id]);
      expect(await store.listNotifications({ status: 'failed' })).toMatchObject([
        { id: soon.id, lastError: 'HTTP 500', attempts: 5, nextAttemptAt: at(NOW + 1_000) },
      ]);
      expect(await store.listNotifications({ status: 'sent' })).toEqual([]);
    });

    it('applies a patch to a notification; a missing one fails', async () => {
      const queued = await store.enqueueNotification(notification('e1@ops'));
      const retried = await store.updateNotification(queued.id, {
        attempts: 1,
        nextAttemptAt: at(NOW + 60_000),
        lastError: 'timeout',
      });
      expect(retried).toMatchObject({ status: 'pending', attempts: 1, lastError: 'timeout' });
      expect(await store.updateNotification(queued.id, {})).toEqual(retried);
      const sent = await store.updateNotification(queued.id, {
        status: 'sent',
        lastError: null,
        sentAt: at(NOW),
      });
      expect(sent).toMatchObject({ status: 'sent', attempts: 1, lastError: null, sentAt: at(NOW) });
      await expect(store.updateNotification(999, { status: 'sent' })).rejects.toThrow(StateError);
      await expect(store.updateNotification(999, {})).rejects.toThrow(
        /notification 999 does not exist in state database/,
      );
    });
  });

  describe('webhook deliveries', () => {
    it('acts on a delivery id once, and forgets ids received before pruneBefore', async () => {
      const prune = at(NOW - 86_400_000);
      expect(await store.recordWebhookDelivery({ id: 'd1', event: 'issues', pruneBefore: prune })).toBe(true);
      expect(await store.recordWebhookDelivery({ id: 'd1', event: 'issues', pruneBefore: prune })).toBe(
        false,
      );
      expect(await store.recordWebhookDelivery({ id: 'd2', event: 'push', pruneBefore: prune })).toBe(true);
      clock = NOW + 1_000;
      // d1 and d2 were received at NOW: not before NOW, so still known.
      expect(await store.recordWebhookDelivery({ id: 'd1', event: 'issues', pruneBefore: at(NOW) })).toBe(
        false,
      );
      // Once their time is before pruneBefore they are forgotten, so the same id counts as new.
      expect(await store.recordWebhookDelivery({ id: 'd1', event: 'issues', pruneBefore: at(NOW + 1) })).toBe(
        true,
      );
      expect(await store.recordWebhookDelivery({ id: 'd2', event: 'push', pruneBefore: at(NOW + 1) })).toBe(
        true,
      );
      expect(await store.recordWebhookDelivery({ id: 'd2', event: 'push', pruneBefore: at(NOW + 1) })).toBe(
        false,
      );
    });
  });

  describe('webhook deliveries sent again', () => {
    it('a record sent again with its receipt (its answer lost) is still new; another receipt is a redelivery', async () => {
      const prune = at(NOW - 86_400_000);
      const once = { id: 'd7', event: 'issues', pruneBefore: prune, receipt: 'call-1' };
      expect(await store.recordWebhookDelivery(once)).toBe(true);
      expect(await store.recordWebhookDelivery(once)).toBe(true);
      expect(await store.recordWebhookDelivery({ ...once, receipt: 'call-2' })).toBe(false);
      expect(await store.recordWebhookDelivery({ id: 'd7', event: 'issues', pruneBefore: prune })).toBe(
        false,
      );
    });
  });

  describe('pull requests', () => {
    it('begins a delivery in state pushing, and beginning it again returns the one recorded', async () => {
      const begun = await store.beginPullRequest(pullRequest('r_1'));
      expect(begun).toEqual({
        runId: 'r_1',
        automationId: 'fix',
        taskKey: 'k1',
        repo: 'acme/api',
        delivery: 'pr',
        headBranch: 'curupira/fix/r_1',
        headSha: null,
        baseBranch: null,
        number: null,
        url: null,
        adopted: false,
        state: 'pushing',
        detail: null,
        since: at(NOW),
        gate: null,
        gateSince: null,
        gateDetail: null,
        createdAt: at(NOW),
        updatedAt: at(NOW),
      });
      clock = NOW + 1_000;
      const pushed = await store.updatePullRequest('r_1', { state: 'pushed', headSha: 'abc123' });
      clock = NOW + 2_000;
      expect(await store.beginPullRequest(pullRequest('r_1', { headBranch: 'other' }))).toEqual(pushed);
      expect(await store.getPullRequest('r_1')).toEqual(pushed);
      expect(await store.getPullRequest('r_2')).toBeUndefined();
    });

    it('applies a patch; since moves only when the state changes; a run without a delivery fails', async () => {
      await store.beginPullRequest(pullRequest('r_1'));
      clock = NOW + 1_000;
      const open = await store.updatePullRequest('r_1', {
        state: 'open',
        number: 12,
        url: 'https://github.com/acme/api/pull/12',
        baseBranch: 'main',
        adopted: true,
        detail: undefined,
      });
      expect(open).toMatchObject({
        state: 'open',
        number: 12,
        adopted: true,
        baseBranch: 'main',
        detail: null,
        since: at(NOW + 1_000),
        updatedAt: at(NOW + 1_000),
        createdAt: at(NOW),
      });
      clock = NOW + 2_000;
      const same = await store.updatePullRequest('r_1', { state: 'open', detail: 'still open' });
      expect(same).toMatchObject({
        since: at(NOW + 1_000),
        updatedAt: at(NOW + 2_000),
        detail: 'still open',
      });
      clock = NOW + 3_000;
      const touched = await store.updatePullRequest('r_1', {});
      expect(touched).toMatchObject({ since: at(NOW + 1_000), updatedAt: at(NOW + 3_000), number: 12 });
      const closed = await store.updatePullRequest('r_1', { state: 'closed', adopted: false, detail: null });
      expect(closed).toMatchObject({ state: 'closed', since: at(NOW + 3_000), adopted: false, detail: null });
      await expect(store.updatePullRequest('nope', { state: 'open' })).rejects.toThrow(StateError);
      await expect(store.updatePullRequest('nope', {})).rejects.toThrow(
        /run nope has no delivery in state database/,
      );
      expect(await store.getPullRequest('nope')).toBeUndefined();
    });

    it('keeps a gate with its own since-when, apart from the lifecycle state', async () => {
      await store.beginPullRequest(pullRequest('r_1'));
      const begun = await store.getPullRequest('r_1');
      expect(begun?.gate).toBeNull();
      expect(begun?.gateSince).toBeNull();
      clock = NOW + 1_000;
      const open = await store.updatePullRequest('r_1', { state: 'open', number: 2 });
      clock = NOW + 2_000;
      const gated = await store.updatePullRequest('r_1', { gate: 'ci_failing', gateDetail: 'test failed' });
      expect(gated.state).toBe('open');
      expect(gated.since).toBe(open.since);
      expect(gated.gate).toBe('ci_failing');
      expect(gated.gateDetail).toBe('test failed');
      expect(gated.gateSince).toBe(at(NOW + 2_000));
      // The same gate again does not move its since-when.
      clock = NOW + 3_000;
      const again = await store.updatePullRequest('r_1', { gate: 'ci_failing', gateDetail: 'still' });
      expect(again.gateSince).toBe(gated.gateSince);
      expect(again.gateDetail).toBe('still');
      const ready = await store.updatePullRequest('r_1', { gate: 'ready', gateDetail: null });
      expect(ready).toMatchObject({ gate: 'ready', gateSince: at(NOW + 3_000), gateDetail: null });
      clock = NOW + 4_000;
      const cleared = await store.updatePullRequest('r_1', { gate: null });
      expect(cleared).toMatchObject({ gate: null, gateSince: at(NOW + 4_000), since: open.since });
    });

    it('lists deliveries oldest first, optionally only some states or one task', async () => {
      clock = NOW + 1_000;
      await store.beginPullRequest(pullRequest('r_b'));
      await store.beginPullRequest(pullRequest('r_a', { taskKey: 'k2' }));
      clock = NOW;
      await store.beginPullRequest(pullRequest('r_c', { delivery: 'branch' }));
      await store.updatePullRequest('r_b', { state: 'open' });
      await store.updatePullRequest('r_c', { state: 'pushed' });
      const ids = (records: { runId: string }[]) => records.map((r) => r.runId);
      expect(ids(await store.listPullRequests())).toEqual(['r_c', 'r_a', 'r_b']);
      expect(ids(await store.listPullRequests({ states: [] }))).toEqual(['r_c', 'r_a', 'r_b']);
      expect(ids(await store.listPullRequests({ states: ['open', 'pushing'] }))).toEqual(['r_a', 'r_b']);
      expect(ids(await store.listPullRequests({ states: ['merged'] }))).toEqual([]);
      expect(ids(await store.listPullRequests({ taskKey: 'k1' }))).toEqual(['r_c', 'r_b']);
      expect(ids(await store.listPullRequests({ taskKey: 'k1', states: ['pushed'] }))).toEqual(['r_c']);
    });

    it('sets, replaces, lists and deletes marks per delivery', async () => {
      await store.beginPullRequest(pullRequest('r_1'));
      expect(await store.getPullRequestMark('r_1', 'reviews')).toBeUndefined();
      await store.setPullRequestMark('r_1', 'reviews', '10');
      clock = NOW + 1_000;
      const replaced = await store.setPullRequestMark('r_1', 'reviews', '12');
      expect(replaced).toEqual({ runId: 'r_1', key: 'reviews', value: '12', at: at(NOW + 1_000) });
      await store.setPullRequestMark('r_1', 'rounds', '1');
      // Keys in byte order, as SQLite sorts them: capitals before lower case.
      await store.setPullRequestMark('r_1', 'Z-notice', 'sent');
      await store.setPullRequestMark('r_2', 'reviews', '3');
      expect((await store.listPullRequestMarks('r_1')).map((m) => [m.key, m.value])).toEqual([
        ['Z-notice', 'sent'],
        ['reviews', '12'],
        ['rounds', '1'],
      ]);
      expect(await store.deletePullRequestMark('r_1', 'rounds')).toBe(true);
      expect(await store.deletePullRequestMark('r_1', 'rounds')).toBe(false);
      expect(await store.getPullRequestMark('r_1', 'reviews')).toEqual(replaced);
      expect(await store.getPullRequestMark('r_2', 'reviews')).toMatchObject({ value: '3' });
      expect(await store.listPullRequestMarks('no-such-run')).toEqual([]);
    });
  });

  describe('read-only', () => {
    it('reads what a writer committed and refuses every queue and delivery write', async () => {
      const writer = await backend.open({ now: () => clock, reopen: 'shared' });
      const write = await writer.enqueueWrite(COMMENT);
      const note = await writer.enqueueNotification(notification('e1@ops'));
      await writer.beginPullRequest(pullRequest('r_1'));
      await writer.setPullRequestMark('r_1', 'rounds', '1');
      const reader = await backend.open({ now: () => clock, reopen: 'shared', readonly: true });
      expect(await reader.listWrites()).toEqual([write]);
      expect(await reader.listDueWrites(at(NOW))).toEqual([write]);
      expect(await reader.listNotifications()).toEqual([note]);
      expect(await reader.listDueNotifications(at(NOW))).toEqual([note]);
      expect(await reader.listPullRequests()).toEqual([await writer.getPullRequest('r_1')]);
      expect(await reader.listPullRequestMarks('r_1')).toMatchObject([{ key: 'rounds', value: '1' }]);
      await expectRefused(reader, write.id, note.id);
      expect(await writer.listWrites()).toEqual([write]);
      expect(await writer.getPullRequestMark('r_1', 'rounds')).toMatchObject({ value: '1' });
    });
  });

  describe('two processes at once', () => {
    it('one marker, one key, one delivery id and one delivery however many enqueue them together', async () => {
      const first = await backend.open({ now: () => clock, reopen: 'shared' });
      const second = await backend.open({ now: () => clock, reopen: 'shared' });
      const both = <T>(call: (s: Store) => Promise<T>) =>
        Promise.all(Array.from({ length: 8 }, (_, i) => call(i % 2 === 0 ? first : second)));

      for (const marker of ['m1', 'm2', 'm3']) {
        const writes = await both((s) => s.enqueueWrite(comment(marker)));
        expect(new Set(writes.map((w) => w.id)).size).toBe(1);
        expect(await first.listWrites({ marker })).toHaveLength(1);
      }
      expect(await second.listWrites()).toHaveLength(3);

      const notes = await both((s) => s.enqueueNotification(notification('e1@ops')));
      expect(new Set(notes.map((n) => n.id)).size).toBe(1);
      expect(await second.listNotifications()).toHaveLength(1);

      const fresh = await both((s) =>
        s.recordWebhookDelivery({ id: 'd1', event: 'issues', pruneBefore: at(NOW - 1) }),
      );
      expect(fresh.filter(Boolean)).toHaveLength(1);

      const begun = await both((s) => s.beginPullRequest(pullRequest('r_1')));
      expect(begun.every((b) => b.runId === 'r_1' && b.state === 'pushing')).toBe(true);
      expect(await first.listPullRequests()).toHaveLength(1);

      const marks = await both((s) => s.setPullRequestMark('r_1', 'rounds', '1'));
      expect(marks.every((m) => m.value === '1')).toBe(true);
      expect(await second.listPullRequestMarks('r_1')).toHaveLength(1);
    });
  });
});

describe('PgQueues opened read-only', () => {
  let schema: TestSchema;
  let pool: pg.Pool;

  beforeEach(async () => {
    schema = await freshSchema('queues');
    pool = new pg.Pool({ connectionString: TEST_PG_URL, options: `-c search_path=${schema.schema}` });
    await pool.query(QUEUE_TABLES_DDL);
  });

  afterEach(async () => {
    await pool.end();
    await schema.drop();
  });

  it('reads what a writer committed and refuses every write with a StateError', async () => {
    const writer = new PgQueues(pool, { now: () => NOW, readonly: false });
    const reader = new PgQueues(pool, { now: () => NOW, readonly: true });
    const write = await writer.enqueueWrite(COMMENT);
    const note = await writer.enqueueNotification(notification('e1@ops'));
    await writer.beginPullRequest(pullRequest('r_1'));
    await writer.setPullRequestMark('r_1', 'rounds', '1');
    expect(await reader.listWrites()).toEqual([write]);
    expect(await reader.listDueWrites(at(NOW))).toEqual([write]);
    expect(await reader.listNotifications()).toEqual([note]);
    expect(await reader.listDueNotifications(at(NOW))).toEqual([note]);
    expect(await reader.getPullRequest('r_1')).toMatchObject({ state: 'pushing' });
    expect(await reader.listPullRequests()).toHaveLength(1);
    expect(await reader.listPullRequestMarks('r_1')).toHaveLength(1);
    expect(await reader.getPullRequestMark('r_1', 'rounds')).toMatchObject({ value: '1' });

    await expectRefused(reader, write.id, note.id);
    expect(await reader.listWrites()).toEqual([write]);
    expect(await reader.listNotifications()).toEqual([note]);
    expect(await reader.getPullRequestMark('r_1', 'rounds')).toMatchObject({ value: '1' });
  });
});

describe('the PostgreSQL store, when the database fails under PgQueues', () => {
  let schema: TestSchema;

  beforeEach(async () => {
    schema = await freshSchema('queues');
  });

  afterEach(async () => {
    await schema.drop();
  });

  it("reports it as a StateError naming the store (the error is the store's to say)", async () => {
    const store = await openPostgresStore(schema.url, { now: () => NOW });
    try {
      await store.enqueueWrite(COMMENT);
      const admin = new pg.Client({ connectionString: TEST_PG_URL });
      await admin.connect();
      await admin.query(`DROP TABLE ${schema.schema}.writes`);
      await admin.end();
      const error = await store.listWrites().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateError);
      expect((error as StateError).message).toContain(`schema=${schema.schema}`);
      await expect(store.enqueueWrite(COMMENT)).rejects.toThrow(StateError);
    } finally {
      await store.close();
    }
  });
});
