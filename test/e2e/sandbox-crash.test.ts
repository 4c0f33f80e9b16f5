/**
 * Issue 26: a crash of curupira (SIGKILL) while a sandboxed agent runs, then a restart. The agent
 * dies with curupira (bubblewrap's --die-with-parent), the dead run is closed as interrupted, and
 * the restart resumes the same session once, in the sandbox again, from the same private home.
 *
 * Skipped with the reason where no sandbox can start here.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESUME_SESSION_PROMPT } from '../../src/engine/executor.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import type { Store } from '../../src/store/types.js';
import {
  agentHostPid,
  createHarness,
  type Harness,
  issueAutomation,
  runBuiltCli,
  startBuiltCli,
  waitFor,
} from '../helpers/harness.js';

const probe = await sandboxBackend('bubblewrap').probe();
if (!probe.ok) console.warn(`sandbox crash test skipped: ${probe.reason}`);

async function withStore<T>(h: Harness, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await h.openStore();
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

describe.skipIf(!probe.ok)('a sandboxed agent when curupira is killed (the built CLI)', () => {
  it('the agent dies with curupira; the restart closes the dead run and resumes its session once, sandboxed', async () => {
    const h = await createHarness({
      provider: 'claude',
      // The resumed session commits: a commit from inside the sandbox after the restart.
      agentEnv: { FAKE_AGENT_ON_RESUME: '[[fake:commit]]' },
      automation: issueAutomation('fix', {
        prompt: 'Fix #${issue_number}: ${issue_title} [[fake:sleep=20]]',
        extra: 'sandbox = "required"',
      }),
    });
    const args = ['--config', h.settingsFile, 'run'];
    const first = startBuiltCli(args, { env: h.env });
    try {
      const saved = await waitFor(
        'the session and the sandboxed agent running',
        async () =>
          withStore(h, async (store) => {
            const [session] = await store.listSessions();
            const [run] = await store.listRuns();
            const [call] = h.agentRuns('claude');
            const pid = call ? agentHostPid(call) : undefined;
            return session && run?.agentPid && call && pid ? { session, run, call, pid } : undefined;
          }),
        30_000,
        100,
      );
      // The private home the session's files live in, kept across runs of the task.
      const homes = join(h.dir, 'state', 'sandbox', 'homes');
      first.child.kill('SIGKILL');
      expect((await first.done).signal).toBe('SIGKILL');
      // No orphan: the sandbox went with curupira.
      await waitFor(
        'the sandboxed agent gone',
        async () => (agentHostPid(saved.call) ? undefined : true),
        10_000,
        50,
      );

      const second = await runBuiltCli(args, { env: h.env, timeoutMs: 60_000 });
      expect(second.code, second.stderr).toBe(0);

      const calls = h.agentRuns('claude');
      expect(calls).toHaveLength(2);
      const again = calls[1]!;
      expect(again.resumeOf).toBe(saved.session.sessionId);
      expect(again.prompt).toBe(RESUME_SESSION_PROMPT);
      expect(again.cwd).toBe(saved.call.cwd);
      // Both ran in the same private home (not curupira's HOME).
      expect(again.env.values.HOME).toBeDefined();
      expect(again.env.values.HOME).toBe(saved.call.env.values.HOME);

      const runs = await withStore(h, (store) => store.listRuns({ limit: Number.POSITIVE_INFINITY }));
      expect(runs).toHaveLength(2);
      const dead = runs.find((r) => r.id === saved.run.id)!;
      expect(dead.status).toBe('cancelled');
      expect(dead.reason).toMatch(/^interrupted/);
      const next = runs.find((r) => r.id !== saved.run.id)!;
      expect(next, next.reason ?? '').toMatchObject({
        status: 'succeeded',
        resumed: true,
        sessionId: saved.session.sessionId,
      });
      expect(next.commits).toBeGreaterThan(0);
      const policy = next.screeningFindings?.find((f) => f.scanner === 'sandbox' && f.rule === 'policy');
      expect(policy?.excerpt).toMatch(/^bubblewrap \(sandbox = "required"/);
      expect(existsSync(homes) && readdirSync(homes).length).toBe(1);
      expect(await withStore(h, (store) => store.listSessions())).toEqual([]);
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      for (const call of h.agentRuns('claude')) {
        const pid = agentHostPid(call);
        if (pid !== undefined) process.kill(pid, 'SIGKILL');
      }
      await h.cleanup().catch((error: unknown) => console.error('cleanup failed', error));
    }
  }, 120_000);
});

describe.runIf(!probe.ok)('a sandboxed agent when curupira is killed (no sandbox here)', () => {
  it.skip(`skipped: ${probe.reason ?? ''}`, () => {});
});
