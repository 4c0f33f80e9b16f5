import { describe, expect, it } from 'vitest';
import { PiProfile } from '../pi/schema.js';
import { createCodexDriver } from './index.js';
import { CodexProfile } from './schema.js';

const driver = createCodexDriver();
const worktree = '/w/tree';

describe('codex driver', () => {
  it('runs a bare profile as exec --json', () => {
    const inv = driver.buildInvocation({
      profile: CodexProfile.parse({ provider: 'codex' }),
      prompt: 'Fix',
      worktree,
    });
    expect(inv.args).toEqual(['exec', '--json', '--', 'Fix']);
  });

  it('passes every option in the reference order, config values JSON-quoted in one argument', () => {
    const profile = CodexProfile.parse({
      provider: 'codex',
      model: 'gpt-5-codex',
      agent: 'work',
      effort: 'high',
      sandbox: 'workspace-write',
      auto_review: true,
    });
    expect(driver.buildInvocation({ profile, prompt: 'Fix', worktree }).args).toEqual([
      'exec',
      '--model',
      'gpt-5-codex',
      '--profile',
      'work',
      '--config',
      'model_reasoning_effort="high"',
      '--sandbox',
      'workspace-write',
      '--config',
      'approval_policy="on-request"',
      '--config',
      'approvals_reviewer="auto_review"',
      '--json',
      '--',
      'Fix',
    ]);
  });

  it('resumes as exec resume <thread id>', () => {
    const profile = CodexProfile.parse({ provider: 'codex', model: 'gpt-5-codex' });
    const inv = driver.buildInvocation({
      profile,
      prompt: 'Continue',
      worktree,
      resumeSessionId: '0199-thread',
    });
    expect(inv.args).toEqual([
      'exec',
      'resume',
      '0199-thread',
      '--model',
      'gpt-5-codex',
      '--json',
      '--',
      'Continue',
    ]);
  });

  it('keeps a prompt starting with - as prompt text', () => {
    const inv = driver.buildInvocation({
      profile: CodexProfile.parse({ provider: 'codex' }),
      prompt: '--json',
      worktree,
    });
    expect(inv.args.slice(-2)).toEqual(['--', '--json']);
  });

  it('rejects a profile of another provider', () => {
    const other = PiProfile.parse({ provider: 'pi' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'codex adapter cannot use pi profile',
    );
  });
});
