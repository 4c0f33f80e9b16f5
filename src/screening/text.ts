/**
 * Text helpers for the scanners: which parts of a markdown field are code, and excerpts that show
 * invisible characters. Code is fenced blocks (``` or ~~~, closed or running to the end), inline code
 * spans (backtick runs of equal length) and HTML `<pre>` / `<code>` elements.
 */
import type { TextView } from './types.js';

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HTML_CODE = /<(pre|code)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const BACKTICKS = /`+/g;

/** Spaces for every character of `run` but its newlines. */
function blank(run: string): string {
  return run
    .split('\n')
    .map((line) => ' '.repeat(line.length))
    .join('\n');
}

/** Builds the view once per field; every scanner shares it. */
export function viewOf(text: string): TextView {
  const code = new Uint8Array(text.length);
  let hasCode = false;
  const mark = (from: number, to: number) => {
    if (to > from) hasCode = true;
    code.fill(1, from, to);
  };

  // Fenced blocks, line by line.
  let open: string | undefined;
  let openAt = 0;
  let lineStart = 0;
  const proseLines: Array<[number, number]> = [];
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline < 0 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    const fence = FENCE.exec(line);
    if (open === undefined) {
      if (fence) {
        open = fence[1]!;
        openAt = lineStart;
      } else proseLines.push([lineStart, lineEnd]);
    } else if (
      fence &&
      fence[1]![0] === open[0] &&
      fence[1]!.length >= open.length &&
      line.trim() === fence[1]
    ) {
      mark(openAt, lineEnd);
      open = undefined;
    }
    if (newline < 0) break;
    lineStart = newline + 1;
  }
  if (open !== undefined) mark(openAt, text.length);

  // Inline code inside prose paragraphs (a span never crosses a fenced block).
  let segment: [number, number] | undefined;
  const segments: Array<[number, number]> = [];
  for (const [from, to] of proseLines) {
    if (segment && segment[1] + 1 === from) segment[1] = to;
    else {
      if (segment) segments.push(segment);
      segment = [from, to];
    }
  }
  if (segment) segments.push(segment);
  for (const [from, to] of segments) {
    const part = text.slice(from, to);
    const runs = [...part.matchAll(BACKTICKS)];
    // next[i]: the next run with the same number of backticks (linear, so a text made of
    // thousands of lone backticks stays cheap).
    const next = new Array<number>(runs.length).fill(-1);
    const seen = new Map<number, number>();
    for (let i = runs.length - 1; i >= 0; i--) {
      const length = runs[i]![0].length;
      next[i] = seen.get(length) ?? -1;
      seen.set(length, i);
    }
    for (let i = 0; i < runs.length; i++) {
      const run = runs[i]!;
      const closing = next[i]!;
      if (closing < 0) continue;
      const end = runs[closing]!;
      mark(from + run.index, from + end.index + end[0].length);
      i = closing;
    }
  }

  for (const match of text.matchAll(HTML_CODE)) mark(match.index, match.index + match[0].length);

  let prose = text;
  if (hasCode) {
    // Copy runs of prose as slices; blank runs of code (newlines kept).
    const parts: string[] = [];
    let i = 0;
    while (i < text.length) {
      const inCode = code[i] === 1;
      let j = i + 1;
      while (j < text.length && (code[j] === 1) === inCode) j += 1;
      const run = text.slice(i, j);
      parts.push(inCode ? blank(run) : run);
      i = j;
    }
    prose = parts.join('');
  }
  return {
    text,
    prose,
    hasCode,
    inCode: (offset) => code[offset] === 1,
  };
}

/** Characters that render as nothing (or reorder text): shown as `<U+XXXX>` in excerpts. */
const INVISIBLE =
  /[\p{Cf}\p{Cc}\u115f\u1160\u3164\uffa0\u2028\u2029]|[\u{e0100}-\u{e01ef}]|[\u034f\ufe00-\ufe0f]/u;

function codePointLabel(char: string): string {
  return `<U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** `text` with every invisible or control character written as `<U+XXXX>` (newlines as `⏎`). */
export function makeVisible(text: string): string {
  let out = '';
  for (const char of text) {
    if (char === '\n') out += '⏎';
    else if (char === '\t' || char === '\r') out += ' ';
    else out += INVISIBLE.test(char) ? codePointLabel(char) : char;
  }
  return out;
}

export const EXCERPT_LIMIT = 120;
const LEAD = 30;

/**
 * About 120 characters around `text[offset, offset + length)`, starting up to 30 characters before
 * the match, invisible characters made visible, cut with `…` on either side.
 */
export function excerptOf(text: string, offset: number, length: number): string {
  let start = Math.max(0, offset - LEAD);
  // Do not start in the middle of a surrogate pair.
  if (start > 0 && /[\udc00-\udfff]/.test(text[start]!)) start -= 1;
  let out = start > 0 ? '…' : '';
  let i = start;
  const wanted = Math.max(offset + length, start + 1);
  for (const char of text.slice(start)) {
    if (out.length >= EXCERPT_LIMIT && i >= wanted) break;
    if (out.length >= EXCERPT_LIMIT + 40) break;
    out += makeVisible(char);
    i += char.length;
  }
  if (i < text.length) out += '…';
  return out;
}

/** Latin look-alikes from Cyrillic and Greek (the common confusables), by character. */
const CONFUSABLES: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  һ: 'h',
  ӏ: 'l',
  ԛ: 'q',
  ԝ: 'w',
  ɡ: 'g',
  ı: 'i',
  А: 'A',
  В: 'B',
  Е: 'E',
  К: 'K',
  М: 'M',
  Н: 'H',
  О: 'O',
  Р: 'P',
  С: 'C',
  Т: 'T',
  У: 'Y',
  Х: 'X',
  І: 'I',
  Ј: 'J',
  Ѕ: 'S',
  Ԁ: 'D',
  Ԛ: 'Q',
  Ԝ: 'W',
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  Α: 'A',
  Β: 'B',
  Ε: 'E',
  Ζ: 'Z',
  Η: 'H',
  Ι: 'I',
  Κ: 'K',
  Μ: 'M',
  Ν: 'N',
  Ο: 'O',
  Ρ: 'P',
  Τ: 'T',
  Υ: 'Y',
  Χ: 'X',
};
const CONFUSABLE_CHAR = new RegExp(`[${Object.keys(CONFUSABLES).join('')}]`, 'u');

/**
 * `text` as a reader sees it, for matching: NFKC (fullwidth and styled letters to plain ones),
 * zero-width characters dropped, tag characters read as the ASCII they spell, look-alike letters
 * in a word that mixes scripts turned into Latin ones, and runs of URL escapes decoded. Offsets
 * do not match `text`'s; findings on it point at the field.
 */
export function normalised(text: string): string {
  let out = text.normalize('NFKC');
  const latin = (out.match(/[A-Za-z]/g) ?? []).length;
  const other = (out.match(/[\p{Script=Cyrillic}\p{Script=Greek}]/gu) ?? []).length;
  out = out.replace(/[\u200b-\u200d\u2060-\u2064\ufeff\u180e\u00ad]/g, '');
  out = out.replace(/[\u{e0020}-\u{e007e}]/gu, (c) => String.fromCharCode(c.codePointAt(0)! - 0xe0000));
  out = out.replace(/[\p{L}\p{M}]+/gu, (word) =>
    CONFUSABLE_CHAR.test(word) &&
    (/[A-Za-z]/.test(word) || (latin > other && [...word].every((c) => CONFUSABLES[c] !== undefined)))
      ? [...word].map((c) => CONFUSABLES[c] ?? c).join('')
      : word,
  );
  out = out.replace(/[^\s%]*(?:%[0-9A-Fa-f]{2}[^\s%]*){3,}/g, (run) => {
    try {
      return decodeURIComponent(run.replace(/\+/g, ' '));
    } catch {
      return run;
    }
  });
  return out;
}
