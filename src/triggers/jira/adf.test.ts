import { describe, expect, it } from 'vitest';
import { adfProblem } from '../../simulator/jira-stand-in.js';
import { markdownToAdf } from './adf.js';

describe('a result as an Atlassian Document', () => {
  const result = [
    '**curupira** run `r_1` of automation `fix`: **failed**',
    '',
    '- Reason: `the agent said **stop** at https://example.com/x`',
    '- Pull requests: acme/api#2 https://github.com/acme/api/pull/2, acme/web#3 https://github.com/acme/web/pull/3.',
    '- Tokens: 10 in, 2 out',
  ].join('\n');

  it('turns bold, code spans, items and links into marks and a list, with no Markdown left', () => {
    const doc = markdownToAdf(result);
    expect(doc.content.map((b) => b.type)).toEqual(['paragraph', 'bulletList']);
    expect(doc.content[0]!.content).toEqual([
      { type: 'text', text: 'curupira', marks: [{ type: 'strong' }] },
      { type: 'text', text: ' run ' },
      { type: 'text', text: 'r_1', marks: [{ type: 'code' }] },
      { type: 'text', text: ' of automation ' },
      { type: 'text', text: 'fix', marks: [{ type: 'code' }] },
      { type: 'text', text: ': ' },
      { type: 'text', text: 'failed', marks: [{ type: 'strong' }] },
    ]);
    const items = doc.content[1]!.content as {
      content: { content: { text: string; marks?: unknown[] }[] }[];
    }[];
    expect(items).toHaveLength(3);
    // A code span is literal: the asterisks and the address inside it stay as they are, unlinked.
    expect(items[0]!.content[0]!.content).toEqual([
      { type: 'text', text: 'Reason: ' },
      { type: 'text', text: 'the agent said **stop** at https://example.com/x', marks: [{ type: 'code' }] },
    ]);
    // Outside one, an address is a link (without the punctuation that ends the sentence).
    expect(items[1]!.content[0]!.content).toContainEqual({
      type: 'text',
      text: 'https://github.com/acme/web/pull/3',
      marks: [{ type: 'link', attrs: { href: 'https://github.com/acme/web/pull/3' } }],
    });
    expect(items[1]!.content[0]!.content.at(-1)).toEqual({ type: 'text', text: '.' });
    expect(JSON.stringify(doc)).not.toContain('`');
  });

  it('is a document Jira takes, which the stand-in checks by the format’s rules', () => {
    expect(adfProblem(markdownToAdf(result))).toBeUndefined();
    expect(adfProblem(markdownToAdf(''))).toBeUndefined();
    // The checks can fail: what Jira refuses, the stand-in refuses.
    expect(adfProblem({ type: 'doc', version: 1, content: [{ type: 'text', text: 'x' }] })).toContain(
      'text is not allowed in doc',
    );
    expect(
      adfProblem({
        type: 'doc',
        version: 1,
        content: [
          {
            type: 'paragraph',
            content: [{ type: 'text', text: 'x', marks: [{ type: 'code' }, { type: 'strong' }] }],
          },
        ],
      }),
    ).toContain('code combines only with link');
    expect(
      adfProblem({
        type: 'doc',
        version: 1,
        content: [{ type: 'paragraph', content: [{ type: 'text', text: '' }] }],
      }),
    ).toContain('needs text');
    expect(adfProblem({ type: 'doc', version: 1, content: [{ type: 'bulletList', content: [] }] })).toContain(
      'needs items',
    );
  });
});
