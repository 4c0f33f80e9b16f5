import { describe, expect, it } from 'vitest';
import { CopilotProfile } from '../copilot/schema.js';
import { createCursorDriver } from './index.js';
import { CursorProfile } from './schema.js';

const driver = createCursorDriver();
const worktree = '/w/tree';
const HEAD = ['--print', '--output-format', 'stream-json'];

describe('cursor driver', () => {
  it('runs the `agent` executable with a bare profile', () => {
    expect(driver.executable).toBe('agent');
    const inv = driver.buildInvocation({
      profile: CursorProfile.parse({ provider: 'cursor' }),
      prompt: 'Fix',
      worktree,
    });
    expect(inv.args).toEqual([...HEAD, '--', 'Fix']);
  });

  it('passes every option in the reference order, and resumes with --resume', () => {
    const profile = CursorProfile.parse({
      provider: 'cursor',
      agent: 'plan',
      model: 'auto',
      force: true,
      trust: true,
    });
    expect(driver.buildInvocation({ profile, prompt: 'Fix', worktree, resumeSessionId: 'c-1' }).args).toEqual(
      [...HEAD, '--resume', 'c-1', '--mode', 'plan', '--model', 'auto', '--force', '--trust', '--', 'Fix'],
    );
  });

  it('keeps a prompt starting with - as prompt text', () => {
    const inv = driver.buildInvocation({
      profile: CursorProfile.parse({ provider: 'cursor' }),
      prompt: '--force',
      worktree,
    });
    expect(inv.args.slice(-2)).toEqual(['--', '--force']);
  });

  it('rejects a profile of another provider', () => {
    const other = CopilotProfile.parse({ provider: 'copilot' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'cursor adapter cannot use copilot profile',
    );
  });
});
