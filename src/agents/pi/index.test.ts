import { describe, expect, it } from 'vitest';
import { CursorProfile } from '../cursor/schema.js';
import { createPiDriver } from './index.js';
import { PiProfile } from './schema.js';

const driver = createPiDriver();
const worktree = '/w/tree';

describe('pi driver', () => {
  it('runs a bare profile in json mode', () => {
    const inv = driver.buildInvocation({
      profile: PiProfile.parse({ provider: 'pi' }),
      prompt: 'Fix',
      worktree,
    });
    expect(inv.args).toEqual(['--mode', 'json', '--', 'Fix']);
  });

  it('passes every option in the reference order, and resumes with --session', () => {
    const profile = PiProfile.parse({
      provider: 'pi',
      model_provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      effort: 'medium',
      tools: ['read', 'bash'],
      exclude_tools: ['write', 'edit'],
      approve: true,
    });
    expect(driver.buildInvocation({ profile, prompt: 'Fix', worktree, resumeSessionId: 'p-1' }).args).toEqual(
      [
        '--mode',
        'json',
        '--session',
        'p-1',
        '--provider',
        'anthropic',
        '--model',
        'claude-sonnet-4-5',
        '--thinking',
        'medium',
        '--tools',
        'read,bash',
        '--exclude-tools',
        'write,edit',
        '--approve',
        '--',
        'Fix',
      ],
    );
  });

  it('passes --no-approve when approve is false, and nothing when it is unset', () => {
    const off = PiProfile.parse({ provider: 'pi', approve: false });
    expect(driver.buildInvocation({ profile: off, prompt: 'x', worktree }).args).toEqual([
      '--mode',
      'json',
      '--no-approve',
      '--',
      'x',
    ]);
  });

  it('keeps a prompt starting with - as prompt text', () => {
    const inv = driver.buildInvocation({
      profile: PiProfile.parse({ provider: 'pi' }),
      prompt: '-h',
      worktree,
    });
    expect(inv.args.slice(-2)).toEqual(['--', '-h']);
  });

  it('rejects a profile of another provider', () => {
    const other = CursorProfile.parse({ provider: 'cursor' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'pi adapter cannot use cursor profile',
    );
  });
});
