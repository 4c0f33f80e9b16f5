/**
 * The write queue against the simulator: real store in a temp dir, real HTTP, and a virtual clock
 * shared by the queue, the client and the simulator (a sleep moves it at once, so minutes of
 * backoff take no time and the simulator's pacing rule sees the same time as the queue).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLog } from '../../test/helpers/log-lines.js';
import type { Clock } from '../core/clock.js';
import { registerSecret } from '../security/redact.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { openStore } from '../store/index.js';
import type { GitHubWrite, Store } from '../store/types.js';
import { createGitHubClient } from './client.js';
import { staticTokenSource } from './token.js';
import { markerComment, WRITE_BACKOFF_MS, WriteQueue, type WriteQueueOptions } from './write-queue.js';

const TOKEN = 'queue-token';

class VirtualClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(public t = Date.UTC(2026, 2, 1, 9, 0, 0)) {}
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.t += Math.max(0, ms);
    return Promise.resolve();
  }
}

/** A seeded random source (mulberry32), so the 30 % of faults fall the same way every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let dir: string;
let sim: Simulator;
let world: SimWorld;
let store: Store;
let clock: VirtualClock;

function makeQueue(options: Pick<WriteQueueOptions, 'paceMs' | 'log' | 'sendServiceWrite'> = {}): WriteQueue {
  const client = createGitHubClient({
    apiUrl: sim.url,
    tokens: staticTokenSource(TOKEN),
    clock,
    maxAttempts: 1,
    random: () => 0.5,
  });
  return new WriteQueue({ store, client, clock, ...options });
}

/** Queues `write` for acme/api#number under `marker`. */
function onItem(queue: WriteQueue, number: number, marker: string, write: GitHubWrite) {
  return queue.enqueue({ marker, repo: 'acme/api', number, write });
}

const writeRequests = () => sim.requests.filter((r) => r.method !== 'GET');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-queue-'));
  clock = new VirtualClock();
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addRepo('acme/api');
  for (let i = 1; i <= 10; i++) world.addIssue('acme/api', { title: `Item ${i}` });
  sim = await startSimulator({ world, now: () => clock.now() });
  store = await openStore(join(dir, 'state.sqlite3'), { now: () => clock.now() });
});

afterEach(async () => {
  await store.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the write queue', () => {
  it('30 % write faults for a while: after recovery every intended write is there exactly once', async () => {
    // Half the faults happen after GitHub applied the write: only the marker check avoids duplicates.
    const random = seeded(7);
    sim.setWriteFaults({ fraction: 0.3, applied: true, random });
    const queue = makeQueue();
    for (let n = 1; n <= 10; n++) {
      await queue.enqueue({
        marker: `result run=r_${n}`,
        repo: 'acme/api',
        number: n,
        write: { kind: 'comment', body: `Run r_${n} succeeded.` },
      });
      await queue.enqueue({
        marker: `label run=r_${n}`,
        repo: 'acme/api',
        number: n,
        write: {
          kind: 'add-labels',
          labels: [{ name: 'agent:done', color: '0e8a16', description: 'curupira finished this item' }],
        },
      });
    }
    const first = await queue.drain();
    expect(first.retried).toBeGreaterThan(0);
    // A second round still under faults, then GitHub recovers.
    clock.t += 5 * 60_000;
    await queue.drain();
    sim.setWriteFaults(null);
    const rest = await queue.runUntilIdle();
    expect(rest.failed).toBe(0);

    const faulted = sim.requests.filter((r) => r.fault === 'status');
    expect(faulted.filter((r) => r.method === 'POST' && r.path.endsWith('/comments')).length).toBeGreaterThan(
      0,
    );
    for (let n = 1; n <= 10; n++) {
      const item = world.item('acme/api', n)!;
      const marked = item.comments.filter((c) => c.body.includes(markerComment(`result run=r_${n}`)));
      expect(marked.map((c) => c.body)).toEqual([
        `Run r_${n} succeeded.\n\n<!-- curupira:result run=r_${n} -->`,
      ]);
      expect(item.comments).toHaveLength(1);
      expect(item.labels).toEqual(['agent:done']);
    }
    expect(world.label('acme/api', 'agent:done')?.description).toBe('curupira finished this item');
    expect((await store.listWrites({ status: 'sent' })).length).toBe(20);
    const comments = await store.listWrites({ status: 'sent' });
    expect(comments.filter((w) => w.write.kind === 'comment').every((w) => w.resultId !== null)).toBe(true);
  });

  it('an outage retries 8 times over about 3 minutes, then marks the write failed', async () => {
    sim.setWriteFaults({ fraction: 1 });
    const queue = makeQueue();
    const start = clock.now();
    await queue.enqueue({ marker: 'm1', repo: 'acme/api', number: 1, write: { kind: 'comment', body: 'x' } });
    const result = await queue.runUntilIdle();
    expect(result).toEqual({ sent: 0, failed: 1, retried: 7 });
    const [row] = await store.listWrites();
    expect(row).toMatchObject({ status: 'failed', attempts: 8 });
    expect(row?.lastError).toContain('502');
    expect(writeRequests()).toHaveLength(8);
    const elapsed = clock.now() - start;
    expect(WRITE_BACKOFF_MS.reduce((a, b) => a + b, 0)).toBe(180_000);
    expect(elapsed).toBeGreaterThanOrEqual(180_000);
    expect(elapsed).toBeLessThan(190_000);
  });

  it('a refusal (the item does not exist) fails at once, without retries', async () => {
    const queue = makeQueue();
    await onItem(queue, 404, 'gone', { kind: 'set-state', state: 'closed' });
    expect(await queue.runUntilIdle()).toEqual({ sent: 0, failed: 1, retried: 0 });
    expect((await store.listWrites())[0]?.lastError).toContain('404');
  });

  it('paces writes so the content-creation limit is never hit', async () => {
    sim.setWritePacing({ minIntervalMs: 1000, retryAfterSeconds: 5 });
    const queue = makeQueue({ paceMs: 1000 });
    for (let n = 1; n <= 5; n++) {
      await queue.enqueue({
        marker: `c${n}`,
        repo: 'acme/api',
        number: n,
        write: { kind: 'comment', body: 'hi' },
      });
    }
    expect(await queue.runUntilIdle()).toEqual({ sent: 5, failed: 0, retried: 0 });
    expect(sim.requests.filter((r) => r.fault !== null)).toEqual([]);
  });

  it('without pacing, the secondary limit answers 403 and its Retry-After is honoured; nothing doubles', async () => {
    sim.setWritePacing({ minIntervalMs: 1000, retryAfterSeconds: 5 });
    const queue = makeQueue({ paceMs: 0 });
    for (let n = 1; n <= 3; n++) {
      await queue.enqueue({
        marker: `c${n}`,
        repo: 'acme/api',
        number: n,
        write: { kind: 'comment', body: 'hi' },
      });
    }
    const result = await queue.runUntilIdle();
    expect(result.sent).toBe(3);
    expect(sim.requests.some((r) => r.fault === 'secondary-rate-limit' && r.status === 403)).toBe(true);
    expect(clock.sleeps).toContain(5000);
    for (let n = 1; n <= 3; n++) expect(world.item('acme/api', n)!.comments).toHaveLength(1);
  });

  it('the same marker again edits its comment instead of posting another', async () => {
    const queue = makeQueue();
    const marker = 'result run=r_9';
    await queue.enqueue({ marker, repo: 'acme/api', number: 2, write: { kind: 'comment', body: 'running' } });
    await queue.runUntilIdle();
    await queue.enqueue({
      marker,
      repo: 'acme/api',
      number: 2,
      write: { kind: 'comment', body: 'succeeded' },
    });
    await queue.runUntilIdle();
    const comments = world.item('acme/api', 2)!.comments;
    expect(comments.map((c) => c.body)).toEqual([`succeeded\n\n${markerComment(marker)}`]);
    expect(writeRequests().map((r) => r.method)).toEqual(['POST', 'PATCH']);
  });

  it('a marker in a comment by another account is not ours: a new comment is posted', async () => {
    world.addComment('acme/api', 3, { author: 'mallory', body: `fake ${markerComment('result run=r_3')}` });
    const queue = makeQueue();
    await onItem(queue, 3, 'result run=r_3', { kind: 'comment', body: 'real' });
    await queue.runUntilIdle();
    const comments = world.item('acme/api', 3)!.comments;
    expect(comments.map((c) => [c.author, c.body.split('\n')[0]])).toEqual([
      ['mallory', `fake ${markerComment('result run=r_3')}`],
      ['curupira-bot', 'real'],
    ]);
  });

  it('labels are removed, states set, and secrets never posted', async () => {
    const secret = 'ghp_writeQueueSecret0123456789';
    registerSecret(secret);
    world.addLabels('acme/api', 4, ['agent:implementing']);
    const queue = makeQueue();
    await onItem(queue, 4, 'rm', { kind: 'remove-label', label: 'agent:implementing' });
    await onItem(queue, 4, 'rm-again', { kind: 'remove-label', label: 'agent:implementing' });
    await onItem(queue, 4, 'close', { kind: 'set-state', state: 'closed', stateReason: 'not_planned' });
    await onItem(queue, 4, 'leak', { kind: 'comment', body: `token=${secret}` });
    expect(await queue.runUntilIdle()).toEqual({ sent: 4, failed: 0, retried: 0 });
    const issue = world.issue('acme/api', 4)!;
    expect(issue.labels).toEqual([]);
    expect(issue).toMatchObject({ state: 'CLOSED', stateReason: 'NOT_PLANNED' });
    expect(issue.comments[0]?.body).not.toContain(secret);
    expect(issue.comments[0]?.body).toContain('[redacted]');
  });

  it("keeps each item's writes in order: a label's removal waits for its retried addition", async () => {
    sim.faults.add({
      kind: 'status',
      status: 502,
      match: { method: 'POST', path: '/repos/acme/api/issues/6/labels' },
    });
    const queue = makeQueue();
    const label = [{ name: 'agent:implementing', description: 'curupira is working on this' }];
    await onItem(queue, 6, 'start', { kind: 'add-labels', labels: label });
    await onItem(queue, 6, 'exit', { kind: 'remove-label', label: 'agent:implementing' });
    await onItem(queue, 7, 'other', { kind: 'comment', body: 'not held back' });
    const first = await queue.drain();
    expect(first).toEqual({ sent: 1, failed: 0, retried: 1 });
    expect(world.item('acme/api', 7)!.comments).toHaveLength(1);
    expect(await queue.runUntilIdle()).toEqual({ sent: 2, failed: 0, retried: 0 });
    expect(world.item('acme/api', 6)!.labels).toEqual([]);
    const item6 = writeRequests().filter((r) => r.path.startsWith('/repos/acme/api/issues/6/'));
    expect(item6.map((r) => `${r.method} ${r.status}`)).toEqual(['POST 502', 'POST 200', 'DELETE 200']);
  });

  it('a write queued before a crash is sent after the restart, exactly once', async () => {
    const queue = makeQueue();
    await onItem(queue, 5, 'survivor', { kind: 'comment', body: 'later' });
    // The process dies here: no request went out, the row is on disk.
    await store.close();
    expect(writeRequests()).toEqual([]);
    store = await openStore(join(dir, 'state.sqlite3'), { now: () => clock.now() });
    expect(await makeQueue().runUntilIdle()).toEqual({ sent: 1, failed: 0, retried: 0 });
    expect(world.item('acme/api', 5)!.comments).toHaveLength(1);
  });

  it('refuses a marker that would break out of its HTML comment', async () => {
    const queue = makeQueue();
    await expect(
      queue.enqueue({
        marker: 'x --> <b>',
        repo: 'acme/api',
        number: 1,
        write: { kind: 'comment', body: 'b' },
      }),
    ).rejects.toThrow(/invalid write marker/);
    expect(await store.listWrites()).toEqual([]);
  });
});

describe('editOnly comments (lease releases)', () => {
  it('edits the marked comment, and posts nothing when it is gone', async () => {
    const queue = makeQueue();
    const hidden = markerComment('lease run=r_1');
    world.addComment('acme/api', 1, { author: 'curupira-bot', body: `held\n\n${hidden}` });
    await onItem(queue, 1, 'lease run=r_1', {
      kind: 'comment',
      body: `released\n\n${hidden}`,
      editOnly: true,
    });
    await onItem(queue, 2, 'lease run=r_2', { kind: 'comment', body: 'released', editOnly: true });
    expect(await queue.runUntilIdle()).toEqual({ sent: 2, failed: 0, retried: 0 });
    expect(world.item('acme/api', 1)!.comments.map((c) => c.body)).toEqual([`released\n\n${hidden}`]);
    expect(world.item('acme/api', 2)!.comments).toEqual([]);
    expect(writeRequests().map((r) => r.method)).toEqual(['PATCH']);
  });
});

describe('the write queue of a fleet (PostgreSQL state shared by hosts)', () => {
  it('two hosts draining at once send every write once', async () => {
    const { freshSchema } = await import('../../test/helpers/pg.js');
    const schema = await freshSchema('wq');
    const hosts = [await openStore(schema.url), await openStore(schema.url)];
    try {
      const client = () =>
        createGitHubClient({
          apiUrl: sim.url,
          tokens: staticTokenSource(TOKEN),
          clock,
          maxAttempts: 1,
          random: () => 0.5,
        });
      const queues = hosts.map((host) => new WriteQueue({ store: host, client: client(), clock, paceMs: 0 }));
      for (let n = 1; n <= 10; n++) {
        await queues[n % 2]!.enqueue({
          marker: `result run=r_${n}`,
          repo: 'acme/api',
          number: n,
          write: { kind: 'comment', body: `Run r_${n} succeeded.` },
        });
      }
      const [a, b] = await Promise.all([queues[0]!.drain(), queues[1]!.drain(), queues[0]!.drain()]);
      expect((a?.sent ?? 0) + (b?.sent ?? 0)).toBeLessThanOrEqual(10);
      const posts = writeRequests().filter((r) => r.method === 'POST' && r.path.endsWith('/comments'));
      expect(posts).toHaveLength(10);
      expect(new Set(posts.map((r) => r.path)).size).toBe(10);
      expect((await hosts[0]!.listWrites({ status: 'sent' })).length).toBe(10);
    } finally {
      for (const host of hosts) await host.close();
      await schema.drop();
    }
  });
});

describe('the log names where a write goes', () => {
  it('a Linear write that fails is logged as Linear’s, a GitHub write as GitHub’s', async () => {
    const { log, messages } = captureLog();
    let calls = 0;
    const queue = makeQueue({
      log,
      sendServiceWrite: async () => {
        calls += 1;
        if (calls === 1) throw new Error('Linear answered 503');
      },
    });
    await queue.enqueue({
      marker: 'linear-result',
      repo: 'linear:ENG',
      number: 0,
      write: {
        kind: 'service',
        service: 'linear',
        automation: 'lin',
        item: 'ENG-7',
        action: 'comment',
        body: 'done',
      },
    });
    sim.faults.add({
      kind: 'status',
      status: 502,
      times: 1,
      match: { method: 'POST', path: '/repos/acme/api/issues/1/comments' },
    });
    await onItem(queue, 1, 'gh-result', { kind: 'comment', body: 'done' });
    await queue.runUntilIdle();
    expect(calls).toBe(2);
    expect(messages()).toContain('Linear write failed; will retry');
    expect(messages()).toContain('GitHub write failed; will retry');
    expect(messages().filter((m) => m.startsWith('GitHub'))).toHaveLength(1);
  });
});
