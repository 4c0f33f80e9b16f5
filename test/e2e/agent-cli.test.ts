/**
 * Issue 9, items 1, 2 and 5, through the real engine with the fake CLIs (whose argument rules are
 * checked against the real CLIs' recorded help in src/agents/fake/cli-help.test.ts): a Codex
 * session with `sandbox` and `agent` set resumes; Codex in the workspace-write sandbox commits;
 * Claude Code as root gets IS_SANDBOX; every agent gets the git identity.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESUME_SESSION_PROMPT } from '../../src/engine/executor.js';
import { git } from '../../src/workspace/git.js';
import { createHarness, type Harness, issueAutomation } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({
    issues: [
      { title: 'resume me', labels: ['resume'] },
      { title: 'commit me', labels: ['commit'] },
      { title: 'as root', labels: ['root'] },
      { title: 'who am i', labels: ['identity'] },
    ],
  });
});
afterAll(async () => {
  await h?.cleanup();
});

async function sessionOf(automationId: string): Promise<string | undefined> {
  const store = await h.openStore();
  try {
    return (await store.listSessions()).find((s) => s.automationId === automationId)?.sessionId;
  } finally {
    await store.close();
  }
}

describe('agent CLIs as the real ones take them', () => {
  it('Codex with sandbox and agent set resumes its failed session (exec options before resume)', async () => {
    h.configure({
      provider: 'codex',
      profileExtra: 'agent = "ci"\nsandbox = "workspace-write"\nmodel = "gpt-5-codex"',
      automation: issueAutomation('codex-resume', {
        labels: ['resume'],
        prompt: '${issue_title} [[fake:fail]]',
      }),
    });
    const failed = await h.run();
    expect(failed.runs.map((r) => r.status)).toEqual(['failed']);
    const session = await sessionOf('codex-resume');
    expect(session).toBeDefined();

    const next = await h.run();
    expect(next.runs).toHaveLength(1);
    const run = next.runs[0]!;
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run).toMatchObject({ resumed: true, sessionId: session });
    const call = h.agentRuns('codex').find((c) => c.resumeOf === session)!;
    const at = call.argv.indexOf('resume');
    expect(call.argv.slice(0, 5)).toEqual(['exec', '--profile', 'ci', '--sandbox', 'workspace-write']);
    expect(call.argv.slice(at, at + 4)).toEqual(['resume', session, '--model', 'gpt-5-codex']);
    expect(call.argv.slice(-3)).toEqual(['--json', '--', RESUME_SESSION_PROMPT]);
    expect(await sessionOf('codex-resume')).toBeUndefined();
  });

  it('Codex in the workspace-write sandbox commits in its worktree', async () => {
    h.configure({
      provider: 'codex',
      profileExtra: 'sandbox = "workspace-write"',
      automation: issueAutomation('codex-commit', {
        labels: ['commit'],
        prompt: '${issue_title} [[fake:commit]]',
      }),
    });
    const [run] = (await h.run()).runs;
    expect(run!.status, run!.reason ?? '').toBe('succeeded');
    expect(run).toMatchObject({ worktreeKept: true, commits: 1 });
    const subject = await git(['log', '--format=%s', '-1'], { cwd: run!.worktreePath! });
    expect(subject.trim()).toBe('codex: fake change');
  });

  it('Claude Code as root with bypassPermissions runs when IS_SANDBOX=1 is set, and says why not otherwise', async () => {
    const configure = (id: string): void =>
      h.configure({
        provider: 'claude',
        profileExtra: 'permission_mode = "bypassPermissions"',
        agentEnv: { FAKE_AGENT_ROOT: '1' },
        automation: issueAutomation(id, { labels: ['root'], prompt: '${issue_title}' }),
      });
    configure('root-plain');
    const [refused] = (await h.run()).runs;
    expect(refused!.status).toBe('failed');
    expect(refused!.reason).toContain('cannot be used with root/sudo privileges');

    h.env.IS_SANDBOX = '1';
    try {
      configure('root-sandbox');
      const [run] = (await h.run()).runs;
      expect(run!.status, run!.reason ?? '').toBe('succeeded');
    } finally {
      delete h.env.IS_SANDBOX;
      h.configure({ agentEnv: {} });
    }
  });

  it.each(['gemini', 'codex', 'opencode'] as const)(
    '%s gets the git identity variables',
    async (provider) => {
      const names = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL'];
      Object.assign(h.env, {
        GIT_AUTHOR_NAME: 'Ana Bot',
        GIT_AUTHOR_EMAIL: 'ana-bot@example.invalid',
        GIT_COMMITTER_NAME: 'Curupira Committer',
        GIT_COMMITTER_EMAIL: 'committer@example.invalid',
      });
      try {
        h.configure({
          provider,
          profileExtra: '',
          automation: issueAutomation(`identity-${provider}`, {
            labels: ['identity'],
            prompt: `\${issue_title} ${names.map((n) => `[[fake:echo-env=${n}]]`).join(' ')}`,
          }),
        });
        const [run] = (await h.run()).runs;
        expect(run!.status, run!.reason ?? '').toBe('succeeded');
        const call = h.agentRuns(provider).find((c) => c.cwd === run!.worktreePath)!;
        for (const name of names) expect(call.env.keys).toContain(name);
        // The values as given (Gemini's stream splits a message in two: read a whole-line one).
        if (provider !== 'gemini') {
          const transcript = readFileSync(run!.transcriptPath!, 'utf8');
          expect(transcript).toContain('GIT_AUTHOR_NAME=Ana Bot');
          expect(transcript).toContain('GIT_COMMITTER_EMAIL=committer@example.invalid');
        }
      } finally {
        for (const name of names) delete h.env[name];
      }
    },
  );
});
