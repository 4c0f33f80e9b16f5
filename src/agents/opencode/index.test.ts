import { describe, expect, it } from 'vitest';
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

describe('opencode driver', () => {
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
});
