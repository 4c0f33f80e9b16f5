import { describe, expect, it } from 'vitest';
import { KiloProfile } from '../kilo/schema.js';
import { createCopilotDriver } from './index.js';
import { CopilotProfile } from './schema.js';

const driver = createCopilotDriver();
const worktree = '/w/tree';
const id = '6f1c2d3e-0000-4000-8000-000000000001';
const server = {
  name: 'curupira-findings',
  command: '/usr/bin/node',
  args: ['/opt/curupira/dist/cli.js', 'mcp', '--findings', 'run-1'],
  env: { CURUPIRA_X: '1' },
};

describe('copilot driver', () => {
  it('always passes the session id curupira chose before the start', () => {
    expect(driver.assignsSessionId).toBe(true);
    const inv = driver.buildInvocation({
      profile: CopilotProfile.parse({ provider: 'copilot' }),
      prompt: 'Fix',
      worktree,
      assignedSessionId: id,
    });
    expect(inv.args).toEqual(['--output-format=json', '--no-ask-user', `--session-id=${id}`, '--prompt=Fix']);
  });

  it('passes every option in the reference order', () => {
    const profile = CopilotProfile.parse({
      provider: 'copilot',
      model: 'gpt-5',
      agent: 'fixer',
      effort: 'high',
      allow_all_tools: true,
      allow_tools: ['shell(git:*)', 'write'],
      deny_tools: ['shell(rm)'],
    });
    expect(driver.buildInvocation({ profile, prompt: 'Fix', worktree, assignedSessionId: id }).args).toEqual([
      '--output-format=json',
      '--no-ask-user',
      `--session-id=${id}`,
      '--model=gpt-5',
      '--agent=fixer',
      '--reasoning-effort=high',
      '--allow-all-tools',
      '--allow-tool=shell(git:*),write',
      '--deny-tool=shell(rm)',
      '--prompt=Fix',
    ]);
  });

  // Copilot CLI 1.0.102 asks before a command touches a path outside the worktree, and with
  // --no-ask-user refuses it ("Permission denied because no interactive user response was
  // available"); --allow-all-tools does not cover paths (seen in real-cli.test.ts).
  it('lets paths outside the worktree through with allow_all_paths (--allow-all-paths), never by default', () => {
    const on = CopilotProfile.parse({ provider: 'copilot', allow_all_tools: true, allow_all_paths: true });
    const args = driver.buildInvocation({ profile: on, prompt: 'Fix', worktree, assignedSessionId: id }).args;
    expect(args.slice(3, 5)).toEqual(['--allow-all-tools', '--allow-all-paths']);
    const off = CopilotProfile.parse({ provider: 'copilot', allow_all_tools: true });
    expect(
      driver.buildInvocation({ profile: off, prompt: 'Fix', worktree, assignedSessionId: id }).args,
    ).not.toContain('--allow-all-paths');
  });

  it('resumes with the same --session-id', () => {
    const inv = driver.buildInvocation({
      profile: CopilotProfile.parse({ provider: 'copilot' }),
      prompt: 'Continue',
      worktree,
      resumeSessionId: id,
    });
    expect(inv.args).toEqual([
      '--output-format=json',
      '--no-ask-user',
      `--session-id=${id}`,
      '--prompt=Continue',
    ]);
  });

  it('refuses to start without a session id', () => {
    expect(() =>
      driver.buildInvocation({
        profile: CopilotProfile.parse({ provider: 'copilot' }),
        prompt: 'x',
        worktree,
      }),
    ).toThrow(/session id/);
  });

  it('keeps a prompt starting with - inside the --prompt= argument', () => {
    const inv = driver.buildInvocation({
      profile: CopilotProfile.parse({ provider: 'copilot' }),
      prompt: '--allow-all-tools please',
      worktree,
      assignedSessionId: id,
    });
    expect(inv.args.at(-1)).toBe('--prompt=--allow-all-tools please');
    expect(inv.args).not.toContain('--allow-all-tools');
  });

  it('rejects a profile of another provider', () => {
    const other = KiloProfile.parse({ provider: 'kilo' });
    expect(() =>
      driver.buildInvocation({ profile: other as never, prompt: 'x', worktree, assignedSessionId: id }),
    ).toThrow('copilot adapter cannot use kilo profile');
  });

  it('passes copilot’s own token variable but not the GitHub CLI ones', () => {
    expect(driver.envAllowlist).toContain('COPILOT_*');
    expect(driver.envAllowlist).not.toContain('GH_TOKEN');
    expect(driver.envAllowlist).not.toContain('GITHUB_TOKEN');
  });

  it("declares the run's MCP servers with --additional-mcp-config (JSON) and approves their tools", () => {
    expect(driver.declaresMcpServers).toBe(true);
    const profile = CopilotProfile.parse({
      provider: 'copilot',
      allow_tools: ['write'],
      deny_tools: ['shell(rm)'],
    });
    const args = driver.buildInvocation({
      profile,
      prompt: 'Review',
      worktree,
      assignedSessionId: id,
      mcpServers: [server],
    }).args;
    expect(args).toEqual([
      '--output-format=json',
      '--no-ask-user',
      `--session-id=${id}`,
      '--allow-tool=write,curupira-findings',
      '--deny-tool=shell(rm)',
      `--additional-mcp-config=${JSON.stringify({
        mcpServers: {
          'curupira-findings': {
            type: 'local',
            command: '/usr/bin/node',
            args: ['/opt/curupira/dist/cli.js', 'mcp', '--findings', 'run-1'],
            env: { CURUPIRA_X: '1' },
            tools: ['*'],
          },
        },
      })}`,
      '--prompt=Review',
    ]);
  });

  it('declares no MCP server and approves nothing more when the run has none', () => {
    const args = driver.buildInvocation({
      profile: CopilotProfile.parse({ provider: 'copilot' }),
      prompt: 'Fix',
      worktree,
      assignedSessionId: id,
    }).args;
    expect(args.some((a) => a.startsWith('--additional-mcp-config') || a.startsWith('--allow-tool'))).toBe(
      false,
    );
  });
});
