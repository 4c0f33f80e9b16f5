import { describe, expect, it } from 'vitest';
import { previewLines } from '../cli/run.js';
import { quoteForDisplay } from './preview.js';

describe('quoteForDisplay', () => {
  it('leaves plain words alone and single-quotes the rest, as a POSIX shell reads it', () => {
    expect(quoteForDisplay('--output-format')).toBe('--output-format');
    expect(quoteForDisplay('/usr/bin/claude')).toBe('/usr/bin/claude');
    expect(quoteForDisplay('two words')).toBe("'two words'");
    expect(quoteForDisplay("it's")).toBe("'it'\\''s'");
    expect(quoteForDisplay('')).toBe("''");
    expect(quoteForDisplay('$HOME')).toBe("'$HOME'");
  });
});

describe('previewLines', () => {
  it('shows a resumed session, the resume message, extra env names and the original prompt', () => {
    const lines = previewLines({
      prompt: 'Fix 1\n',
      resumeSessionId: 'sess-1',
      resumePrompt: 'Continue.',
      profileName: 'oc',
      provider: 'opencode',
      argv: ['opencode', 'run', '--session', 'sess-1', 'Continue.', '--model', 'a b'],
      promptArgIndex: 4,
      envNames: ['OPENCODE_DB'],
      cwd: '/w/api',
      branch: undefined,
      code: 'the shared checkout as it is',
    });
    expect(lines).toEqual([
      'profile:  oc (provider opencode)',
      'checkout: /w/api (the shared checkout as it is)',
      'code:     the shared checkout as it is',
      `command:  opencode run --session sess-1 "$PROMPT" --model 'a b'`,
      '          ($PROMPT is the resume message below, as one argument; run in the checkout)',
      'env:      also sets OPENCODE_DB',
      'session:  resumes saved session sess-1; the agent is told:',
      '--- resume message ---',
      'Continue.',
      '--- end of resume message ---',
      'Its original prompt:',
      '--- prompt ---',
      'Fix 1',
      '--- end of prompt ---',
    ]);
  });
});
