/**
 * Seeing the fleet (issue 17) with real processes: a poller and a worker of the built CLI on one
 * PostgreSQL schema; `curupira status` on the poller's host asks its daemon (`GET /api/v1/fleet`),
 * on the worker's host (no daemon) reads the shared state; both list both hosts, the runs record
 * the worker's host, and `runs show` says so.
 */
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestFleet, type TestFleet } from '../helpers/fleet.js';
import { runBuiltCli, waitFor } from '../helpers/harness.js';

let fleet: TestFleet | undefined;

afterEach(async () => {
  await fleet?.cleanup();
  fleet = undefined;
});

describe.runIf(process.env.CURUPIRA_BUILT === '1')('seeing the fleet', () => {
  it('status lists every host from the daemon and from the state; runs show prints the host', async () => {
    fleet = await createTestFleet({ issues: [{ title: 'Issue 1', body: '[[fake:sleep=1]]' }] });
    const f = fleet;
    const p1 = f.start('poller', 'p1');
    f.start('worker', 'w1');
    // The settings files `start` wrote for each host (not written again: the poller watches its own).
    const settingsOf = (host: string): string => join(f.harness.dir, 'hosts', host, 'settings.toml');
    const status = async (host: string) =>
      runBuiltCli(['status', '-c', settingsOf(host)], { env: f.harness.env });

    // The poller's host: its daemon answers, and its fleet block lists both hosts.
    const fromDaemon = await waitFor(
      'the poller daemon listing both hosts',
      async () => {
        const result = await status('p1');
        return result.stdout.startsWith('daemon: running') && /^ {2}w1 /m.test(result.stdout)
          ? result
          : undefined;
      },
      60_000,
      500,
    );
    expect(fromDaemon.code).toBe(0);
    expect(fromDaemon.stdout).toMatch(/^fleet: 2 hosts \(2 healthy\)/m);
    expect(fromDaemon.stdout).toMatch(/^ {2}p1 +healthy +- +poller +heartbeat \d+s ago · polling · v\S+$/m);
    expect(fromDaemon.stdout).toMatch(/^ {2}w1 +healthy +\d\/4 +worker +heartbeat \d+s ago · v\S+$/m);

    // The run finishes on w1, which records itself as its host.
    const store = await f.openStore();
    const run = await (async () => {
      try {
        return await waitFor(
          'a finished run',
          async () => (await store.listRuns({ limit: 10 })).find((r) => r.finishedAt !== null),
          60_000,
          500,
        );
      } finally {
        await store.close();
      }
    })();
    expect(run.host).toBe('w1');

    // The worker's host has no daemon: status reads the shared state, fleet block included.
    const fromState = await status('w1');
    expect(fromState.code).toBe(0);
    expect(fromState.stdout).toMatch(/^daemon: not running/);
    expect(fromState.stdout).toMatch(/^fleet: 2 hosts \(2 healthy\)/m);
    expect(fromState.stdout).toMatch(/^ {2}p1 +healthy +- +poller .*· polling · /m);

    const shown = await runBuiltCli(['runs', 'show', run.id, '-c', settingsOf('w1')], {
      env: f.harness.env,
    });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('  host:        w1\n');
    expect(shown.stdout).toContain('assistant: Starting on the task.');

    // On another machine, w1's transcript file is not there: the copy w1 shared is read instead,
    // by `runs show` and by the poller's board. (One machine here: the file is moved away.)
    expect(run.transcriptPath).toContain('/hosts/w1/');
    renameSync(run.transcriptPath!, `${run.transcriptPath}.elsewhere`);
    const fromPoller = await runBuiltCli(['runs', 'show', run.id, '-c', settingsOf('p1')], {
      env: f.harness.env,
    });
    expect(fromPoller.code).toBe(0);
    expect(fromPoller.stdout).toContain('assistant: Starting on the task.');
    expect(fromPoller.stdout).toContain('assistant: Done: the task is complete.');
    const board = /Board: (http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/.exec(p1.output());
    expect(board).not.toBeNull();
    const page = await fetch(`${board![1]}/runs/${run.id}`, {
      headers: { authorization: `Bearer ${board![2]}` },
    });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('Starting on the task.');
    expect(text).not.toContain('The transcript is on host');
  }, 120_000);
});
