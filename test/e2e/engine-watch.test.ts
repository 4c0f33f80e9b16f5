/**
 * `run --watch` behaviour in process: hot reload (a good edit applies, a bad edit keeps the last
 * good configuration and says why), the bounded queue (`max_pending_tasks`), and the status feed.
 */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';
import type { Settings } from '../../src/config/types.js';
import type { ConfigError } from '../../src/core/errors.js';
import type { RunRecord } from '../../src/core/types.js';
import type { EngineStatus } from '../../src/features.js';
import { createLogger } from '../../src/log.js';
import { createHarness, type Harness, unfenced, waitFor } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

function reloader(file: string): () => Settings | ConfigError | undefined {
  let last = readFileSync(file, 'utf8');
  return () => {
    const text = readFileSync(file, 'utf8');
    if (text === last) return undefined;
    last = text;
    try {
      return loadSettings(file).settings;
    } catch (error) {
      return error as ConfigError;
    }
  };
}

function capture(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { log: createLogger({ console: stream, level: 'info' }), lines };
}

describe('run --watch', () => {
  it('reloads a good edit, and keeps the last good configuration when an edit is invalid', async () => {
    h = await createHarness({ settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2' });
    const stop = new AbortController();
    const runs: RunRecord[] = [];
    const { log, lines } = capture();
    const watching = h.run({
      mode: 'watch',
      stop: stop.signal,
      onRun: (run) => runs.push(run),
      reload: reloader(h.settingsFile),
      reloadIntervalMs: 50,
      log,
    });
    await waitFor('runs.length === 1', () => runs.length === 1, 15_000);

    const good = readFileSync(h.settingsFile, 'utf8');
    h.writeSettings(`${good}\n[automations.broken]\nrepository = "nowhere"\n`);
    await waitFor(
      "lines.some((l) => l.includes('Configuration reload failed; keeping the last good configuration'))",
      () => lines.some((l) => l.includes('Configuration reload failed; keeping the last good configuration')),
      10_000,
    );
    expect(lines.join('')).toContain("repository 'nowhere' for automation 'broken' does not exist");
    h.world.addIssue('acme/api', {
      title: 'During the bad edit',
      labels: ['agent-ready'],
      author: 'octocat',
    });
    await waitFor('runs.length === 2', () => runs.length === 2, 15_000);
    expect(runs[1]!.itemTitle).toBe('During the bad edit');

    h.writeSettings(
      good
        .replace('labels = ["agent-ready"]', 'labels = ["urgent"]')
        .replace('Fix issue', 'Urgently fix issue'),
    );
    await waitFor(
      "lines.some((l) => l.includes('Configuration reloaded'))",
      () => lines.some((l) => l.includes('Configuration reloaded')),
      10_000,
    );
    h.world.addLabel('acme/api', 'urgent');
    h.world.addIssue('acme/api', {
      title: 'Not for the new filter',
      labels: ['agent-ready'],
      author: 'octocat',
    });
    h.world.addIssue('acme/api', { title: 'Urgent one', labels: ['urgent'], author: 'octocat' });
    await waitFor('runs.length === 3', () => runs.length === 3, 15_000);
    stop.abort();
    await watching;
    expect(runs.map((r) => r.itemTitle)).toEqual(['First issue', 'During the bad edit', 'Urgent one']);
    expect(unfenced(runs[2]!.prompt ?? '')).toBe('Urgently fix issue 4: Urgent one');
  });

  it('never queues more than max_pending_tasks, and still gets to every item', async () => {
    h = await createHarness({
      settingsExtra:
        'max_pending_tasks = 2\nmax_active_tasks = 1\n[settings.polling]\npoll_interval_seconds = 0.2',
      issues: [1, 2, 3, 4, 5].map((n) => ({
        title: `Issue ${n} [[fake:sleep=0.3]]`,
        labels: ['agent-ready'],
      })),
    });
    const stop = new AbortController();
    const runs: RunRecord[] = [];
    const statuses: EngineStatus[] = [];
    const watching = h.run({
      mode: 'watch',
      stop: stop.signal,
      onRun: (run) => runs.push(run),
      onStatus: (status) => statuses.push(status),
    });
    await waitFor('runs.length === 5', () => runs.length === 5, 30_000);
    stop.abort();
    await watching;
    expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
    expect(new Set(runs.map((r) => r.itemId)).size).toBe(5);
    expect(Math.max(...statuses.map((s) => s.queued))).toBe(2);
    expect(Math.max(...statuses.map((s) => s.running.length))).toBe(1);
    expect(statuses.some((s) => s.nextPollAt !== undefined)).toBe(true);
  });
});
