/**
 * Issue 4, acceptance: every provider's happy path through the real engine, real git and the fake
 * CLIs. One world serves all providers; each provider gets its own automation (so its own worktree
 * namespace) and three issues: plain work, a commit, and uncommitted changes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDERS, type Provider } from '../../src/agents/schemas.js';
import type { RunRecord } from '../../src/core/types.js';
import { git } from '../../src/workspace/git.js';
import { createHarness, type FakeInvocation, type Harness, waitFor } from '../helpers/harness.js';

const PROMPT = '--fix #${issue_number}: ${issue_title}\n${issue_body}';
const ISSUES = [
  { title: 'Plain task', body: 'nothing special' },
  { title: 'Make a commit', body: '[[fake:commit]]' },
  { title: 'Leave a draft', body: '[[fake:dirty]]' },
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Each provider with a profile that sets every option it has, and the argv the reference documents
 * for it (shared/REFERENCE-curupira.md §2.5), written out by hand.
 */
const CASES: Record<
  Provider,
  { profile: string; argv(prompt: string, session: string, gitDirs: readonly string[]): string[] }
> = {
  opencode: {
    profile: 'model = "anthropic/claude-sonnet-4-5"\nagent = "build"\neffort = "high"\nauto_approve = true',
    // 2.x (the fake's default version): no --dir, --standalone keeps it off the shared service.
    argv: (p) => [
      'run',
      '--format',
      'json',
      '--model',
      'anthropic/claude-sonnet-4-5',
      '--agent',
      'build',
      '--variant',
      'high',
      '--auto',
      '--standalone',
      '--',
      p,
    ],
  },
  claude: {
    profile:
      'model = "claude-sonnet-4-5"\nagent = "reviewer"\neffort = "high"\npermission_mode = "acceptEdits"\npermission_prompts = "none"',
    argv: (p) => [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'claude-sonnet-4-5',
      '--agent',
      'reviewer',
      '--effort',
      'high',
      '--permission-mode',
      'acceptEdits',
      '--permission-prompts',
      'none',
      '--strict-mcp-config',
      '--',
      p,
    ],
  },
  codex: {
    profile:
      'model = "gpt-5-codex"\nagent = "ci"\neffort = "high"\nsandbox = "workspace-write"\nauto_review = true',
    // exec's own options first (resume refuses them); the worktree's git dirs writable.
    argv: (p, _session, gitDirs) => [
      'exec',
      '--profile',
      'ci',
      '--sandbox',
      'workspace-write',
      ...gitDirs.flatMap((dir) => ['--add-dir', dir]),
      '--model',
      'gpt-5-codex',
      '--config',
      'model_reasoning_effort="high"',
      '--config',
      'approval_policy="on-request"',
      '--config',
      'approvals_reviewer="auto_review"',
      '--json',
      '--',
      p,
    ],
  },
  gemini: {
    profile: 'model = "gemini-2.5-pro"\napproval_mode = "yolo"\nskip_trust = true',
    argv: (p) => [
      '--output-format',
      'stream-json',
      '--model',
      'gemini-2.5-pro',
      '--approval-mode',
      'yolo',
      '--skip-trust',
      '--allowed-mcp-server-names',
      'curupira-no-mcp-server',
      `--prompt=${p}`,
    ],
  },
  cursor: {
    profile: 'model = "gpt-5"\nagent = "plan"\nforce = true\ntrust = true',
    argv: (p) => [
      '--print',
      '--output-format',
      'stream-json',
      '--mode',
      'plan',
      '--model',
      'gpt-5',
      '--force',
      '--trust',
      '--',
      p,
    ],
  },
  copilot: {
    profile:
      'model = "gpt-5"\nagent = "fixer"\neffort = "high"\nallow_all_tools = true\nallow_tools = ["shell(git)", "write"]\ndeny_tools = ["shell(rm)"]',
    argv: (p, session) => [
      '--output-format=json',
      '--no-ask-user',
      `--session-id=${session}`,
      '--model=gpt-5',
      '--agent=fixer',
      '--reasoning-effort=high',
      '--allow-all-tools',
      '--allow-tool=shell(git),write',
      '--deny-tool=shell(rm)',
      `--prompt=${p}`,
    ],
  },
  kilo: {
    profile: 'model = "anthropic/claude-sonnet-4-5"\nagent = "code"\neffort = "high"\nauto_approve = true',
    argv: (p) => [
      'run',
      '--format',
      'json',
      '--model',
      'anthropic/claude-sonnet-4-5',
      '--agent',
      'code',
      '--variant',
      'high',
      '--auto',
      '--',
      p,
    ],
  },
  pi: {
    profile:
      'model_provider = "anthropic"\nmodel = "claude-sonnet-4-5"\neffort = "high"\ntools = ["read", "bash"]\nexclude_tools = ["write"]\napprove = false',
    argv: (p) => [
      '--mode',
      'json',
      '--provider',
      'anthropic',
      '--model',
      'claude-sonnet-4-5',
      '--thinking',
      'high',
      '--tools',
      'read,bash',
      '--exclude-tools',
      'write',
      '--no-approve',
      '--',
      p,
    ],
  },
  qwen: {
    profile: 'model = "qwen3-coder-plus"\napproval_mode = "yolo"\nmax_session_turns = 5',
    argv: (p) => [
      '--output-format',
      'stream-json',
      '--model',
      'qwen3-coder-plus',
      '--approval-mode',
      'yolo',
      '--max-session-turns',
      '5',
      `--prompt=${p}`,
    ],
  },
};

/** A line each provider's real stream starts with, as the transcript must show it. */
const STREAM_MARKER: Record<Provider, RegExp> = {
  opencode: /"type":"step_start"/,
  kilo: /"type":"step_start"/,
  claude: /"type":"system","subtype":"init"/,
  qwen: /"type":"system","subtype":"init"/,
  cursor: /"type":"system","subtype":"init"/,
  codex: /"type":"thread.started"/,
  gemini: /"type":"init"/,
  copilot: /"type":"/,
  pi: /"type":"session"/,
};

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function automation(id: string, prompt = PROMPT): string {
  return `[automations.${id}]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
untrusted_text = "raw"
prompt = ${JSON.stringify(prompt)}
`;
}

let h: Harness;
let checkout: string;
beforeAll(async () => {
  h = await createHarness({ issues: ISSUES.map((i) => ({ ...i, labels: ['agent-ready'] })) });
  checkout = join(h.dir, 'workspaces', 'api');
});
afterAll(async () => {
  await h?.cleanup();
});

function expectedWorktree(automationId: string, issue: number): { path: string; branch: string } {
  const leaf = `github-issues-${sha256(String(issue))}`;
  return {
    path: join(dirname(checkout), `${basename(checkout)}.worktrees`, automationId, leaf),
    branch: `curupira/${automationId}/${leaf}`,
  };
}

async function localBranches(): Promise<string[]> {
  const out = await git(['for-each-ref', '--format=%(refname:short)', 'refs/heads/'], { cwd: checkout });
  return out.split('\n').filter(Boolean);
}

function runFor(runs: readonly RunRecord[], issue: number): RunRecord {
  const found = runs.filter((r) => r.itemId === String(issue));
  expect(found, `runs for issue ${issue}`).toHaveLength(1);
  return found[0]!;
}

function callFor(calls: readonly FakeInvocation[], title: string): FakeInvocation {
  const found = calls.filter((c) => c.prompt?.includes(title));
  expect(found, `invocations for "${title}"`).toHaveLength(1);
  return found[0]!;
}

describe('every provider, happy path', () => {
  it.each(PROVIDERS)(
    '%s: exact worktree, branch, argv and cwd; transcript; kept work reported',
    async (provider) => {
      const id = `fix-${provider}`;
      h.configure({
        provider,
        profileExtra: CASES[provider].profile,
        settingsExtra: 'max_active_tasks = 3',
        automation: automation(id),
      });
      const result = await h.run();
      expect(result.runs).toHaveLength(3);
      for (const run of result.runs) expect(run.status, run.reason ?? '').toBe('succeeded');
      const calls = h.agentRuns(provider);
      expect(calls).toHaveLength(3);

      // Plain work: every detail of the invocation, then nothing left behind.
      const plain = runFor(result.runs, 1);
      const where = expectedWorktree(id, 1);
      expect(plain.worktreePath).toBe(where.path);
      expect(plain.branch).toBe(where.branch);
      const call = callFor(calls, 'Plain task');
      const prompt = '--fix #1: Plain task\nnothing special';
      expect(call.prompt).toBe(prompt);
      expect(call.cwd).toBe(where.path);
      expect(call.env.values.PWD).toBe(where.path);
      expect(call.resumeOf).toBeNull();
      if (provider === 'copilot') expect(call.sessionId).toMatch(UUID);
      // Codex: the checkout's git dir's objects, refs and logs, then the worktree's own (named by
      // git after the folder).
      const common = realpathSync(join(checkout, '.git'));
      const gitDirs =
        provider === 'codex'
          ? [...['objects', 'refs', 'logs'].map((d) => join(common, d)), join(common, 'worktrees')]
          : [];
      const givenGitDirs = call.argv.filter((_, i) => call.argv[i - 1] === '--add-dir');
      expect(givenGitDirs.length).toBe(gitDirs.length);
      if (provider === 'codex') {
        expect(givenGitDirs.slice(0, 3)).toEqual(gitDirs.slice(0, 3));
        expect(givenGitDirs[3]!.startsWith(join(gitDirs[3]!, basename(where.path)))).toBe(true);
      }
      expect(call.argv).toEqual(CASES[provider].argv(prompt, call.sessionId ?? '', givenGitDirs));
      expect(plain.sessionId).toBe(call.sessionId);
      expect(plain.resumed).toBe(false);
      const transcript = readFileSync(plain.transcriptPath!, 'utf8');
      expect(transcript).toMatch(STREAM_MARKER[provider]);
      expect(transcript).toContain(plain.sessionId!);
      const lines = transcript.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(3);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(plain.worktreeKept).toBe(false);
      expect(plain.commits).toBe(0);
      expect(existsSync(where.path)).toBe(false);
      const branches = await localBranches();
      expect(branches).not.toContain(where.branch);

      // A commit on no remote: worktree and branch stay, and the record says where.
      const committed = runFor(result.runs, 2);
      const kept = expectedWorktree(id, 2);
      expect(committed).toMatchObject({
        worktreeKept: true,
        commits: 1,
        worktreePath: kept.path,
        branch: kept.branch,
      });
      expect(existsSync(kept.path)).toBe(true);
      expect(branches).toContain(kept.branch);
      const log = await git(['log', '--format=%s', '-1', kept.branch], { cwd: checkout });
      expect(log.trim()).toBe(`${provider}: fake change`);

      // Uncommitted changes: kept too, with no commits counted.
      const dirty = runFor(result.runs, 3);
      const draft = expectedWorktree(id, 3);
      expect(dirty).toMatchObject({ worktreeKept: true, commits: 0, worktreePath: draft.path });
      expect(readdirSync(draft.path).some((f) => f.endsWith('.draft'))).toBe(true);

      // Every run succeeded, so no session is left to resume.
      const store = await h.openStore();
      try {
        expect(await store.listSessions()).toEqual([]);
      } finally {
        await store.close();
      }
    },
  );

  it('opencode 1.x gets --dir and its own OPENCODE_DB beside the worktree', async () => {
    const id = 'fix-opencode-one';
    h.configure({
      provider: 'opencode',
      // Another executable path, so the version seen for the 2.x case above is not reused. Not
      // sandboxed: inside a sandbox the database lives in the task's private home instead
      // (src/agents/opencode/index.test.ts, the real OpenCode in src/agents/opencode/real-cli.test.ts).
      profileExtra: `executable = "${join(h.binDir, 'opencode')}"\nsandbox_mode = "none"`,
      agentEnv: { FAKE_AGENT_OPENCODE_VERSION: '1.4.2' },
      settingsExtra: '',
      automation: automation(id, '${issue_title}'),
    });
    const result = await h.run({ size: 1 });
    const [run] = result.runs;
    expect(run?.status, run?.reason ?? '').toBe('succeeded');
    const where = expectedWorktree(id, 1);
    const calls = h.agentRuns('opencode').filter((c) => c.cwd === where.path);
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.argv).toEqual(['run', '--format', 'json', '--dir', where.path, '--', 'Plain task']);
    expect(call.env.values.OPENCODE_DB).toBe(`${where.path}.opencode.db`);
    expect(call.cwd).toBe(where.path);
  });
});

describe('sessions while the agent runs', () => {
  it.each(['claude', 'copilot'] as const)(
    '%s: the session is in the store during the run and gone after success',
    async (provider) => {
      const id = `slow-${provider}`;
      h.configure({
        provider,
        profileExtra: '',
        agentEnv: {},
        settingsExtra: '',
        automation: automation(id, '${issue_title} [[fake:sleep=2]]'),
      });
      const store = await h.openStore();
      try {
        const running = h.run({ size: 1 });
        const sessions = await waitFor('a saved session', async () => {
          const all = await store.listSessions();
          return all.length > 0 ? all : undefined;
        });
        expect(sessions).toHaveLength(1);
        const saved = sessions[0]!;
        expect(saved.automationId).toBe(id);
        expect(saved.provider).toBe(provider);
        expect(saved.prompt).toBe('Plain task [[fake:sleep=2]]');
        const result = await running;
        const run = result.runs[0]!;
        expect(run.status, run.reason ?? '').toBe('succeeded');
        expect(run.sessionId).toBe(saved.sessionId);
        const call = callFor(h.agentRuns(provider), 'Plain task [[fake:sleep=2]]');
        expect(call.sessionId).toBe(saved.sessionId);
        expect(await store.listSessions()).toEqual([]);
      } finally {
        await store.close();
      }
    },
  );
});
