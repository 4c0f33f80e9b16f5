/** `curupira run` and `curupira gc` through the built CLI, on a real world: summary, log file, exit codes. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, defaultAutomation, type Harness, runBuiltCli } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('curupira run', () => {
  it('runs, prints a summary, writes the log file, and exits 1 when a run failed', async () => {
    h = await createHarness({
      issues: [
        { title: 'works', labels: ['agent-ready'] },
        { title: 'breaks [[fake:fail]]', labels: ['agent-ready'] },
      ],
    });
    const result = await runBuiltCli(['--config', h.settingsFile, 'run'], { env: h.env });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(/^2 runs: 1 succeeded, 1 failed\n/);
    expect(result.stdout).toMatch(/succeeded fix acme\/api#1 "works"/);
    expect(result.stdout).toContain('claude exited with status 1');
    expect(result.stderr).toMatch(
      /INFO Starting task automation=fix repo=acme\/api type=github-issues id=1 run=r_/,
    );
    const log = readFileSync(join(h.dir, 'state', 'logs', 'curupira.log'), 'utf8');
    expect(log).toMatch(/INFO Completed task automation=fix .* result=success status=succeeded/);
    expect(log).toMatch(/ERROR Failed task automation=fix .* result=failure status=failed/);
    expect(log).not.toContain(h.env.GH_TOKEN!);
  });

  it('exits 0 and says so when nothing matches', async () => {
    h = await createHarness({ issues: [] });
    const result = await runBuiltCli(['--config', h.settingsFile, 'run'], { env: h.env });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('No matching task is currently available.');
  });

  it('says why when discovery fails, and exits 1 instead of reporting nothing to do', async () => {
    h = await createHarness();
    const result = await runBuiltCli(['--config', h.settingsFile, 'run'], {
      env: { ...h.env, GH_TOKEN: 'not-a-valid-token' },
    });
    expect(result.code).toBe(1);
    expect(result.stdout.trim()).toBe('No run started.');
    expect(result.stderr).toMatch(
      /Discovery failed for fix: GitHub GraphQL rejected the token \(status 401: .*Bad credentials/,
    );
    expect(result.stderr).not.toContain('not-a-valid-token');
  });

  it('run --watch --size N (as seed 000 uses it) stops after N runs; --log-format json logs JSON lines', async () => {
    h = await createHarness({
      issues: [1, 2].map((n) => ({ title: `Issue ${n}`, labels: ['agent-ready'] })),
    });
    const result = await runBuiltCli(
      ['--config', h.settingsFile, 'run', '--watch', '--size', '1', '--log-format', 'json'],
      {
        env: h.env,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^1 run: 1 succeeded\n/);
    const lines = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; level: number; run?: string });
    expect(lines.some((l) => l.msg === 'Starting task' && l.level === 30 && typeof l.run === 'string')).toBe(
      true,
    );
    expect(lines.some((l) => l.msg === 'Completed task')).toBe(true);
  });

  it('run --watch says first which file, how many automations and where the log goes; --log-level warn hides info lines', async () => {
    h = await createHarness({ issues: [{ title: 'Issue 1', labels: ['agent-ready'] }] });
    const result = await runBuiltCli(
      ['run', '--watch', '--size', '1', '-c', h.settingsFile, '--log-level', 'warn'],
      { env: h.env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe(
      `Watching 1 automation (fix) from ${h.settingsFile}; log: ${join(h.dir, 'state', 'logs', 'curupira.log')}. Ctrl+C stops.\n`,
    );
    expect(result.stdout).toMatch(/^1 run: 1 succeeded\n/);
  });

  it('--size caps the number of runs', async () => {
    h = await createHarness({
      issues: [1, 2, 3].map((n) => ({ title: `Issue ${n}`, labels: ['agent-ready'] })),
    });
    const result = await runBuiltCli(['--config', h.settingsFile, 'run', '--size', '2'], { env: h.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^2 runs: 2 succeeded\n/);
  });
});

describe('curupira gc', () => {
  it('lists kept worktrees and removes them only when asked', async () => {
    h = await createHarness({ automation: defaultAutomation('Fix ${issue_number} [[fake:commit]]') });
    expect((await runBuiltCli(['--config', h.settingsFile, 'run'], { env: h.env })).code).toBe(0);
    const [run] = (await (async () => {
      const store = await h!.openStore();
      const runs = await store.listRuns();
      await store.close();
      return runs;
    })())!;
    expect(run!.worktreeKept).toBe(true);
    const list = await runBuiltCli(['--config', h.settingsFile, 'gc'], { env: h.env });
    expect(list.stdout).toContain(
      `keep         ${run!.worktreePath} (${run!.branch}; 1 unpushed commit; untouched for`,
    );
    expect(list.stdout).toContain('1 kept worktree; remove with --older-than AGE or --all');
    const young = await runBuiltCli(['--config', h.settingsFile, 'gc', '--older-than', '7d'], { env: h.env });
    expect(young.stdout).toContain('Removed 0 worktrees.');
    expect(existsSync(run!.worktreePath!)).toBe(true);
    const dry = await runBuiltCli(['--config', h.settingsFile, 'gc', '--all', '--dry-run'], { env: h.env });
    expect(dry.stdout).toContain(`would remove ${run!.worktreePath}`);
    expect(existsSync(run!.worktreePath!)).toBe(true);
    // Without a terminal, deleting an unpushed commit needs --yes.
    const refused = await runBuiltCli(['--config', h.settingsFile, 'gc', '--all'], { env: h.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Pass --yes to remove them.');
    expect(existsSync(run!.worktreePath!)).toBe(true);
    const all = await runBuiltCli(['--config', h.settingsFile, 'gc', '--all', '--yes'], { env: h.env });
    expect(all.stdout).toContain('Removed 1 worktree.');
    expect(existsSync(run!.worktreePath!)).toBe(false);
    expect((await runBuiltCli(['--config', h.settingsFile, 'gc'], { env: h.env })).stdout.trim()).toBe(
      'No kept worktrees.',
    );
    const bad = await runBuiltCli(['--config', h.settingsFile, 'gc', '--older-than', 'soon'], { env: h.env });
    expect(bad.code).toBe(2);
  });
});
