import { describe, expect, it } from 'vitest';
import { buildAgentEnv } from '../../process/env.js';
import { CodexProfile } from '../codex/schema.js';
import { createClaudeDriver } from './index.js';
import { ClaudeProfile } from './schema.js';

const driver = createClaudeDriver();
const worktree = '/w/tree';
const HEAD = ['-p', '--output-format', 'stream-json', '--verbose'];

describe('claude driver', () => {
  it('runs a bare profile headless with stream-json', () => {
    const inv = driver.buildInvocation({
      profile: ClaudeProfile.parse({ provider: 'claude' }),
      prompt: 'Fix',
      worktree,
    });
    expect(inv.args).toEqual([...HEAD, '--strict-mcp-config', '--', 'Fix']);
    expect(inv.env).toEqual({});
  });

  it('passes every option in the reference order', () => {
    const profile = ClaudeProfile.parse({
      provider: 'claude',
      model: 'opus',
      agent: 'reviewer',
      effort: 'xhigh',
      permission_mode: 'acceptEdits',
      permission_prompts: 'none',
    });
    expect(driver.buildInvocation({ profile, prompt: 'Fix', worktree }).args).toEqual([
      ...HEAD,
      '--model',
      'opus',
      '--agent',
      'reviewer',
      '--effort',
      'xhigh',
      '--permission-mode',
      'acceptEdits',
      '--permission-prompts',
      'none',
      '--strict-mcp-config',
      '--',
      'Fix',
    ]);
  });

  it('resumes with --resume right after the fixed flags', () => {
    const profile = ClaudeProfile.parse({ provider: 'claude', model: 'opus' });
    const inv = driver.buildInvocation({ profile, prompt: 'Continue', worktree, resumeSessionId: 'a1b2' });
    expect(inv.args).toEqual([
      ...HEAD,
      '--resume',
      'a1b2',
      '--model',
      'opus',
      '--strict-mcp-config',
      '--',
      'Continue',
    ]);
  });

  it('loads only the MCP servers the profile lists (--strict-mcp-config), none by default', () => {
    const profile = ClaudeProfile.parse({
      provider: 'claude',
      mcp_config: ['/etc/mcp/a.json', '/etc/mcp/b.json'],
    });
    const args = driver.buildInvocation({ profile, prompt: 'Fix', worktree }).args;
    expect(args.slice(-7)).toEqual([
      '--strict-mcp-config',
      '--mcp-config',
      '/etc/mcp/a.json',
      '--mcp-config',
      '/etc/mcp/b.json',
      '--',
      'Fix',
    ]);
  });

  it('waits for the listed MCP servers before the first model turn (MCP_CONNECTION_NONBLOCKING=0), only when there are some', () => {
    // Claude Code 2.1.197 connects MCP servers in the background: its first request to the model
    // may offer WaitForMcpServers instead of the servers' tools (seen against the real CLI,
    // test/e2e/real-claude-mcp.test.ts). An unattended run's tools must be there from the start.
    const withServers = ClaudeProfile.parse({ provider: 'claude', mcp_config: ['/etc/mcp/a.json'] });
    expect(driver.buildInvocation({ profile: withServers, prompt: 'Fix', worktree }).env).toEqual({
      MCP_CONNECTION_NONBLOCKING: '0',
    });
    const bare = ClaudeProfile.parse({ provider: 'claude' });
    expect(driver.buildInvocation({ profile: bare, prompt: 'Fix', worktree }).env).toEqual({});
  });

  it('declares the run’s MCP servers as one more --mcp-config JSON string, after the profile’s', () => {
    const profile = ClaudeProfile.parse({ provider: 'claude', mcp_config: ['/etc/mcp/a.json'] });
    const args = driver.buildInvocation({
      profile,
      prompt: 'Review',
      worktree,
      mcpServers: [
        {
          name: 'curupira-findings',
          command: '/usr/bin/node',
          args: ['/opt/curupira/main.js', 'mcp', '--run', 'r1'],
          env: { A: 'b' },
        },
      ],
    }).args;
    expect(args.slice(-7, -4)).toEqual(['--strict-mcp-config', '--mcp-config', '/etc/mcp/a.json']);
    expect(args.slice(-4, -3)).toEqual(['--mcp-config']);
    expect(JSON.parse(args.at(-3) as string)).toEqual({
      mcpServers: {
        'curupira-findings': {
          type: 'stdio',
          command: '/usr/bin/node',
          args: ['/opt/curupira/main.js', 'mcp', '--run', 'r1'],
          env: { A: 'b' },
        },
      },
    });
    expect(args.slice(-2)).toEqual(['--', 'Review']);
    const runOnly = driver.buildInvocation({
      profile: ClaudeProfile.parse({ provider: 'claude' }),
      prompt: 'Review',
      worktree,
      mcpServers: [{ name: 'curupira-findings', command: 'node', args: [], env: {} }],
    });
    // The run's own servers must be there on the first turn too.
    expect(runOnly.env).toEqual({ MCP_CONNECTION_NONBLOCKING: '0' });
  });

  it('keeps a prompt starting with - as prompt text', () => {
    const inv = driver.buildInvocation({
      profile: ClaudeProfile.parse({ provider: 'claude' }),
      prompt: '-p gotcha',
      worktree,
    });
    expect(inv.args.slice(-2)).toEqual(['--', '-p gotcha']);
  });

  it('rejects a profile of another provider', () => {
    const other = CodexProfile.parse({ provider: 'codex' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'claude adapter cannot use codex profile',
    );
  });

  it('lets the Anthropic, Claude Code, Bedrock and Vertex variables through, and not other vendors’ keys', () => {
    const wanted = {
      ANTHROPIC_API_KEY: 'sk-ant-test',
      CLAUDE_CODE_USE_BEDROCK: '1',
      AWS_REGION: 'eu-west-1',
      CLOUD_ML_REGION: 'europe-west4',
      VERTEX_REGION_CLAUDE_3_5_SONNET: 'us-east5',
      GOOGLE_CLOUD_PROJECT: 'acme',
    };
    const env = buildAgentEnv({
      source: {
        ...wanted,
        OPENAI_API_KEY: 'sk-openai-test',
        GEMINI_API_KEY: 'gemini-test',
        CLAUDEX: 'not a Claude variable',
        GH_TOKEN: 'ghp_notForAgents',
      },
      providerAllowlist: driver.envAllowlist,
      cwd: worktree,
    });
    expect(env).toMatchObject(wanted);
    for (const name of ['OPENAI_API_KEY', 'GEMINI_API_KEY', 'CLAUDEX', 'GH_TOKEN'])
      expect(env[name], name).toBeUndefined();
  });
});
