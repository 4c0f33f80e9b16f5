import { describe, expect, it } from 'vitest';
import { QwenProfile } from '../qwen/schema.js';
import { createGeminiDriver } from './index.js';
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
