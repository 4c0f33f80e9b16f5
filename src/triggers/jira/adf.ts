/**
 * curupira's result text as an Atlassian Document (Jira Cloud's comment format). The text is the
 * small Markdown every result comment uses (src/coordination/run-writes.ts): a bold line, `- `
 * items, `**bold**`, `` `code` `` spans (ticks never inside one) and bare links. Jira shows none of
 * that Markdown: sent as plain paragraphs, a comment read `**curupira** run \`r_…\`` with its
 * asterisks and ticks. Here each becomes the document's own node or mark: a bullet list, the
 * `strong` and `code` marks, a `link` mark on a URL outside a code span.
 */

interface AdfMark {
  type: 'strong' | 'code' | 'link';
  attrs?: { href: string };
}

interface AdfText {
  type: 'text';
  text: string;
  marks?: AdfMark[];
}

interface AdfBlock {
  type: 'paragraph' | 'bulletList' | 'listItem';
  content: (AdfBlock | AdfText)[];
}

export interface AdfDocument {
  type: 'doc';
  version: 1;
  content: AdfBlock[];
}

const INLINE = /`([^`\n]+)`|\*\*([^*\n]+)\*\*/g;
const URL = /https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/g;

/** Plain text with its URLs as links. */
function linked(text: string, marks: AdfMark[] = []): AdfText[] {
  const out: AdfText[] = [];
  let at = 0;
  for (const match of text.matchAll(URL)) {
    if (match.index > at) out.push(leaf(text.slice(at, match.index), marks));
    out.push(leaf(match[0], [...marks, { type: 'link', attrs: { href: match[0] } }]));
    at = match.index + match[0].length;
  }
  if (at < text.length) out.push(leaf(text.slice(at), marks));
  return out;
}

function leaf(text: string, marks: AdfMark[]): AdfText {
  return marks.length > 0 ? { type: 'text', text, marks } : { type: 'text', text };
}

/** One line's inline content: code spans (literal), bold runs, links. */
export function inline(line: string): AdfText[] {
  const out: AdfText[] = [];
  let at = 0;
  for (const match of line.matchAll(INLINE)) {
    if (match.index > at) out.push(...linked(line.slice(at, match.index)));
    if (match[1] !== undefined) out.push(leaf(match[1], [{ type: 'code' }]));
    else out.push(...linked(match[2]!, [{ type: 'strong' }]));
    at = match.index + match[0].length;
  }
  if (at < line.length) out.push(...linked(line.slice(at)));
  return out;
}

/** The text as a document: a paragraph per line, consecutive `- ` lines one bullet list; blank lines separate. */
export function markdownToAdf(text: string): AdfDocument {
  const content: AdfBlock[] = [];
  let list: AdfBlock | undefined;
  for (const line of text.split('\n')) {
    const item = /^\s*[-*] (.*)$/.exec(line);
    if (item) {
      if (!list) {
        list = { type: 'bulletList', content: [] };
        content.push(list);
      }
      list.content.push({ type: 'listItem', content: [{ type: 'paragraph', content: inline(item[1]!) }] });
      continue;
    }
    list = undefined;
    if (line.trim() === '') continue;
    content.push({ type: 'paragraph', content: inline(line) });
  }
  return { type: 'doc', version: 1, content };
}
