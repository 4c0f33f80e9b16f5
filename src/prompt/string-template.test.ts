import { describe, expect, it } from 'vitest';
import { PromptRenderError } from '../core/errors.js';
import { analyzeStringTemplate, renderStringTemplate } from './string-template.js';

describe('analyzeStringTemplate', () => {
  it('finds braced and bare placeholders, each once, in first-seen order', () => {
    const analysis = analyzeStringTemplate(
      'Resolve issue ${issue_number}: $issue_title\n\n${issue_body} #$issue_number',
    );
    expect(analysis).toEqual({ valid: true, identifiers: ['issue_number', 'issue_title', 'issue_body'] });
  });

  it('takes the longest identifier after a bare $', () => {
    expect(analyzeStringTemplate('$repo-name $a1_b2.c').identifiers).toEqual(['repo', 'a1_b2']);
  });

  it('stops a name at the first non-ASCII letter, as Python does', () => {
    expect(analyzeStringTemplate('$ação')).toEqual({ valid: true, identifiers: ['a'] });
  });

  it('keeps the case of identifiers and accepts upper case', () => {
    expect(analyzeStringTemplate('$Repo ${_X9}').identifiers).toEqual(['Repo', '_X9']);
  });

  it('treats $$ as a literal dollar, not a placeholder', () => {
    expect(analyzeStringTemplate('costs $$5 and $${name}')).toEqual({ valid: true, identifiers: [] });
  });

  it('a template without placeholders is valid', () => {
    expect(analyzeStringTemplate('Just do it.')).toEqual({ valid: true, identifiers: [] });
  });

  // Positions are checked against Python 3's string.Template error messages.
  it.each([
    ['a lone $', 'pay $ now', { line: 1, column: 5 }],
    ['a trailing $', 'costs 5$', { line: 1, column: 8 }],
    ['only a $', '$', { line: 1, column: 1 }],
    ['a braced name with a dash', '${a-b}', { line: 1, column: 1 }],
    ['empty braces', 'x ${}', { line: 1, column: 3 }],
    ['spaces inside braces', '${ name }', { line: 1, column: 1 }],
    ['an unclosed brace', '${name', { line: 1, column: 1 }],
    ['a digit after $', 'a$1', { line: 1, column: 2 }],
    ['a non-ASCII letter after $', 'x $ção', { line: 1, column: 3 }],
    ['on a later line', 'first\nsecond $', { line: 2, column: 8 }],
    ['after CRLF line ends', 'x\r\ny $', { line: 2, column: 3 }],
    ['after a vertical tab, which Python counts as a line break', 'a\u000bb$', { line: 2, column: 2 }],
    ['after characters outside the BMP, counted as one column each', '😀$x$', { line: 1, column: 4 }],
  ])('%s is invalid', (_name, template, position) => {
    const analysis = analyzeStringTemplate(template);
    expect(analysis.valid).toBe(false);
    expect(analysis.invalidAt).toEqual(position);
  });

  it('still lists the valid placeholders of an invalid template', () => {
    expect(analyzeStringTemplate('$a $ ${b}')).toEqual({
      valid: false,
      identifiers: ['a', 'b'],
      invalidAt: { line: 1, column: 4 },
    });
  });
});

describe('renderStringTemplate', () => {
  const values = { issue_number: '12', issue_title: 'Crash', issue_body: 'It crashes.' };

  it('substitutes braced and bare placeholders', () => {
    expect(renderStringTemplate('Resolve issue ${issue_number}: $issue_title\n\n${issue_body}', values)).toBe(
      'Resolve issue 12: Crash\n\nIt crashes.',
    );
  });

  it('turns $$ into $ and does not substitute after it', () => {
    expect(renderStringTemplate('$$issue_number costs $$5 ($$)', values)).toBe('$issue_number costs $5 ($)');
  });

  it('ends a bare name at the first character that cannot be part of it', () => {
    expect(renderStringTemplate('#$issue_number.', values)).toBe('#12.');
    expect(renderStringTemplate('${issue_number}th', values)).toBe('12th');
  });

  it('does not re-expand placeholders inside substituted values', () => {
    expect(renderStringTemplate('$a', { a: '${b} $$', b: 'no' })).toBe('${b} $$');
  });

  it('leaves text without $ untouched', () => {
    expect(renderStringTemplate('{{ not jinja }} 100%', {})).toBe('{{ not jinja }} 100%');
  });

  it('fails on an invalid placeholder with the position Python reports', () => {
    expect(() => renderStringTemplate('ok\nbad ${a-b}', { a: 'x' })).toThrow(
      new PromptRenderError('Invalid placeholder in string: line 2, col 5'),
    );
  });

  it('fails on a trailing $', () => {
    expect(() => renderStringTemplate('costs 5$', {})).toThrow(
      'Invalid placeholder in string: line 1, col 8',
    );
  });

  it('fails on a placeholder without a value, naming it', () => {
    const render = () => renderStringTemplate('${issue_number} ${issue_url}', values);
    expect(render).toThrow(PromptRenderError);
    expect(render).toThrow("no value for placeholder 'issue_url'");
  });

  it('reports whichever problem comes first, as Python does', () => {
    expect(() => renderStringTemplate('$missing $', {})).toThrow("no value for placeholder 'missing'");
    expect(() => renderStringTemplate('$ $missing', {})).toThrow('Invalid placeholder');
  });

  it('does not take inherited object properties as values', () => {
    expect(() => renderStringTemplate('$toString', {})).toThrow("no value for placeholder 'toString'");
  });
});
