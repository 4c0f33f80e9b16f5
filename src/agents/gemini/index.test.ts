import { describe, expect, it } from 'vitest';
import { QwenProfile } from '../qwen/schema.js';
import { createGeminiDriver, geminiMcpSettings } from './index.js';
import { GeminiProfile } from './schema.js';

const driver = createGeminiDriver();
const worktree = '/w/tree';

describe('gemini driver', () => {
  it('runs a bare profile with the prompt as --prompt=', () => {
    const inv = driver.buildInvocation({
      profile: GeminiProfile.parse({ provider: 'gemini' }),
      prompt: 'Fix',
      worktree,
    });
    expect(inv.args).toEqual([
      '--output-format',
      'stream-json',
      '--allowed-mcp-server-names',
      'curupira-no-mcp-server',
      '--prompt=Fix',
    ]);
  });

  it('passes every option in the reference order, and resumes with --resume', () => {
    const profile = GeminiProfile.parse({
      provider: 'gemini',
      model: 'auto',
      approval_mode: 'auto_edit',
      skip_trust: true,
    });
    expect(driver.buildInvocation({ profile, prompt: 'Fix', worktree, resumeSessionId: 'g-1' }).args).toEqual(
      [
        '--output-format',
        'stream-json',
        '--resume',
        'g-1',
        '--model',
        'auto',
        '--approval-mode',
        'auto_edit',
        '--skip-trust',
        '--allowed-mcp-server-names',
        'curupira-no-mcp-server',
        '--prompt=Fix',
      ],
    );
  });

  it('allows only the MCP servers the profile names', () => {
    const profile = GeminiProfile.parse({ provider: 'gemini', mcp_servers: ['docs', 'search'] });
    const args = driver.buildInvocation({ profile, prompt: 'Fix', worktree }).args;
    expect(args.slice(-3)).toEqual(['--allowed-mcp-server-names', 'docs,search', '--prompt=Fix']);
  });

  it('allows the run’s own MCP servers by name beside the profile’s, and declares them in its settings', () => {
    const profile = GeminiProfile.parse({ provider: 'gemini', mcp_servers: ['docs'] });
    const relay = {
      name: 'curupira-findings',
      command: '/usr/bin/node',
      args: ['/run/curupira/mcp-relay.cjs', '/run/curupira/tools.sock', 'r_1'],
      env: {},
    };
    const args = driver.buildInvocation({ profile, prompt: 'Fix', worktree, mcpServers: [relay] }).args;
    expect(args.slice(-3)).toEqual(['--allowed-mcp-server-names', 'docs,curupira-findings', '--prompt=Fix']);
    // The settings the sandbox's private home gets: the user's own kept, the run's server added.
    const merged = geminiMcpSettings(
      { model: { name: 'gemini-2.5-pro' }, mcpServers: { docs: { command: 'docs-mcp' } } },
      [relay],
    );
    expect(merged).toEqual({
      model: { name: 'gemini-2.5-pro' },
      mcpServers: {
        docs: { command: 'docs-mcp' },
        'curupira-findings': { command: '/usr/bin/node', args: relay.args, env: {}, trust: true },
      },
    });
    expect(driver.sandbox?.mcpSettingsFile?.path).toBe('.gemini/settings.json');
  });

  it('keeps a prompt starting with - inside the --prompt= argument', () => {
    const inv = driver.buildInvocation({
      profile: GeminiProfile.parse({ provider: 'gemini' }),
      prompt: '-y',
      worktree,
    });
    expect(inv.args.at(-1)).toBe('--prompt=-y');
  });

  it('rejects a profile of another provider', () => {
    const other = QwenProfile.parse({ provider: 'qwen' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'gemini adapter cannot use qwen profile',
    );
  });
});
