/**
 * Issue 8: never stuck, never down. Each case reproduces a situation that used to leave a task (or
 * the daemon) stuck: a backlog that hides newer items, a resume that keeps failing, a crash between
 * the agent's exit and the run's record, a full disk, a stop during a rate-limit wait, prompts too
 * large for a command line, timers too long for Node, items edited while they run, graceful stops.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RESUME_SESSION_PROMPT } from '../../src/engine/executor.js';
import {
  createHarness,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
  startBuiltCli,
  unfenced,
  waitFor,
} from '../helpers/harness.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.cleanup();
});

async function harness(options: Parameters<typeof createHarness>[0]): Promise<Harness> {
  const h = await createHarness(options);
  harnesses.push(h);
  return h;
}

function issues(n: number): { title: string; labels: string[] }[] {
  return Array.from({ length: n }, (_, i) => ({ title: `Issue ${i + 1}`, labels: ['agent-ready'] }));
}

describe('backlog: items beyond batch_size are reached', () => {
  it('a drain reaches every matching item when the first batch keeps matching, each exactly once', async () => {
    const h = await harness({
      issues: issues(75),
      settingsExtra: 'max_active_tasks = 4\n[settings.polling]\nbatch_size = 20',
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number}' }),
    });
    const result = await h.run();
    const ids = result.runs.map((r) => Number(r.itemId)).sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: 75 }, (_, i) => i + 1));
    expect(
      result.runs.filter((r) => r.status !== 'succeeded').map((r) => `${r.status}: ${r.reason}`),
    ).toEqual([]);
    expect(result.waiting).toEqual([]);
  }, 240_000);

  it('says how many matching items wait beyond the batch', async () => {
    const h = await harness({
      issues: issues(30),
      settingsExtra: '[settings.polling]\nbatch_size = 10',
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number}' }),
    });
    const cli = await runBuiltCli(['--config', h.settingsFile, 'run', '--size', '2'], { env: h.env });
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(
      '20 more matching items of fix wait beyond batch_size (10); the next run reaches them',
    );
  }, 120_000);
});

describe('a session whose resume keeps failing', () => {
  it('is dropped after max_resume_failures, the record says why, and the next run starts fresh', async () => {
    const h = await harness({
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number} [[fake:fail]]' }),
      agentEnv: { FAKE_AGENT_FAIL_RESUME: '1' },
      // The item's failure budget (max_item_failures, 3 by default) would stop this item before
      // its fourth run; it is off here so the session rule is seen alone (failure-budget.test.ts
      // covers the two together).
      settingsExtra: 'max_resume_failures = 2\nmax_item_failures = 0',
    });
    const first = onlyRun((await h.run()).runs);
    expect(first).toMatchObject({ status: 'failed', resumed: false });
    const second = onlyRun((await h.run()).runs);
    expect(second).toMatchObject({ status: 'failed', resumed: true, sessionId: first.sessionId });
    expect(second.reason).not.toContain('dropped');
    const third = onlyRun((await h.run()).runs);
    expect(third).toMatchObject({ status: 'failed', resumed: true });
    expect(third.reason).toContain(
      'the saved session failed to resume 2 times in a row (max_resume_failures = 2), so it was dropped: the next run starts a fresh session',
    );
    const fourth = onlyRun((await h.run()).runs);
    expect(fourth.resumed).toBe(false);
    expect(fourth.sessionId).not.toBe(first.sessionId);
    const prompts = h
      .agentRuns('claude')
      .map((r) => [r.resumeOf !== null, r.prompt === RESUME_SESSION_PROMPT]);
    expect(prompts).toEqual([
      [false, false],
      [true, true],
      [true, true],
      [false, false],
    ]);
  }, 120_000);
});

describe('a session the agent CLI no longer has', () => {
  it('is dropped at its first failed resume, the record says why, and the next run starts fresh', async () => {
    const h = await harness({
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number} [[fake:fail]]' }),
      // The CLI's saved conversations are gone (its home emptied, or the run moved into a sandbox's
      // private home): it answers a resume with its "no conversation" message.
      agentEnv: { FAKE_AGENT_FAIL_RESUME: 'missing' },
      settingsExtra: 'max_item_failures = 0',
    });
    const first = onlyRun((await h.run()).runs);
    expect(first).toMatchObject({ status: 'failed', resumed: false });
    const second = onlyRun((await h.run()).runs);
    expect(second).toMatchObject({ status: 'failed', resumed: true, sessionId: first.sessionId });
    expect(second.reason).toContain(`No conversation found with session ID: ${first.sessionId}`);
    expect(second.reason).toContain(
      `the agent CLI no longer has the saved session ${first.sessionId}, so it was dropped: the next run starts a fresh session`,
    );
    const third = onlyRun((await h.run()).runs);
    expect(third.resumed).toBe(false);
    expect(third.sessionId).not.toBe(first.sessionId);
    expect(h.agentRuns('claude').map((r) => r.resumeOf !== null)).toEqual([false, true, false]);
  }, 120_000);
});

describe('a crash between the agent exit and the run record', () => {
  it('finishes the run on restart from the saved outcome instead of resuming the finished session', async () => {
    const h = await harness({
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number} [[fake:commit]]' }),
    });
    const args = ['--config', h.settingsFile, 'run'];
    const crashed = await runBuiltCli(args, { env: { ...h.env, CURUPIRA_TEST_CRASH_AT: 'agent-exited' } });
    expect(crashed.signal).toBe('SIGKILL');
    const store = await h.openStore();
    let crashedRunId = '';
    try {
      const [run] = await store.listRuns();
      crashedRunId = run?.id ?? '';
      expect(run?.status).toBe('running');
      expect(run?.agentOutcome).toEqual({ status: 'succeeded', reason: null });
    } finally {
      await store.close();
    }
    const restarted = await runBuiltCli(args, { env: h.env });
    expect(restarted.code).toBe(0);
    const after = await h.openStore();
    try {
      const runs = await after.listRuns();
      const first = runs.find((r) => r.id === crashedRunId)!;
      expect(first).toMatchObject({ status: 'succeeded', commits: 1 });
      expect(first.reason).toContain('finished after a restart');
      // The item still matches, so (as after any restart) it runs again: as a fresh task, never as a
      // resume of the session that had finished.
      const others = runs.filter((r) => r.id !== crashedRunId);
      expect(others.map((r) => r.resumed)).toEqual([false]);
      // It works on in the worktree the first run kept (its commit is there): that worktree is the
      // second run's now, kept by it, and no longer by the first.
      expect(others[0]).toMatchObject({ worktreeKept: true, worktreePath: first.worktreePath });
      expect(first.worktreeKept).toBe(false);
    } finally {
      await after.close();
    }
    expect(h.agentRuns('claude').map((r) => r.resumeOf)).toEqual([null, null]);
  }, 120_000);
});

/** A small RAM disk mounted at `path`, or undefined where mounting is not allowed. */
function mountTmpfs(path: string, size: string): (() => void) | undefined {
  mkdirSync(path, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', path], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  return () => execFileSync('umount', ['-l', path], { stdio: 'ignore' });
}

describe('a full disk during a run', () => {
  it('fails that run saying the disk is full, keeps the engine going, and works again once space returns', async (context) => {
    const h = await harness({
      issues: issues(1),
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number} [[fake:sleep=1]]' }),
    });
    const transcripts = join(h.dir, 'state', 'transcripts');
    const unmount = mountTmpfs(transcripts, '256k');
    if (!unmount) {
      // Mounting a RAM disk needs root with CAP_SYS_ADMIN; CI runs as root, other machines may not.
      context.skip();
      return;
    }
    try {
      const filler = join(transcripts, 'filler');
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4k', 'count=1000'], { stdio: 'ignore' });
      } catch {
        // dd stops with "No space left on device": the disk is full, as wanted.
      }
      const full = onlyRun((await h.run()).runs);
      expect(full.status).toBe('failed');
      expect(full.reason).toMatch(
        /^disk full at .*transcripts\/fix\/.*\.jsonl: the transcript could not be written/,
      );
      rmSync(filler);
      const again = onlyRun((await h.run()).runs);
      expect(again.status).toBe('succeeded');
      expect(again.resumed).toBe(true);
    } finally {
      unmount();
    }
  }, 120_000);
});

describe('a stop during a rate-limit wait', () => {
  it('ends the wait at once: Ctrl+C during `Retry-After: 600` exits within seconds', async () => {
    const h = await harness({ issues: issues(1) });
    h.sim.faults.add({ kind: 'secondary-rate-limit', status: 429, retryAfterSeconds: 600, times: 'always' });
    const cli = startBuiltCli(['--config', h.settingsFile, 'run', '--watch'], { env: h.env });
    const logFile = join(h.dir, 'state', 'logs', 'curupira.log');
    try {
      await waitFor('the rate-limit wait', async () =>
        existsSync(logFile) &&
        readFileSync(logFile, 'utf8').includes('GitHub rate limit hit; waiting before retrying')
          ? true
          : undefined,
      );
      const asked = Date.now();
      cli.child.kill('SIGINT');
      const { code } = await cli.done;
      expect(Date.now() - asked).toBeLessThan(10_000);
      expect(code).toBe(130);
    } finally {
      cli.child.kill('SIGKILL');
    }
  }, 60_000);
});

describe('prompts that do not fit a command line, and NUL bytes', () => {
  it('fails a run whose prompt is over the argument limit, saying how large it is and what the limit is', async () => {
    // Item bodies are capped at 6,000 characters in prompts (issue 11), so the size comes from the
    // prompt template here: 60,000 characters, 180,000 bytes of UTF-8.
    const text = '漢字かな交じり文'.repeat(7_500);
    const h = await harness({
      issues: [{ title: 'Huge', body: 'small', labels: ['agent-ready'] }] as never,
      automation: issueAutomation('fix', { prompt: `Fix: ${text} \${issue_body}` }),
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('failed');
    expect(run.reason).toMatch(
      /^could not start claude: an argument \(the prompt\) is [\d,]+ bytes, over the 131,072-byte limit/,
    );
    expect(h.agentRuns('claude')).toHaveLength(0);
    // The run record keeps at most 100,000 characters of the prompt, not megabytes per attempt.
    expect(run.prompt?.length ?? 0).toBeLessThan(100_100);
  }, 60_000);

  it('removes NUL bytes from item text before the agent sees it', async () => {
    const h = await harness({
      issues: [{ title: 'Nul\u0000title', body: 'a\u0000b', labels: ['agent-ready'] }] as never,
      automation: issueAutomation('fix', { prompt: 'T=${issue_title} B=${issue_body}' }),
    });
    h.configure({
      automation: `${issueAutomation('fix', { prompt: 'T=${issue_title} B=${issue_body}' })}untrusted_text = "raw"\n`,
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(h.agentRuns('claude')[0]?.prompt).toBe('T=Nultitle B=ab');
  }, 60_000);
});

describe('timeouts too long for a Node timer', () => {
  it('a task_timeout_minutes of 40,000 runs normally', async () => {
    const h = await harness({ timeoutMinutes: 40_000 });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
  }, 60_000);
});

describe('an item that changes while its task runs', () => {
  it('runs again in its new form once the current run ends', async () => {
    const h = await harness({
      issues: [{ title: 'Before [[fake:sleep=3]]', labels: ['agent-ready'] }] as never,
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    });
    const stop = new AbortController();
    const seen: string[] = [];
    const engine = h.run({
      mode: 'watch',
      stop: stop.signal,
      onRun: (run) => {
        seen.push(run.prompt ?? '');
        if (seen.length === 2) stop.abort();
      },
    });
    await waitFor('the first agent to start', async () =>
      h.agentRuns('claude').length > 0 ? true : undefined,
    );
    h.world.updateIssue('acme/api', 1, { title: 'After' });
    const result = await engine;
    expect(result.runs.map((r) => [r.status, unfenced(r.prompt ?? '')])).toEqual([
      ['succeeded', 'Before [[fake:sleep=3]]'],
      ['succeeded', 'After'],
    ]);
  }, 60_000);
});

describe('graceful stop', () => {
  it('a drain lets the running agent finish and starts nothing new; a stop then ends what runs', async () => {
    const h = await harness({
      issues: issues(3),
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number} [[fake:sleep=2]]' }),
    });
    const drain = new AbortController();
    const result = h.run({ drain: drain.signal });
    await waitFor('the first agent to start', async () =>
      h.agentRuns('claude').length > 0 ? true : undefined,
    );
    drain.abort();
    const { runs, stoppedEarly } = await result;
    expect(stoppedEarly).toBe(true);
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    expect(h.agentRuns('claude')).toHaveLength(1);

    const drain2 = new AbortController();
    const stop = new AbortController();
    const second = h.run({ drain: drain2.signal, stop: stop.signal });
    await waitFor('the second agent to start', async () =>
      h.agentRuns('claude').length > 1 ? true : undefined,
    );
    drain2.abort();
    stop.abort();
    expect((await second).runs.map((r) => r.status)).toEqual(['cancelled']);
  }, 60_000);

  it('the first Ctrl+C of `run` lets the agent finish (exit 130); SIGTERM with shutdown = "stop" ends it now', async () => {
    const h = await harness({
      issues: issues(2),
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number} [[fake:sleep=3]]' }),
    });
    const args = ['--config', h.settingsFile, 'run'];
    const cli = startBuiltCli(args, { env: h.env });
    await waitFor('the agent to start', async () => (h.agentRuns('claude').length > 0 ? true : undefined));
    cli.child.kill('SIGINT');
    const drained = await cli.done;
    expect(drained.code).toBe(130);
    expect(drained.stderr).toContain('running agents finish first (press Ctrl+C again to stop them now');
    expect(drained.stdout).toMatch(/1 run: 1 succeeded/);

    const term = startBuiltCli(args, { env: h.env });
    await waitFor('the second agent to start', async () =>
      h.agentRuns('claude').length > 1 ? true : undefined,
    );
    term.child.kill('SIGTERM');
    expect((await term.done).stdout).toMatch(/1 run: 1 cancelled/);
  }, 90_000);
});

describe('small things', () => {
  it('a run that cannot clone records a one-line reason with the essential part first', async () => {
    const h = await harness({ repositoryExtra: '' });
    h.writeSettings(
      readFileSync(h.settingsFile, 'utf8').replace(
        /remote = "file:\/\/[^"]+"/,
        `remote = "file://${join(h.dir, 'missing.git')}"`,
      ),
    );
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('failed');
    expect(run.reason).not.toContain('\n');
    expect(run.reason).toMatch(/^git clone .* failed with status 128: .* \| fatal: .*missing\.git/);
  }, 60_000);

  it('a run whose agent changes nothing says so', async () => {
    const h = await harness({ automation: issueAutomation('fix', { prompt: 'Look at #${issue_number}' }) });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(run.reason).toBe('no changes: the agent finished without a commit or a changed file');
    const committed = await harness({
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number} [[fake:commit]]' }),
    });
    expect(onlyRun((await committed.run()).runs).reason).toBeNull();
  }, 60_000);

  it('a hot reload that changes state_db_path says it needs a restart', async () => {
    const h = await harness({ settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2' });
    const lines: string[] = [];
    const { createLogger } = await import('../../src/log.js');
    const log = createLogger({ console: { write: (t: string) => lines.push(t) } as never, level: 'warn' });
    const stop = new AbortController();
    const engine = h.run({
      mode: 'watch',
      stop: stop.signal,
      log,
      reloadIntervalMs: 50,
      reload: () => {
        const next = h.settings();
        return {
          ...next,
          execution: { ...next.execution, state_db_path: join(h.dir, 'elsewhere.sqlite3') },
        };
      },
    });
    await waitFor('the warning', async () =>
      lines.some((l) => l.includes('state_db_path changed: the new state file is used after a restart'))
        ? true
        : undefined,
    );
    stop.abort();
    await engine;
    expect(readdirSync(h.dir)).not.toContain('elsewhere.sqlite3');
  }, 60_000);
});
