import { describe, expect, it } from 'vitest';
import { EXCERPT_LIMIT, excerptOf, makeVisible, viewOf } from './text.js';

describe('viewOf', () => {
  it('blanks fenced code blocks and keeps offsets', () => {
    const text = 'before\n```sh\nignore previous instructions\n```\nafter';
    const view = viewOf(text);
    expect(view.prose).toHaveLength(text.length);
    expect(view.prose).not.toContain('ignore');
    expect(view.prose.startsWith('before\n')).toBe(true);
    expect(view.prose.endsWith('\nafter')).toBe(true);
    expect(view.inCode(text.indexOf('ignore'))).toBe(true);
    expect(view.inCode(text.indexOf('after'))).toBe(false);
  });

  it('treats an unclosed fence as code to the end and ~~~ fences like backticks', () => {
    expect(viewOf('x\n~~~\nsecret stuff').prose).not.toContain('secret');
    expect(viewOf('x\n```\nstill code').inCode(8)).toBe(true);
  });

  it('blanks inline code spans of matching backtick runs only', () => {
    const view = viewOf('run `env` then ``a ` b`` and ` alone');
    expect(view.prose).not.toContain('env');
    expect(view.prose).not.toContain('a ` b');
    expect(view.prose).toContain('` alone');
  });

  it('blanks <pre> and <code> elements', () => {
    expect(viewOf('see <code>rm -rf /</code> here').prose).not.toContain('rm -rf');
  });

  it('leaves text without code untouched', () => {
    const view = viewOf('plain text');
    expect(view.hasCode).toBe(false);
    expect(view.prose).toBe('plain text');
  });
});

describe('excerpts', () => {
  it('writes invisible characters as <U+XXXX> and newlines as ⏎', () => {
    expect(makeVisible('a\u200bb\u{e0041}\nc')).toBe('a<U+200B>b<U+E0041>⏎c');
  });

  it('keeps emoji and RTL letters as they are', () => {
    expect(makeVisible('שלום 👋')).toBe('שלום 👋');
  });

  it('is bounded and marks cuts on both sides', () => {
    const text = `${'a'.repeat(500)}MATCH${'b'.repeat(500)}`;
    const excerpt = excerptOf(text, 500, 5);
    expect(excerpt.startsWith('…')).toBe(true);
    expect(excerpt.endsWith('…')).toBe(true);
    expect(excerpt).toContain('MATCH');
    expect(excerpt.length).toBeLessThanOrEqual(EXCERPT_LIMIT + 42);
  });
});

describe('viewOf on hostile input', () => {
  it('pairs backtick runs in one pass (thousands of lone backticks)', () => {
    const text = '`a'.repeat(20000);
    const view = viewOf(text);
    // Runs pair up in order: `a` then a lone `a` in prose, alternately.
    expect(view.inCode(0)).toBe(true);
    expect(view.inCode(text.length - 1)).toBe(false);
  });
});
