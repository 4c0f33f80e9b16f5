import { describe, expect, it } from 'vitest';
import { oneLineReason } from './executor.js';

describe('oneLineReason', () => {
  it('puts the line that says what went wrong first, then the last lines, on one line', () => {
    const stderr = [
      "error: unexpected argument '--sandbox' found",
      '',
      "  tip: to pass '--sandbox' as a value, use '-- --sandbox'",
      'Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]',
      "For more information, try '--help'.",
    ].join('\n');
    expect(oneLineReason(stderr)).toBe(
      "error: unexpected argument '--sandbox' found | Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT] | For more information, try '--help'.",
    );
  });

  it('keeps the last lines when no line names an error, and cuts at the limit', () => {
    expect(oneLineReason('a\nb\nc\nd')).toBe('b | c | d');
    expect(oneLineReason(`fatal: ${'x'.repeat(600)}`, 50)).toHaveLength(50);
    expect(oneLineReason('  single line  ')).toBe('single line');
  });
});
