import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { Task } from '../core/types.js';
import { openStore } from '../store/index.js';
import { loadPendingRetries, RetryBook, type ScheduledRetry } from './unattended.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const TASK: Task = {
  key: '["fix","acme/api","github-issues","7"]',
  fingerprint: 'f',
  identity: { automationId: 'fix', repo: 'acme/api', taskType: 'github-issues', id: '7' },
  item: { id: '7', title: 'Crash', url: 'https://x/7', body: '', fields: {}, itemKey: 'issue:7' },
};

function retry(at: number, extra: Partial<ScheduledRetry> = {}): ScheduledRetry {
  return {
    kind: 'retry',
    automationId: 'fix',
    task: TASK,
    runId: 'r1',
    attempt: 2,
    maxAttempts: 3,
    at,
    ...extra,
  };
}

describe('the retry book', () => {
  it('gives the retries due, parks providers until their reset, and says when to wake', () => {
    const book = new RetryBook();
    book.schedule(retry(10_000));
    expect(book.due(9_999)).toEqual([]);
    expect(book.due(10_000)).toHaveLength(1);
    expect(book.nextAt(0)).toBe(10_000);
    // A due retry that could not be offered is looked at again a second later, not in a busy loop.
    expect(book.nextAt(20_000)).toBe(21_000);
    expect(book.nextAt(0, () => true)).toBe(Number.POSITIVE_INFINITY);
    book.park('claude', 50_000);
    book.park('claude', 40_000);
    expect(book.parkedUntil('claude', 0)).toBe(50_000);
    expect(book.parkedUntil('codex', 0)).toBeUndefined();
    expect(book.cancel(TASK.key)?.runId).toBe('r1');
    expect(book.nextAt(0)).toBe(50_000);
    expect(book.parkedUntil('claude', 50_000)).toBeUndefined();
    expect(book.nextAt(50_000)).toBe(Number.POSITIVE_INFINITY);
  });

  it('at start, reschedules the retries and parked runs a previous process left (a one-shot run at once)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'curupira-unattended-'));
    dirs.push(dir);
    const { settings } = loadSettingsFromText(
      `[settings]
workspace_dir = "ws"
state_db_path = "state.sqlite3"
[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "claude"
[agents.defaults]
profile = "main"
[automations.fix]
repository = "api"
schedule = "0 3 1 7 *"
prompt = "x"
`,
      join(dir, 'settings.toml'),
    );
    const store = await openStore(settings.execution.state_db_path);
    try {
      const init = {
        automationId: 'fix',
        taskKey: TASK.key,
        repo: 'acme/api',
        taskType: 'github-issues',
        itemId: '7',
        itemKey: 'issue:7',
        itemTitle: 'Crash',
        itemUrl: 'https://x/7',
      };
      const failed = await store.createRun({ ...init, status: 'failed', attempt: 1 });
      await store.updateRun(failed.id, { retryAt: new Date(100_000).toISOString() });
      await store.saveSession({
        taskKey: TASK.key,
        automationId: 'fix',
        runId: failed.id,
        provider: 'claude',
        profile: 'main',
        sessionId: 's1',
        prompt: 'x',
        promptTemplateHash: 'h',
        task: TASK,
        worktreePath: null,
        branch: null,
        createdAt: new Date(0).toISOString(),
        updatedAt: new Date(0).toISOString(),
      });
      const watching = new RetryBook();
      await loadPendingRetries(watching, { store, settings, mode: 'watch', now: 50_000 });
      expect(watching.list()).toMatchObject([{ kind: 'retry', attempt: 2, maxAttempts: 3, at: 100_000 }]);
      const oneShot = new RetryBook();
      await loadPendingRetries(oneShot, { store, settings, mode: 'drain', now: 50_000 });
      expect(oneShot.due(50_000)).toHaveLength(1);

      await store.updateRun(failed.id, { status: 'parked', retryAt: new Date(200_000).toISOString() });
      const parked = new RetryBook();
      await loadPendingRetries(parked, { store, settings, mode: 'drain', now: 50_000 });
      expect(parked.parkedUntil('claude', 50_000)).toBe(200_000);
      expect(parked.list()).toMatchObject([{ kind: 'parked', attempt: 1, at: 200_000 }]);

      // A failed run whose agent never announced a session (it died at start): its trigger finds
      // the item again, and the run no longer says that a retry is due (it would never start).
      const noSession = await store.createRun({
        ...init,
        itemId: '8',
        taskKey: '["fix","acme/api","github-issues","8"]',
        status: 'failed',
        attempt: 1,
      });
      await store.updateRun(noSession.id, { retryAt: new Date(100_000).toISOString() });
      // And one of an automation the settings no longer have.
      const gone = await store.createRun({
        ...init,
        automationId: 'old',
        taskKey: '["old","acme/api","github-issues","7"]',
        status: 'failed',
        attempt: 1,
      });
      await store.updateRun(gone.id, { retryAt: new Date(100_000).toISOString() });
      const later = new RetryBook();
      await loadPendingRetries(later, { store, settings, mode: 'watch', now: 50_000 });
      expect(later.list().map((r) => r.runId)).toEqual([failed.id]);
      expect((await store.getRun(noSession.id))?.retryAt ?? null).toBeNull();
      expect((await store.getRun(gone.id))?.retryAt ?? null).toBeNull();
      expect((await store.getRun(failed.id))?.retryAt).toBe(new Date(200_000).toISOString());
    } finally {
      await store.close();
    }
  });
});
