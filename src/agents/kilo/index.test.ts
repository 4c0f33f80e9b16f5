import { describe, expect, it } from 'vitest';
import { OpenCodeProfile } from '../opencode/schema.js';
import { createKiloDriver } from './index.js';
import { KiloProfile } from './schema.js';

const driver = createKiloDriver();
const worktree = '/w/tree';

describe('kilo driver', () => {
  it('runs a bare profile headless', () => {
    const inv = driver.buildInvocation({
      profile: KiloProfile.parse({ provider: 'kilo' }),
      prompt: 'Fix',
      worktree,
    });
    expect(inv.args).toEqual(['run', '--format', 'json', '--', 'Fix']);
    expect(inv.env).toEqual({});
  });

  it('passes every option in the reference order, and resumes with --session', () => {
    const profile = KiloProfile.parse({
      provider: 'kilo',
      model: 'anthropic/claude-sonnet-4-5',
      agent: 'code',
      effort: 'high',
      auto_approve: true,
    });
    expect(
      driver.buildInvocation({ profile, prompt: 'Fix', worktree, resumeSessionId: 'ses_k1' }).args,
    ).toEqual([
      'run',
      '--format',
      'json',
      '--session',
      'ses_k1',
      '--model',
      'anthropic/claude-sonnet-4-5',
      '--agent',
      'code',
      '--variant',
      'high',
      '--auto',
      '--',
      'Fix',
    ]);
  });

  it('keeps a prompt starting with - as prompt text', () => {
    const inv = driver.buildInvocation({
      profile: KiloProfile.parse({ provider: 'kilo' }),
      prompt: '-v',
      worktree,
    });
    expect(inv.args.slice(-2)).toEqual(['--', '-v']);
  });

  it('rejects a profile of another provider', () => {
    const other = OpenCodeProfile.parse({ provider: 'opencode' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'kilo adapter cannot use opencode profile',
    );
  });
});
