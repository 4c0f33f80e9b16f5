import { describe, expect, it } from 'vitest';
import { GeminiProfile } from '../gemini/schema.js';
import { createQwenDriver } from './index.js';
import { QwenProfile } from './schema.js';

const driver = createQwenDriver();
const worktree = '/w/tree';
const server = {
  name: 'curupira-findings',
  command: '/usr/bin/node',
  args: ['/opt/curupira/dist/cli.js', 'mcp', '--findings', 'run-1'],
  env: { CURUPIRA_X: '1' },
};

describe('qwen driver', () => {
  it('runs a bare profile with the prompt as --prompt=', () => {
    const inv = driver.buildInvocation({
      profile: QwenProfile.parse({ provider: 'qwen' }),
      prompt: 'Fix',
      worktree,
    });
    expect(inv.args).toEqual(['--output-format', 'stream-json', '--prompt=Fix']);
  });

  it('passes every option in the reference order, and resumes with --resume', () => {
    const profile = QwenProfile.parse({
      provider: 'qwen',
      model: 'qwen3-coder-plus',
      approval_mode: 'auto-edit',
      max_session_turns: 30,
    });
    expect(driver.buildInvocation({ profile, prompt: 'Fix', worktree, resumeSessionId: 'q-1' }).args).toEqual(
      [
        '--output-format',
        'stream-json',
        '--resume',
        'q-1',
        '--model',
        'qwen3-coder-plus',
        '--approval-mode',
        'auto-edit',
        '--max-session-turns',
        '30',
        '--prompt=Fix',
      ],
    );
  });

  it('keeps a prompt starting with - inside the --prompt= argument', () => {
    const inv = driver.buildInvocation({
      profile: QwenProfile.parse({ provider: 'qwen' }),
      prompt: '--yolo',
      worktree,
    });
    expect(inv.args.at(-1)).toBe('--prompt=--yolo');
  });

  it('rejects a profile of another provider', () => {
    const other = GeminiProfile.parse({ provider: 'gemini' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'qwen adapter cannot use gemini profile',
    );
  });

  it("declares the run's MCP servers with --mcp-config (JSON), trusted, before the prompt", () => {
    expect(driver.declaresMcpServers).toBe(true);
    const inv = driver.buildInvocation({
      profile: QwenProfile.parse({ provider: 'qwen' }),
      prompt: 'Review',
      worktree,
      mcpServers: [server],
    });
    expect(inv.args).toEqual([
      '--output-format',
      'stream-json',
      '--mcp-config',
      JSON.stringify({
        mcpServers: {
          'curupira-findings': {
            command: '/usr/bin/node',
            args: ['/opt/curupira/dist/cli.js', 'mcp', '--findings', 'run-1'],
            env: { CURUPIRA_X: '1' },
            trust: true,
          },
        },
      }),
      '--prompt=Review',
    ]);
    expect(inv.env).toEqual({});
  });
});
