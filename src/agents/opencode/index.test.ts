import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INSIDE_PROXY_PORT, prepareSandbox } from '../../sandbox/index.js';
import { ClaudeProfile } from '../claude/schema.js';
import { createOpenCodeDriver, openCodeMajorVersion } from './index.js';
import { OpenCodeProfile } from './schema.js';

const driver = createOpenCodeDriver();
const bare = OpenCodeProfile.parse({ provider: 'opencode' });
const full = OpenCodeProfile.parse({
  provider: 'opencode',
  model: 'anthropic/claude-sonnet-4-5',
  agent: 'build',
  effort: 'high',
  auto_approve: true,
});
const worktree = '/w/api.worktrees/triage/github-issues-abc';

const server = {
  name: 'curupira-findings',
  command: '/usr/bin/node',
  args: ['/opt/curupira/dist/cli.js', 'mcp', '--findings', 'run-1'],
  env: { CURUPIRA_X: '1' },
};

describe('opencode driver', () => {
  it("declares the run's MCP servers in OPENCODE_CONFIG_CONTENT (a local server, command and args as one array)", () => {
    expect(driver.declaresMcpServers).toBe(true);
    const inv = driver.buildInvocation({
      profile: bare,
      prompt: 'Review',
      worktree,
      version: '1.18.33',
      mcpServers: [server],
      env: { PATH: '/usr/bin' },
    });
    expect(inv.args).toEqual(['run', '--format', 'json', '--dir', worktree, '--', 'Review']);
    expect(JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT!)).toEqual({
      mcp: {
        'curupira-findings': {
          type: 'local',
          command: ['/usr/bin/node', '/opt/curupira/dist/cli.js', 'mcp', '--findings', 'run-1'],
          environment: { CURUPIRA_X: '1' },
        },
      },
    });
  });

  it('keeps what the user put in OPENCODE_CONFIG_CONTENT, their MCP servers included, and adds the run’s', () => {
    const own = { model: 'openai/gpt-5', mcp: { mine: { type: 'remote', url: 'https://mcp.example' } } };
    const inv = driver.buildInvocation({
      profile: bare,
      prompt: 'Review',
      worktree,
      mcpServers: [server],
      env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(own) },
    });
    const content = JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT!) as {
      model: string;
      mcp: Record<string, unknown>;
    };
    expect(content.model).toBe('openai/gpt-5');
    expect(Object.keys(content.mcp)).toEqual(['mine', 'curupira-findings']);
    expect(content.mcp.mine).toEqual(own.mcp.mine);
  });

  it('sets no OPENCODE_CONFIG_CONTENT for a run without MCP servers, even when the user has one', () => {
    const inv = driver.buildInvocation({
      profile: bare,
      prompt: 'Fix',
      worktree,
      env: { OPENCODE_CONFIG_CONTENT: '{"model":"x/y"}' },
    });
    expect(inv.env).toEqual({});
  });

  it('runs a bare profile headless, isolated with --standalone on 2.x', () => {
    const inv = driver.buildInvocation({ profile: bare, prompt: 'Fix #12', worktree, version: '2.0.3' });
    expect(inv.args).toEqual(['run', '--format', 'json', '--standalone', '--', 'Fix #12']);
    expect(inv.env).toEqual({});
  });

  it('passes every option in the reference order', () => {
    const inv = driver.buildInvocation({ profile: full, prompt: 'Fix #12', worktree, version: '2.1.0' });
    expect(inv.args).toEqual([
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
      'Fix #12',
    ]);
  });

  it('resumes with --session before the options', () => {
    const inv = driver.buildInvocation({
      profile: full,
      prompt: 'Continue',
      worktree,
      resumeSessionId: 'ses_abc',
      version: '2.0.0',
    });
    expect(inv.args.slice(0, 5)).toEqual(['run', '--format', 'json', '--session', 'ses_abc']);
    expect(inv.args.slice(-2)).toEqual(['--', 'Continue']);
  });

  it('gives 1.x --dir and its own database next to the worktree', () => {
    const inv = driver.buildInvocation({
      profile: bare,
      prompt: 'x',
      worktree: `${worktree}/`,
      version: '1.0.150',
    });
    expect(inv.args).toEqual(['run', '--format', 'json', '--dir', worktree, '--', 'x']);
    expect(inv.env).toEqual({ OPENCODE_DB: `${worktree}.opencode.db` });
  });

  it('treats an unknown or missing version as 2.x', () => {
    for (const version of [undefined, '', 'opencode dev build']) {
      const inv = driver.buildInvocation({
        profile: bare,
        prompt: 'x',
        worktree,
        ...(version === undefined ? {} : { version }),
      });
      expect(inv.args).toContain('--standalone');
      expect(inv.args).not.toContain('--dir');
      expect(inv.env).toEqual({});
    }
  });

  it('keeps a prompt starting with - as prompt text after --', () => {
    const inv = driver.buildInvocation({ profile: bare, prompt: '--help me', worktree });
    expect(inv.args.slice(-2)).toEqual(['--', '--help me']);
  });

  it('rejects a profile of another provider', () => {
    const other = ClaudeProfile.parse({ provider: 'claude' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'opencode adapter cannot use claude profile',
    );
  });

  it('reads the major version from what --version prints', () => {
    expect(openCodeMajorVersion('1.0.150\n')).toBe(1);
    expect(openCodeMajorVersion('opencode 2.3.1')).toBe(2);
    expect(openCodeMajorVersion('nightly')).toBeUndefined();
    expect(driver.versionArgs).toEqual(['--version']);
  });

  // OpenCode 1.18.33 sends its built-in providers' requests to OPENAI_BASE_URL and
  // ANTHROPIC_BASE_URL, and a custom provider's config can read both ({env:…}): checked by
  // real-cli.test.ts against the real CLI.
  it('in a sandbox, the OpenAI and Anthropic keys stay with the key proxy: placeholders and its base URLs inside', async () => {
    await inSandbox({ OPENAI_API_KEY: 'sk-real-openai', ANTHROPIC_API_KEY: 'sk-ant-real' }, (env) => {
      const proxy = `http://127.0.0.1:${INSIDE_PROXY_PORT}/_key/`;
      expect(env.OPENAI_API_KEY).toMatch(/^curupira-placeholder-/);
      expect(env.ANTHROPIC_API_KEY).toMatch(/^curupira-placeholder-/);
      expect(env.OPENAI_BASE_URL).toMatch(new RegExp(`^${proxy}\\d$`));
      expect(env.ANTHROPIC_BASE_URL).toMatch(new RegExp(`^${proxy}\\d$`));
      expect(Object.values(env).join(' ')).not.toMatch(/sk-real-openai|sk-ant-real/);
    });
  });

  // Next to the worktree is outside what a sandbox keeps: the database would be written to the
  // sandbox's throw-away root and a resume after the run would find no session (seen with the real
  // CLI, real-cli.test.ts). Inside, it lives in the task's private home, which the task's runs share.
  it('in a sandbox, 1.x keeps its database in the private home instead of next to the worktree', async () => {
    const inv = driver.buildInvocation({ profile: bare, prompt: 'x', worktree, version: '1.18.33' });
    expect(inv.env.OPENCODE_DB).toBe(`${worktree}.opencode.db`);
    await inSandbox(inv.env, (env, home) => {
      expect(env.OPENCODE_DB).toBe(
        join(home, '.local', 'state', 'curupira', 'github-issues-abc.opencode.db'),
      );
    });
  });
});

/** Prepares a sandbox for the OpenCode driver (a backend that only echoes) and hands over the agent's environment. */
async function inSandbox(
  extra: Record<string, string>,
  check: (env: Record<string, string>, homeInside: string) => void,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'opencode-sbx-'));
  try {
    const prepared = await prepareSandbox({
      choice: { mode: 'bubblewrap', source: 'test' },
      runId: 'r1',
      homeKey: 'k',
      cwd: dir,
      env: { PATH: '/usr/bin', HOME: dir, ...extra },
      executable: '/usr/bin/true',
      args: [],
      realHome: dir,
      stateDir: join(dir, 'state'),
      driver: driver.sandbox,
      profile: { readPaths: [], writePaths: [], hosts: [] },
      automationHosts: [],
      githubHosts: [],
      limits: { memoryMb: 1024, maxProcesses: 64 },
      backend: {
        name: 'bubblewrap',
        probe: async () => ({ ok: true }),
        wrap: async (_spec, executable, args) => ({
          executable,
          args: [...args],
          unenforced: [],
          dispose: async () => {},
        }),
      },
    });
    try {
      check(prepared.env, dir);
    } finally {
      await prepared.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
