/**
 * Hidden text never reaches a prompt. Every field written by strangers loses, before it is fenced,
 * what a person reading the rendered issue cannot see but a model reads:
 *
 * - `invisible`: zero-width characters (U+200B, U+2060–U+2064, U+FEFF, U+180E, Hangul fillers; a
 *   ZWJ/ZWNJ only where it is not joining emoji or a non-Latin script), Unicode tag characters
 *   (U+E0000–U+E007F, except the tag sequence of a subdivision flag) and variation selectors from
 *   the supplement (U+E0100–U+E01EF). Removed.
 * - `bidi`: embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). Made visible
 *   (`<U+202E>`), so the order the reader saw is the order the model reads.
 * - `html-comment`: `<!-- … -->` (and one left open to the end). Removed, a marker left.
 * - `markdown-comment`: `[//]: # (…)` lines and the like. Removed, a marker left.
 * - `hidden-html`: elements hidden with `display:none`, `visibility:hidden`, zero font size or
 *   opacity, or the `hidden` attribute. Removed, a marker left.
 *
 * Comments and hidden elements inside code (fenced blocks, inline code) render as text and stay.
 * Pure: text in, the cleaned text and what was removed out.
 */

export interface HiddenPart {
  kind: 'invisible' | 'bidi' | 'html-comment' | 'markdown-comment' | 'hidden-html';
  /** UTF-16 offset in the original text. */
  offset: number;
  /** The removed text, as it was. */
  text: string;
}

export interface Revealed {
  text: string;
  removed: HiddenPart[];
}

/** What replaces a removed comment or hidden element: the agent sees that something was there. */
export const HIDDEN_MARKER = '[hidden text removed]';

const REGIONS: Array<{ kind: HiddenPart['kind']; pattern: RegExp }> = [
  { kind: 'html-comment', pattern: /<!--[\s\S]*?(?:-->|$)/g },
  {
    kind: 'markdown-comment',
    pattern:
      /^[ \t]{0,3}\[(?:\/\/|comment|_|#|\s*)\]:\s*(?:#|<>|\/\/)\s*(?:\([^\n]*\)|"[^\n]*"|'[^\n]*')[ \t]*$/gim,
  },
  {
    kind: 'hidden-html',
    pattern:
      /<([a-z][\w-]*)\b[^>]*?(?:style\s*=\s*["'][^"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9]))[^"']*["']|\shidden(?:\s*=\s*["'][^"']*["'])?(?=[\s>/]))[^>]*>[\s\S]*?<\/\1\s*>/gi,
  },
];

const CHARS =
  /[\u200b-\u200d\u2060-\u2064\ufeff\u180e\u115f\u1160\u3164\uffa0\u202a-\u202e\u2066-\u2069]|[\u{e0000}-\u{e007f}]|[\u{e0100}-\u{e01ef}]/gu;
const BIDI = /^[\u202a-\u202e\u2066-\u2069]$/;
const SOFT_JOINER = /^[\u200c\u200d]$/;
const TAG = /^[\u{e0000}-\u{e007f}]$/u;
/** What a ZWJ or ZWNJ may legitimately join: emoji, marks, letters of scripts other than Latin. */
const JOINABLE = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{M}]|[^\P{L}\p{Script=Latin}]/u;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** [from, to) ranges of fenced blocks and inline code spans. */
function codeRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let open: string | undefined;
  let openAt = 0;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline < 0 ? text.length : newline;
    const fence = FENCE.exec(text.slice(lineStart, lineEnd));
    if (open === undefined && fence) {
      open = fence[1]!;
      openAt = lineStart;
    } else if (open !== undefined && fence && fence[1]![0] === open[0] && fence[1]!.length >= open.length) {
      ranges.push([openAt, lineEnd]);
      open = undefined;
    }
    if (newline < 0) break;
    lineStart = newline + 1;
  }
  if (open !== undefined) ranges.push([openAt, text.length]);
  for (const match of text.matchAll(/(`+)[^`]+?\1(?!`)/g)) {
    const at = match.index;
    if (!ranges.some(([from, to]) => at >= from && at < to)) ranges.push([at, at + match[0].length]);
  }
  return ranges;
}

function charBefore(text: string, index: number): string {
  const point = index > 1 && /[\udc00-\udfff]/.test(text[index - 1]!) ? index - 2 : index - 1;
  return point < 0 ? '' : String.fromCodePoint(text.codePointAt(point)!);
}

function label(char: string): string {
  return `<U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** True when the tag character at `index` belongs to a flag's tag sequence (🏴 + tags + U+E007F). */
function inFlag(text: string, index: number): boolean {
  let i = index;
  while (i >= 2 && TAG.test(String.fromCodePoint(text.codePointAt(i - 2)!))) i -= 2;
  return text.codePointAt(i - 2) === 0x1f3f4;
}

/** `text` without hidden regions and invisible characters (see the module comment). */
export function revealHidden(text: string): Revealed {
  const removed: HiddenPart[] = [];
  if (
    !/[<[\u200b-\u200d\u2060-\u2064\ufeff\u180e\u115f\u1160\u3164\uffa0\u202a-\u202e\u2066-\u2069\udb40]/.test(
      text,
    )
  )
    return { text, removed };
  // 1. Regions (outside code), replaced by the marker; later regions inside earlier ones are skipped.
  const code = text.includes('`') || text.includes('~~~') ? codeRanges(text) : [];
  const inCode = (at: number) => code.some(([from, to]) => at >= from && at < to);
  const cuts: Array<{ from: number; to: number; kind: HiddenPart['kind'] }> = [];
  for (const { kind, pattern } of REGIONS) {
    for (const match of text.matchAll(pattern)) {
      const from = match.index;
      const to = from + match[0].length;
      if (inCode(from) || cuts.some((c) => from < c.to && to > c.from)) continue;
      cuts.push({ from, to, kind });
    }
  }
  cuts.sort((a, b) => a.from - b.from);
  let out = '';
  let at = 0;
  const offsets: number[] = []; // out index → original index, for characters kept
  const keep = (from: number, to: number) => {
    for (let i = from; i < to; i++) offsets.push(i);
    out += text.slice(from, to);
  };
  for (const cut of cuts) {
    keep(at, cut.from);
    removed.push({ kind: cut.kind, offset: cut.from, text: text.slice(cut.from, cut.to) });
    for (let i = 0; i < HIDDEN_MARKER.length; i++) offsets.push(cut.from);
    out += HIDDEN_MARKER;
    at = cut.to;
  }
  keep(at, text.length);
  // 2. Characters, everywhere (code included: the model reads them there too).
  let result = '';
  let last = 0;
  for (const match of out.matchAll(CHARS)) {
    const char = match[0];
    const index = match.index;
    const original = offsets[index] ?? index;
    if (SOFT_JOINER.test(char)) {
      const before = charBefore(out, index);
      const after = out.slice(index + 1, index + 3);
      const next = after === '' ? '' : String.fromCodePoint(after.codePointAt(0)!);
      if (JOINABLE.test(before) || JOINABLE.test(next)) continue;
    }
    if (TAG.test(char) && inFlag(out, index)) continue;
    result += out.slice(last, index);
    last = index + char.length;
    if (BIDI.test(char)) {
      result += label(char);
      removed.push({ kind: 'bidi', offset: original, text: char });
      continue;
    }
    const previous = removed.at(-1);
    if (previous?.kind === 'invisible' && previous.offset + previous.text.length === original)
      previous.text += char;
    else removed.push({ kind: 'invisible', offset: original, text: char });
  }
  result += out.slice(last);
  removed.sort((a, b) => a.offset - b.offset);
  return { text: result, removed };
}
