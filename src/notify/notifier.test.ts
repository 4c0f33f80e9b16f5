/**
 * Notification delivery against a local HTTP receiver: signed webhook bodies, Slack blocks, retries
 * with backoff, exactly one accepted delivery per event per target across a restart, and nothing
 * secret in any body.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verify } from '@octokit/webhooks-methods';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../../test/helpers/receiver.js';
import type { RunRecord } from '../core/types.js';
import { registerSecret } from '../security/redact.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { runNotification } from './events.js';
import { Notifier } from './notifier.js';
import type { NotificationTarget } from './targets.js';

const SECRET = 'test-signing-secret-0001';
const FAST = [20, 40, 80];

let dir: string;
let store: Store;
let receiver: Receiver;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-notify-'));
  store = await openStore(join(dir, 'state.sqlite3'));
  receiver = await startReceiver();
});

afterEach(async () => {
  await store.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

function webhook(overrides: Partial<NotificationTarget> = {}): NotificationTarget {
  return {
    name: 'ops',
    kind: 'webhook',
    url: receiver.url,
    secret: SECRET,
    events: new Set(['failed', 'blocked', 'escalated', 'automation_paused']),
    ...overrides,
  };
}

async function failedRun(reason = 'agent exited with code 1'): Promise<RunRecord> {
  const run = await store.createRun({
    automationId: 'fix',
    taskKey: 'fix:acme/api:issue:12',
    repo: 'acme/api',
    taskType: 'issue',
    itemId: '12',
    itemKey: 'acme/api#12',
    itemTitle: 'Crash <on> start & stop',
    itemUrl: 'https://github.com/acme/api/issues/12',
    status: 'failed',
    reason,
    prompt: 'a prompt that must never be sent',
  });
  return store.updateRun(run.id, { finishedAt: new Date().toISOString() });
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('webhook notifications', () => {
  it('names the item as its trigger does: a Linear issue by its identifier, a commit by its short sha', async () => {
    const failed = await failedRun();
    const linear = { ...failed, taskType: 'linear', itemId: 'ENG-7', repo: 'acme/api' };
    expect(runNotification('fix', linear)!.summary).toBe('fix: run failed on Linear ENG-7');
    const sha = '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b';
    const commit = { ...failed, taskType: 'github-commits', itemId: sha };
    expect(runNotification('fix', commit)!.summary).toBe('fix: run failed on acme/api@1a2b3c4');
    expect(runNotification('fix', failed)!.summary).toBe('fix: run failed on acme/api#12');
  });

  it('POSTs a JSON body signed with HMAC-SHA256 that a receiver verifies, with the event id and a timestamp', async () => {
    const notifier = new Notifier({ store, targets: [webhook()], backoffMs: FAST });
    const run = await failedRun();
    await notifier.notify(runNotification('fix', run)!);
    await notifier.drain();
    const [request] = receiver.requests;
    expect(receiver.requests).toHaveLength(1);
    const signature = String(request!.headers['x-curupira-signature-256']);
    expect(signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await verify(SECRET, request!.body, signature)).toBe(true);
    expect(await verify('another-secret', request!.body, signature)).toBe(false);
    expect(request!.headers['x-curupira-event']).toBe('failed');
    expect(request!.headers['x-curupira-delivery']).toBe(`run:${run.id}:failed`);
    expect(Number(request!.headers['x-curupira-timestamp'])).toBeGreaterThan(1_700_000_000);
    expect(JSON.parse(request!.body)).toEqual({
      version: 1,
      id: `run:${run.id}:failed`,
      event: 'failed',
      occurred_at: run.finishedAt,
      automation: 'fix',
      summary: 'fix: run failed on acme/api#12',
      run: {
        id: run.id,
        status: 'failed',
        reason: 'agent exited with code 1',
        outcome: null,
        repo: 'acme/api',
        item_id: '12',
        item_title: 'Crash <on> start & stop',
        item_url: 'https://github.com/acme/api/issues/12',
        started_at: null,
        finished_at: run.finishedAt,
      },
      details: {},
    });
    expect(request!.body).not.toContain('a prompt that must never be sent');
  });

  it('retries a failing receiver with backoff and delivers each event exactly once, across a restart', async () => {
    receiver.failNext(3);
    const file = store.path;
    const first = new Notifier({ store, targets: [webhook()], backoffMs: [150] });
    const runs = [await failedRun(), await failedRun()];
    for (const run of runs) await first.notify(runNotification('fix', run)!);
    const stop = new AbortController();
    const loop = first.run(stop.signal);
    await until(() => receiver.requests.length >= 2);
    // The process goes away with both notifications still pending (the receiver answered 500).
    stop.abort();
    await loop;
    await store.close();
    expect(receiver.accepted()).toHaveLength(0);

    store = await openStore(file);
    const second = new Notifier({ store, targets: [webhook()], backoffMs: [150] });
    // The engine notifying the same runs again after its restart queues nothing new.
    for (const run of runs) await second.notify(runNotification('fix', run)!);
    const again = new AbortController();
    const looping = second.run(again.signal);
    await until(() => receiver.accepted().length === 2);
    // A drain joins the one under way: once it is over, nothing is left to send.
    await second.drain();
    expect(await store.listNotifications({ status: 'pending' })).toEqual([]);
    again.abort();
    await looping;

    const ids = receiver.accepted().map((r) => r.headers['x-curupira-delivery']);
    expect(ids.sort()).toEqual(runs.map((r) => `run:${r.id}:failed`).sort());
    expect(receiver.requests.length).toBe(5);
    for (const request of receiver.requests)
      expect(await verify(SECRET, request.body, String(request.headers['x-curupira-signature-256']))).toBe(
        true,
      );
    const rows = await store.listNotifications();
    expect(rows.map((r) => r.status)).toEqual(['sent', 'sent']);
    expect(rows.reduce((sum, r) => sum + r.attempts, 0)).toBe(5);
  });

  it('gives up at once on a refusal (4xx) and after the last attempt otherwise', async () => {
    receiver.answerWith(404);
    const notifier = new Notifier({ store, targets: [webhook()], backoffMs: [1], maxAttempts: 3 });
    await notifier.notify(runNotification('fix', await failedRun())!);
    await notifier.drain();
    expect(receiver.requests).toHaveLength(1);
    receiver.answerWith(503);
    await notifier.notify(runNotification('fix', await failedRun())!);
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await notifier.drain();
    }
    expect(receiver.requests).toHaveLength(4);
    const rows = await store.listNotifications();
    expect(rows.map((r) => [r.status, r.attempts, r.lastError])).toEqual([
      ['failed', 1, 'HTTP 404'],
      ['failed', 3, 'HTTP 503'],
    ]);
  });

  it('sends only the events and automations a target asks for', async () => {
    const notifier = new Notifier({
      store,
      targets: [
        webhook({ name: 'blocked-only', events: new Set(['blocked']) }),
        webhook({ name: 'other-automation', automations: new Set(['triage']) }),
        webhook({ name: 'all' }),
      ],
    });
    const queued = await notifier.notify(runNotification('fix', await failedRun())!);
    expect(queued.map((r) => r.target)).toEqual(['all']);
  });
});

describe('Slack notifications', () => {
  it('posts incoming-webhook blocks with escaped text and a link to the item, unsigned', async () => {
    const notifier = new Notifier({
      store,
      targets: [{ name: 'team', kind: 'slack', url: receiver.url, events: new Set(['failed']) }],
    });
    await notifier.notify(runNotification('fix', await failedRun('exit 1: <!channel> & more'))!);
    await notifier.drain();
    const [request] = receiver.requests;
    expect(request!.headers['x-curupira-signature-256']).toBeUndefined();
    const body = JSON.parse(request!.body) as {
      text: string;
      blocks: { type: string; text?: { type: string; text: string }; elements?: unknown[] }[];
    };
    expect(body.text).toBe('fix: run failed on acme/api#12');
    expect(body.blocks.map((b) => b.type)).toEqual(['section', 'context']);
    expect(body.blocks[0]!.text!.type).toBe('mrkdwn');
    const text = body.blocks[0]!.text!.text;
    expect(text).toContain('<https://github.com/acme/api/issues/12|Crash &lt;on&gt; start &amp; stop>');
    expect(text).toContain('&lt;!channel&gt; &amp; more');
    expect(text).not.toContain('<!channel>');
    expect(body.blocks[1]!.elements).toEqual([
      { type: 'mrkdwn', text: 'curupira · failed · automation fix' },
    ]);
  });
});

describe('what a notification carries', () => {
  it('never a secret: registered values and token shapes are redacted before the body is queued', async () => {
    const canary = `canary-notify-${Math.random().toString(16).slice(2)}`;
    registerSecret(canary);
    const token = 'ghp_0123456789abcdefABCDEF0123456789abcd';
    const notifier = new Notifier({
      store,
      targets: [webhook(), { name: 'team', kind: 'slack', url: receiver.url, events: new Set(['failed']) }],
    });
    const run = await failedRun(`agent printed ${canary} and ${token}`);
    await notifier.notify({ ...runNotification('fix', run)!, details: { note: `env ${canary}` } });
    await notifier.drain();
    expect(receiver.requests).toHaveLength(2);
    const stored = JSON.stringify(await store.listNotifications());
    for (const text of [...receiver.requests.map((r) => r.body), stored]) {
      expect(text).not.toContain(canary);
      expect(text).not.toContain(token);
      expect(text).not.toContain(SECRET);
      expect(text).toContain('[redacted]');
    }
  });
});
