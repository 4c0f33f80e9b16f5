/**
 * Issue 4, acceptance: what survives a stop, a crash and a restart. The built CLI is killed with
 * SIGKILL mid-run and started again; in-process engines cover restarts after success and failure,
 * watch-mode dedup, a graceful stop, and a prompt that changed meanwhile.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESUME_SESSION_PROMPT } from '../../src/engine/executor.js';
import type { SessionRecord, Store } from '../../src/store/types.js';
import {
  agentHostPid,
  createHarness,
  fakeProcessAlive,
  type Harness,
  isRunning,
  issueAutomation,
  runBuiltCli,
  STUBBORN_CHILD,
  startBuiltCli,
  unfenced,
  waitFor,
} from '../helpers/harness.js';

/**
 * These tests follow agents that outlive a crashed curupira (orphans found again by pid at the next
 * start), which only unsandboxed agents do: a sandboxed agent dies with curupira (bubblewrap's
 * --die-with-parent) and its pids belong to its own namespace. The sandbox's side is
 * test/e2e/sandbox-escape.test.ts.
 */
const UNSANDBOXED = 'sandbox_mode = "none"';

async function withStore<T>(h: Harness, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await h.openStore();
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

async function sessionsOf(h: Harness, automationId: string): Promise<SessionRecord[]> {
  return withStore(h, async (store) =>
    (await store.listSessions()).filter((s) => s.automationId === automationId),
  );
}

describe('crash safety (the built CLI, killed with SIGKILL)', () => {
  it.each([
    { provider: 'claude', checkout: 'worktree' },
    { provider: 'copilot', checkout: 'worktree' },
    { provider: 'claude', checkout: 'main' },
  ] as const)(
    '$provider, checkout = $checkout: the restart stops the orphan, resumes the same session once, closes the dead run',
    async ({ provider, checkout }) => {
      const h = await createHarness({
        profileExtra: UNSANDBOXED,
        provider,
        automation: issueAutomation('fix', {
          prompt: 'Fix #${issue_number}: ${issue_title} [[fake:sleep=20]]',
          extra: `checkout = "${checkout}"`,
        }),
      });
      const args = ['--config', h.settingsFile, 'run'];
      const first = startBuiltCli(args, { env: h.env });
      const harness = h;
      try {
        const saved = await waitFor(
          'the session and the agent pid in the store',
          async () =>
            withStore(harness, async (store) => {
              const [session] = await store.listSessions();
              const [run] = await store.listRuns();
              // Copilot's session is saved before its start: wait for the agent to be up as well.
              const up = harness.agentRuns(provider).length > 0;
              return up && session && run?.agentPid ? { session, run } : undefined;
            }),
          20_000,
          100,
        );
        const [orphan] = h.agentRuns(provider);
        expect(orphan).toBeDefined();
        expect(orphan!.pid).toBe(saved.run.agentPid);
        if (provider === 'claude' && checkout === 'worktree') {
          // One dispatching process per state folder.
          const rival = await runBuiltCli(args, { env: h.env, timeoutMs: 30_000 });
          expect(rival.code).toBe(1);
          expect(rival.stderr).toContain('another curupira process is already running');
        }
        first.child.kill('SIGKILL');
        const killed = await first.done;
        expect(killed.signal).toBe('SIGKILL');
        // The agent lives in its own process group, so it outlives the dead curupira.
        expect(isRunning(orphan!.pid)).toBe(true);

        const second = await runBuiltCli(args, { env: h.env, timeoutMs: 30_000 });
        expect(second.code, second.stderr).toBe(0);
        expect(isRunning(orphan!.pid)).toBe(false);

        const calls = h.agentRuns(provider);
        expect(calls).toHaveLength(2);
        const resumed = calls.filter((c) => c.resumeOf !== null);
        expect(resumed).toHaveLength(1);
        const again = resumed[0]!;
        expect(again.resumeOf).toBe(saved.session.sessionId);
        expect(again.prompt).toBe(RESUME_SESSION_PROMPT);
        if (provider === 'claude') {
          expect(again.argv.slice(0, 6)).toEqual([
            '-p',
            '--output-format',
            'stream-json',
            '--verbose',
            '--resume',
            saved.session.sessionId,
          ]);
        } else {
          expect(again.argv).toContain(`--session-id=${saved.session.sessionId}`);
        }
        expect(again.cwd).toBe(orphan!.cwd);
        if (checkout === 'main') expect(again.cwd).toBe(join(h.dir, 'workspaces', 'api'));

        const runs = await withStore(harness, (store) => store.listRuns({ limit: Number.POSITIVE_INFINITY }));
        expect(runs).toHaveLength(2);
        const dead = runs.find((r) => r.id === saved.run.id)!;
        expect(dead.status).toBe('cancelled');
        expect(dead.reason).toMatch(/^interrupted/);
        expect(dead.finishedAt).toBeTruthy();
        const next = runs.find((r) => r.id !== saved.run.id)!;
        expect(next).toMatchObject({
          status: 'succeeded',
          resumed: true,
          sessionId: saved.session.sessionId,
        });
        expect(unfenced(next.prompt ?? '')).toBe('Fix #1: First issue [[fake:sleep=20]]');
        expect(await sessionsOf(h, 'fix')).toEqual([]);
        expect(second.stdout).toContain('1 run: 1 succeeded');
      } finally {
        if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
        for (const call of h.agentRuns(provider)) {
          const pid = agentHostPid(call);
          if (pid !== undefined) process.kill(pid, 'SIGKILL');
        }
        await h.cleanup().catch((error: unknown) => console.error('cleanup failed', error));
      }
    },
    60_000,
  );
});

describe('a kill after the agent reported its result (the built CLI)', () => {
  it('the restart finishes the run as the agent reported (succeeded) instead of resuming its session', async () => {
    const h = await createHarness({
      profileExtra: UNSANDBOXED,
      automation: issueAutomation('fix', {
        prompt: 'Fix: ${issue_title} [[fake:commit]] [[fake:linger=30]]',
      }),
    });
    const args = ['--config', h.settingsFile, 'run'];
    const first = startBuiltCli(args, { env: h.env });
    try {
      // The agent printed its closing event and is slow to exit: curupira dies before it sees the exit.
      const run = await waitFor(
        'the final result in the transcript',
        async () => {
          const [found] = await withStore(h, (store) => store.listRuns());
          return found?.transcriptPath &&
            existsSync(found.transcriptPath) &&
            readFileSync(found.transcriptPath, 'utf8').includes('"type":"result"')
            ? found
            : undefined;
        },
        20_000,
        100,
      );
      first.child.kill('SIGKILL');
      await first.done;
      // Its last step closed its issue (so the restart's poll finds nothing new to start).
      h.world.closeIssue('acme/api', 1);
      const [agent] = h.agentRuns('claude');
      expect(isRunning(agent!.pid)).toBe(true);

      const second = await runBuiltCli(args, { env: h.env, timeoutMs: 30_000 });
      expect(second.code, second.stderr).toBe(0);
      expect(isRunning(agent!.pid)).toBe(false);
      // No second agent: the finished session was not resumed.
      expect(h.agentRuns('claude')).toHaveLength(1);
      const runs = await withStore(h, (store) => store.listRuns({ limit: Number.POSITIVE_INFINITY }));
      expect(runs.map((r) => [r.id, r.status, r.commits])).toEqual([[run.id, 'succeeded', 1]]);
      expect(runs[0]!.reason).toContain('the agent reported its result');
      expect(await sessionsOf(h, 'fix')).toEqual([]);
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      for (const call of h.agentRuns('claude')) {
        const pid = agentHostPid(call);
        if (pid !== undefined) process.kill(pid, 'SIGKILL');
      }
      await h.cleanup().catch((error: unknown) => console.error('cleanup failed', error));
    }
  }, 60_000);
});

describe('Ctrl+C on the built CLI', () => {
  it('a second Ctrl+C stops the agent, keeps its session for the next start, and exits 130', async () => {
    const h = await createHarness({
      profileExtra: UNSANDBOXED,
      automation: issueAutomation('fix', { prompt: 'Fix: ${issue_title} [[fake:sleep=20]]' }),
    });
    const cli = startBuiltCli(['--config', h.settingsFile, 'run'], { env: h.env });
    try {
      const session = await waitFor(
        'the agent and its session',
        async () =>
          h.agentRuns('claude').length > 0 && (await withStore(h, (store) => store.listSessions()))[0],
        20_000,
        100,
      );
      // The first Ctrl+C lets the agent finish; the second stops it now.
      let stderr = '';
      cli.child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      cli.child.kill('SIGINT');
      await waitFor('the first Ctrl+C to be taken', () => stderr.includes('running agents finish first'));
      cli.child.kill('SIGINT');
      const result = await cli.done;
      expect(result.code, result.stderr).toBe(130);
      expect(result.stderr).toContain('running agents finish first (press Ctrl+C again to stop them now');
      const [call] = h.agentRuns('claude');
      expect(fakeProcessAlive(call!.pid, join(h!.binDir, 'fake-agent.mjs'))).toBe(false);
      const runs = await withStore(h, (store) => store.listRuns());
      expect(runs.map((r) => r.status)).toEqual(['cancelled']);
      expect(await sessionsOf(h, 'fix')).toEqual([session]);
      expect(result.stdout).toContain('1 run: 1 cancelled');
    } finally {
      if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
      for (const call of h.agentRuns('claude')) {
        const pid = agentHostPid(call);
        if (pid !== undefined) process.kill(pid, 'SIGKILL');
      }
      await h.cleanup().catch((error: unknown) => console.error('cleanup failed', error));
    }
  }, 60_000);
});

describe('restarts, watch and stop (in process)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ profileExtra: UNSANDBOXED });
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('after a successful run, a restart dispatches the still-matching item again; a closed one is not', async () => {
    h.configure({ automation: issueAutomation('again', { prompt: 'Again: ${issue_title}' }) });
    const first = await h.run();
    const second = await h.run();
    for (const result of [first, second]) {
      expect(result.runs).toHaveLength(1);
      expect(result.runs[0]!.status).toBe('succeeded');
      expect(result.runs[0]!.resumed).toBe(false);
    }
    const calls = h.agentRuns('claude').filter((c) => unfenced(c.prompt ?? '') === 'Again: First issue');
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.resumeOf === null)).toBe(true);
    expect(calls[0]!.sessionId).not.toBe(calls[1]!.sessionId);
    // The filters decide what is pending: a closed issue no longer matches.
    h.world.closeIssue('acme/api', 1);
    try {
      expect((await h.run()).runs).toEqual([]);
    } finally {
      h.world.reopenIssue('acme/api', 1);
    }
  });

  it('an item covered by a saved session is resumed on the next start instead of started fresh', async () => {
    h.configure({
      automation: issueAutomation('resume', { prompt: 'Resume: ${issue_title} [[fake:fail]]' }),
    });
    const failed = await h.run();
    expect(failed.runs.map((r) => r.status)).toEqual(['failed']);
    const [saved] = await sessionsOf(h, 'resume');
    expect(saved?.sessionId).toBe(failed.runs[0]!.sessionId);

    const next = await h.run();
    expect(next.runs).toHaveLength(1);
    const run = next.runs[0]!;
    expect(run).toMatchObject({ status: 'succeeded', resumed: true, sessionId: saved!.sessionId });
    expect(unfenced(run.prompt ?? '')).toBe('Resume: First issue [[fake:fail]]');
    const calls = h.agentRuns('claude').filter((c) => c.cwd === run.worktreePath);
    expect(calls.map((c) => c.resumeOf)).toEqual([null, saved!.sessionId]);
    expect(calls[1]!.argv).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--resume',
      saved!.sessionId,
      '--strict-mcp-config',
      '--',
      RESUME_SESSION_PROMPT,
    ]);
    expect(await sessionsOf(h, 'resume')).toEqual([]);
  });

  it('a changed prompt template starts a fresh session instead of resuming', async () => {
    h.configure({ automation: issueAutomation('edited', { prompt: 'Old: ${issue_title} [[fake:fail]]' }) });
    const failed = await h.run();
    const [saved] = await sessionsOf(h, 'edited');
    expect(saved?.sessionId).toBe(failed.runs[0]!.sessionId);

    h.configure({ automation: issueAutomation('edited', { prompt: 'New: ${issue_title}' }) });
    const next = await h.run();
    expect(next.runs).toHaveLength(1);
    const run = next.runs[0]!;
    expect(run).toMatchObject({ status: 'succeeded', resumed: false });
    expect(unfenced(run.prompt ?? '')).toBe('New: First issue');
    expect(run.sessionId).not.toBe(saved!.sessionId);
    const [call] = h.agentRuns('claude').filter((c) => unfenced(c.prompt ?? '') === 'New: First issue');
    expect(call!.resumeOf).toBeNull();
    expect(call!.argv).not.toContain('--resume');
    expect(await sessionsOf(h, 'edited')).toEqual([]);
  });

  it('run --watch dispatches an item once per process, and still picks up new items', async () => {
    h.configure({
      settingsExtra: '\n[settings.polling]\npoll_interval_seconds = 0.2',
      automation: issueAutomation('watcher', { prompt: 'Watch: ${issue_title}' }),
    });
    const stop = new AbortController();
    // Each poll starts with the change probe (docs/polling.md); an idle one stops there, free.
    const searches = (): number => h.sim.requests.filter((r) => r.path === '/repos/acme/api/issues').length;
    let added = false;
    const finished: string[] = [];
    let pollsAtSecond = 0;
    const watching = h.run({
      mode: 'watch',
      stop: stop.signal,
      onRun: (run) => {
        finished.push(run.itemId);
        if (!added) {
          added = true;
          h.world.addIssue('acme/api', {
            title: 'Second issue',
            body: '',
            labels: ['agent-ready'],
            author: 'octocat',
          });
        } else {
          pollsAtSecond = searches();
        }
      },
    });
    try {
      await waitFor('both issues to finish', () => finished.length >= 2, 15_000);
      // A few more polls see both issues again; neither may start a second time.
      await waitFor('two more polls', () => searches() >= pollsAtSecond + 2, 15_000);
    } finally {
      stop.abort();
    }
    const result = await watching;
    expect(result.runs.map((r) => [r.itemId, r.status])).toEqual([
      ['1', 'succeeded'],
      ['2', 'succeeded'],
    ]);
    expect(h.agentRuns('claude').filter((c) => c.prompt?.startsWith('Watch:'))).toHaveLength(2);
    h.world.closeIssue('acme/api', 2);
    h.configure({ settingsExtra: '' });
  });

  it('a graceful stop cancels the run, keeps its session and leaves no process of its group', async () => {
    h.configure({
      automation: issueAutomation('stopper', {
        prompt: 'Stop: ${issue_title} [[fake:spawn-child]] [[fake:sleep=30]]',
      }),
    });
    const stop = new AbortController();
    const childrenBefore = h.childPids().length;
    const running = h.run({ stop: stop.signal, killGraceMs: 300 });
    let saved: SessionRecord[];
    try {
      // The session is saved and the agent has started its grandchild (the fake does that next).
      saved = await waitFor('the session and the grandchild', async () => {
        const found = await sessionsOf(h, 'stopper');
        return found.length > 0 && h.childPids().length > childrenBefore ? found : undefined;
      });
    } finally {
      stop.abort();
    }
    const result = await running;
    expect(result.stoppedEarly).toBe(true);
    expect(result.runs).toHaveLength(1);
    const run = result.runs[0]!;
    expect(run.status).toBe('cancelled');
    expect(run.reason).toContain('the session resumes on the next start');
    expect(await sessionsOf(h, 'stopper')).toEqual(saved);
    const [call] = h.agentRuns('claude').filter((c) => c.prompt?.startsWith('Stop:'));
    expect(fakeProcessAlive(call!.pid, join(h!.binDir, 'fake-agent.mjs'))).toBe(false);
    const children = h.childPids().slice(childrenBefore);
    expect(children).toHaveLength(1);
    expect(fakeProcessAlive(children[0]!, STUBBORN_CHILD)).toBe(false);
  });
});
