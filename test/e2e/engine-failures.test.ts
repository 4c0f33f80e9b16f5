/**
 * Issue 4, acceptance: how runs fail (agent error, timeout, setup script, missing executable), the
 * concurrency limits, and what environment an agent gets. One world; each test brings its own
 * automation, so worktree paths and task keys never collide between tests.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import {
  createHarness,
  fakeProcessAlive,
  type Harness,
  issueAutomation,
  peakOverlap,
  runInterval,
  STUBBORN_CHILD,
  unfenced,
} from '../helpers/harness.js';

let h: Harness;
let checkout: string;
beforeAll(async () => {
  h = await createHarness({
    issues: [
      { title: 'Solo', labels: ['solo'] },
      ...[1, 2, 3, 4, 5].map((n) => ({ title: `Pool ${n}`, labels: ['pool'] })),
      { title: 'Shared A', labels: ['shared-a'] },
      { title: 'Shared B', labels: ['shared-b'] },
    ],
    originFiles: {
      'scripts/setup.sh': {
        content: '#!/bin/sh\necho "installing dependencies"\necho "lockfile is corrupt" >&2\nexit 3\n',
        executable: true,
      },
    },
  });
  checkout = join(h.dir, 'workspaces', 'api');
});
afterAll(async () => {
  await h?.cleanup();
});

async function sessions(): Promise<{ taskKey: string; sessionId: string; automationId: string }[]> {
  const store = await h.openStore();
  try {
    return await store.listSessions();
  } finally {
    await store.close();
  }
}

function only(runs: readonly RunRecord[]): RunRecord {
  expect(runs.map((r) => `${r.automationId}#${r.itemId}`)).toHaveLength(1);
  return runs[0]!;
}

describe('failures', () => {
  it('an agent that fails: the run fails with its exit status and stderr, the session is kept', async () => {
    h.configure({
      settingsExtra: '',
      automation: issueAutomation('failing', { labels: ['solo'], prompt: '${issue_title} [[fake:fail]]' }),
    });
    const run = only((await h.run()).runs);
    expect(run.status).toBe('failed');
    expect(run.reason).toBe(
      'claude exited with status 1: claude: error: simulated failure requested by the prompt',
    );
    expect(run.exitCode).toBe(1);
    expect(run.sessionId).toBeTruthy();
    const saved = (await sessions()).filter((s) => s.automationId === 'failing');
    expect(saved.map((s) => s.sessionId)).toEqual([run.sessionId]);
    // Nothing was written, so the worktree is not kept.
    expect(run.worktreeKept).toBe(false);
    expect(existsSync(run.worktreePath!)).toBe(false);
  });

  it('a timeout stops the whole process group: the agent and the grandchild it started are gone', async () => {
    h.configure({
      timeoutMinutes: 0.02,
      automation: issueAutomation('slow', {
        labels: ['solo'],
        prompt: '${issue_title} [[fake:spawn-child]] [[fake:sleep=30]]',
      }),
    });
    const before = h.childPids().length;
    const run = only((await h.run({ killGraceMs: 300 })).runs);
    h.configure({ timeoutMinutes: 5 });
    expect(run.status).toBe('timed_out');
    expect(run.reason).toBe('claude did not finish within 1.2 seconds');
    const [call] = h.agentRuns('claude').filter((c) => c.cwd === run.worktreePath);
    expect(call).toBeDefined();
    const children = h.childPids().slice(before);
    expect(children).toHaveLength(1);
    // The grandchild ignores SIGTERM and would have lived two minutes.
    expect(fakeProcessAlive(children[0]!, STUBBORN_CHILD)).toBe(false);
    expect(fakeProcessAlive(call!.pid, join(h!.binDir, 'fake-agent.mjs'))).toBe(false);
    // A timed-out session is resumable, as a failed one is.
    expect((await sessions()).some((s) => s.automationId === 'slow' && s.sessionId === run.sessionId)).toBe(
      true,
    );
  });

  it('an agent that exits leaving a process behind: the leftover is stopped with the run', async () => {
    h.configure({
      automation: issueAutomation('leftover', {
        labels: ['solo'],
        prompt: '${issue_title} [[fake:spawn-child]]',
      }),
    });
    const before = h.childPids().length;
    const run = only((await h.run({ killGraceMs: 300 })).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    const children = h.childPids().slice(before);
    expect(children).toHaveLength(1);
    expect(fakeProcessAlive(children[0]!, STUBBORN_CHILD)).toBe(false);
  });

  it('a failing setup script fails the run with its output, removes the fresh clone, never starts the agent', async () => {
    const brokenPath = join(h.dir, 'workspaces', 'broken');
    h.configure({
      settingsExtra: '',
      automation: `[repositories.broken]
remote = "file://${h.origin.url}"
setup_script = "scripts/setup.sh"

${issueAutomation('setup', { labels: ['solo'], repository: 'broken', prompt: '${issue_title}' })}`,
    });
    const agentCalls = h.invocations('claude').length;
    const run = only((await h.run()).runs);
    expect(run.status).toBe('failed');
    expect(run.reason).toContain('setup script scripts/setup.sh failed with status 3');
    expect(run.reason).toContain('installing dependencies');
    expect(run.reason).toContain('lockfile is corrupt');
    expect(existsSync(brokenPath)).toBe(false);
    expect(h.invocations('claude')).toHaveLength(agentCalls);
    expect(run.sessionId).toBeNull();
    expect(run.startedAt).toBeNull();
  });

  it('a missing executable fails the run with the reference message', async () => {
    h.configure({
      settingsExtra: '',
      automation: `[agents.profiles.missing]
provider = "claude"
executable = "no-such-agent"

${issueAutomation('missing', { labels: ['solo'], prompt: '${issue_title}', extra: 'profile = "missing"' })}`,
    });
    const run = only((await h.run()).runs);
    expect(run.status).toBe('failed');
    expect(run.reason).toBe('Required executable not found: no-such-agent');
    expect(existsSync(run.worktreePath!)).toBe(false);
  });

  it('copilot that never started leaves no session behind: once installed, it gets the task itself', async () => {
    const profile = (executable: string) => `[agents.profiles.pilot]
provider = "copilot"
env = { FAKE_AGENT_LOG = "${h.logDir}" }
sandbox_write_paths = ["${h.logDir}"]
${executable}

${issueAutomation('pilot', { labels: ['solo'], prompt: 'Pilot: ${issue_title}', extra: 'profile = "pilot"' })}`;
    h.configure({ settingsExtra: '', automation: profile('executable = "no-such-agent"') });
    const missing = only((await h.run()).runs);
    expect(missing.reason).toBe('Required executable not found: no-such-agent');
    expect((await sessions()).filter((s) => s.automationId === 'pilot')).toEqual([]);

    h.configure({ automation: profile('') });
    const run = only((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.resumed).toBe(false);
    const calls = h.agentRuns('copilot').filter((c) => c.cwd === run.worktreePath);
    expect(calls.map((c) => unfenced(c.prompt ?? ''))).toEqual(['Pilot: Solo']);
  });
});

describe('concurrency', () => {
  it('never runs more agents at once than max_active_tasks', async () => {
    h.configure({
      settingsExtra: 'max_active_tasks = 2',
      automation: issueAutomation('pool', { labels: ['pool'], prompt: '${issue_title} [[fake:sleep=1]]' }),
    });
    const { runs } = await h.run();
    expect(runs).toHaveLength(5);
    for (const run of runs) expect(run.status, run.reason ?? '').toBe('succeeded');
    // The limit is reached (two at a time) and never exceeded.
    expect(peakOverlap(runs.map(runInterval))).toBe(2);
  });

  it('two checkout = "main" automations on one repository never share the checkout', async () => {
    h.configure({
      settingsExtra: 'max_active_tasks = 4',
      automation: [
        issueAutomation('main-a', {
          labels: ['shared-a'],
          prompt: '${issue_title} [[fake:sleep=1]]',
          extra: 'checkout = "main"',
        }),
        issueAutomation('main-b', {
          labels: ['shared-b'],
          prompt: '${issue_title} [[fake:sleep=1]]',
          extra: 'checkout = "main"',
        }),
        // Worktree runs are not held back by a busy shared checkout.
        issueAutomation('side', { labels: ['shared-a'], prompt: '${issue_title} side [[fake:sleep=1]]' }),
      ].join('\n'),
    });
    const { runs } = await h.run();
    expect(runs.map((r) => r.automationId).sort()).toEqual(['main-a', 'main-b', 'side']);
    for (const run of runs) expect(run.status, run.reason ?? '').toBe('succeeded');
    const shared = runs.filter((r) => r.automationId.startsWith('main-'));
    expect(peakOverlap(shared.map(runInterval))).toBe(1);
    expect(peakOverlap(runs.map(runInterval))).toBe(2);
    // Both ran in the checkout itself, on no worktree of their own.
    for (const run of shared) expect(run.worktreePath).toBeNull();
    const cwds = h
      .agentRuns('claude')
      .map((c) => ({ ...c, text: unfenced(c.prompt ?? '') }))
      .filter((c) => c.text.startsWith('Shared') && !c.text.includes('side'))
      .map((c) => c.cwd);
    expect(cwds).toEqual([checkout, checkout]);
  });
});

describe("the agent's environment", () => {
  const outside = {
    GH_TOKEN: 'ghp_notForTheAgent000000000000000000000001',
    GITHUB_TOKEN: 'ghp_notForTheAgent000000000000000000000002',
    GIT_DIR: '/somewhere/else/.git',
    GIT_WORK_TREE: '/somewhere/else',
    GIT_INDEX_FILE: '/somewhere/else/.git/index',
    MY_TOOL_HOME: '/opt/my-tool',
    UNRELATED_SECRET: 'do-not-leak',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/anthropic',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/openai',
  };

  async function runWith(id: string, profileExtra: string, prompt: string) {
    Object.assign(h.env, outside);
    try {
      h.configure({
        settingsExtra: '',
        profileExtra,
        automation: issueAutomation(id, { labels: ['solo'], prompt }),
      });
      const run = only((await h.run()).runs);
      expect(run.status, run.reason ?? '').toBe('succeeded');
      const calls = h.agentRuns('claude').filter((c) => c.cwd === run.worktreePath);
      expect(calls).toHaveLength(1);
      return { run, call: calls[0]!, transcript: readFileSync(run.transcriptPath!, 'utf8') };
    } finally {
      for (const name of Object.keys(outside)) {
        if (name !== 'GH_TOKEN') delete h.env[name];
      }
      h.env.GH_TOKEN = 'ghp_harnessTokenForTests0000000000000001';
      h.configure({ profileExtra: '' });
    }
  }

  it('gets no GitHub token, no GIT_DIR-like variables and nothing unlisted; PWD is the worktree; pass_env passes', async () => {
    const { run, call, transcript } = await runWith(
      'env-plain',
      'pass_env = ["MY_TOOL_*"]',
      '${issue_title} [[fake:echo-env=MY_TOOL_HOME]] [[fake:echo-env=GH_TOKEN]]',
    );
    const keys = call.env.keys;
    for (const name of [
      'GH_TOKEN',
      'GITHUB_TOKEN',
      'GIT_DIR',
      'GIT_WORK_TREE',
      'GIT_INDEX_FILE',
      'UNRELATED_SECRET',
    ])
      expect(keys).not.toContain(name);
    // Its own provider's variables pass; another provider's do not.
    expect(keys).toContain('ANTHROPIC_BASE_URL');
    expect(keys).not.toContain('OPENAI_BASE_URL');
    expect(call.env.values.PWD).toBe(run.worktreePath);
    expect(transcript).toContain('MY_TOOL_HOME=/opt/my-tool');
    expect(transcript).toContain('GH_TOKEN is not set');
  });

  it('gets GH_TOKEN and GITHUB_TOKEN with github_token = true, and the token stays out of the transcript', async () => {
    const { call, transcript } = await runWith(
      'env-token',
      'github_token = true',
      '${issue_title} [[fake:echo-env=GH_TOKEN]] [[fake:echo-env=GITHUB_TOKEN]]',
    );
    expect(call.env.keys).toContain('GH_TOKEN');
    expect(call.env.keys).toContain('GITHUB_TOKEN');
    expect(call.env.keys).not.toContain('GIT_DIR');
    expect(transcript).not.toContain('GH_TOKEN is not set');
    expect(transcript).toContain('GH_TOKEN=');
    expect(transcript).not.toContain('ghp_');
  });
});
