/**
 * invisible-characters: characters a reader cannot see but a model reads.
 *
 * - `tag-smuggling` (critical): Unicode tag characters (U+E0000–U+E007F) outside a valid emoji tag
 *   sequence. They spell hidden ASCII. A subdivision flag (🏴 U+1F3F4, tag letters/digits, U+E007F
 *   cancel tag — England, Scotland, Wales) is allowed.
 * - `variation-selector-run` (critical): four or more supplementary variation selectors
 *   (U+E0100–U+E01EF) or basic selectors not after an emoji-capable character, in a row: bytes
 *   smuggled as selectors.
 * - `bidi-override` (high): U+202D / U+202E (LRO, RLO) anywhere; embeddings and isolates
 *   (U+202A–U+202C, U+2066–U+2069) on a line with no right-to-left letters, or left unbalanced
 *   (the "Trojan Source" trick). Correct Arabic and Hebrew text, which needs none of these or uses
 *   balanced isolates, and the marks U+200E/U+200F/U+061C, are allowed.
 * - `zero-width-word-split` (high): a zero-width character between two Latin letters or digits,
 *   which hides words from filters ("ig<U+200B>nore").
 * - `zero-width-run` (critical): four or more zero-width characters in a row (binary encoding).
 * - `zero-width` (low): any other zero-width space, word joiner, BOM after the start, invisible
 *   operator, Hangul filler. ZWJ and ZWNJ between emoji or non-Latin letters (emoji sequences,
 *   Persian, Indic scripts) are allowed.
 *
 * Context: counts everywhere, code included — an invisible character in a code block is read by the
 * model just the same.
 */
import type { Hit, Scanner, TextView } from '../types.js';

const CANDIDATE =
  /(?:[\u200b-\u200d\u2060-\u2064\ufeff\u180e\u202a-\u202e\u2066-\u2069\u115f\u1160\u3164\uffa0\u{e0000}-\u{e007f}]|[\u{e0100}-\u{e01ef}]|[\ufe00-\ufe0f])+/gu;
const TAG = /^[\u{e0000}-\u{e007f}]$/u;
const FLAG_BODY = /^[\u{e0030}-\u{e0039}\u{e0061}-\u{e007a}]{1,6}\u{e007f}/u;
const LATIN_OR_DIGIT = /[\p{Script=Latin}\p{Nd}]/u;
const JOINABLE = /[\p{Extended_Pictographic}\p{Emoji_Modifier}]|\p{M}|[^\P{L}\p{Script=Latin}]/u;
const EMOJI_BASE = /[\p{Emoji}\p{Extended_Pictographic}]/u;
const RTL_LETTER = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const ZERO_WIDTH_SOFT = /^[\u200c\u200d]$/;

function charBefore(text: string, index: number): string {
  if (index <= 0) return '';
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) return text.slice(index - 2, index);
  return text[index - 1]!;
}

function charAt(text: string, index: number): string {
  const point = text.codePointAt(index);
  return point === undefined ? '' : String.fromCodePoint(point);
}

function lineAround(text: string, index: number): string {
  const start = text.lastIndexOf('\n', index) + 1;
  const end = text.indexOf('\n', index);
  return text.slice(start, end < 0 ? text.length : end);
}

function scanTags(text: string, run: string, at: number, hits: Hit[]): void {
  // Walk the run: skip valid flag bodies that follow U+1F3F4, report the rest as one hit.
  let i = 0;
  let badFrom = -1;
  let badLength = 0;
  while (i < run.length) {
    const char = charAt(run, i);
    if (TAG.test(char)) {
      const previous = i === 0 ? charBefore(text, at) : charBefore(run, i);
      const flag = previous === '\u{1f3f4}' ? FLAG_BODY.exec(run.slice(i)) : null;
      if (flag) {
        i += flag[0].length;
        continue;
      }
      if (badFrom < 0) badFrom = i;
      badLength = i + char.length - badFrom;
    }
    i += char.length;
  }
  if (badFrom >= 0)
    hits.push({ rule: 'tag-smuggling', severity: 'critical', offset: at + badFrom, length: badLength });
}

function scanBidi(text: string, char: string, at: number, hits: Hit[], counts: { open: number }): void {
  if (char === '\u202d' || char === '\u202e') {
    hits.push({ rule: 'bidi-override', severity: 'high', offset: at, length: 1 });
    return;
  }
  if (char === '\u202c' || char === '\u2069') counts.open -= 1;
  else counts.open += 1;
  if (!RTL_LETTER.test(lineAround(text, at)))
    hits.push({ rule: 'bidi-override', severity: 'high', offset: at, length: 1 });
}

function scan(view: TextView): Hit[] {
  const { text } = view;
  const hits: Hit[] = [];
  const bidi = { open: 0 };
  let lastBidi = -1;
  for (const match of text.matchAll(CANDIDATE)) {
    const run = match[0];
    const at = match.index;
    if (/[\u{e0000}-\u{e007f}]/u.test(run)) scanTags(text, run, at, hits);
    const before = charBefore(text, at);
    const after = charAt(text, at + run.length);
    let zeroWidth = 0;
    let selectors = 0;
    let soft = 0;
    for (let i = 0; i < run.length; ) {
      const char = charAt(run, i);
      const code = char.codePointAt(0)!;
      if ((code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)) {
        scanBidi(text, char, at + i, hits, bidi);
        lastBidi = at + i;
      } else if (code >= 0xe0100 || (code >= 0xfe00 && code <= 0xfe0f)) selectors += 1;
      else if (code === 0xfeff && at + i === 0) {
        // A byte-order mark at the very start is an encoding artefact.
      } else if (ZERO_WIDTH_SOFT.test(char)) soft += 1;
      else if (code < 0xe0000) zeroWidth += 1;
      i += char.length;
    }
    const hidden = zeroWidth + soft;
    if (selectors >= 4)
      hits.push({ rule: 'variation-selector-run', severity: 'critical', offset: at, length: run.length });
    else if (selectors > 0 && !EMOJI_BASE.test(before))
      hits.push({ rule: 'variation-selector-run', severity: 'low', offset: at, length: run.length });
    if (hidden === 0) continue;
    const splitsWord = LATIN_OR_DIGIT.test(before) && LATIN_OR_DIGIT.test(after);
    if (hidden >= 4)
      hits.push({ rule: 'zero-width-run', severity: 'critical', offset: at, length: run.length });
    else if (splitsWord)
      hits.push({ rule: 'zero-width-word-split', severity: 'high', offset: at, length: run.length });
    else if (zeroWidth > 0 || !(JOINABLE.test(before) || JOINABLE.test(after)))
      hits.push({ rule: 'zero-width', severity: 'low', offset: at, length: run.length });
  }
  if (bidi.open > 0 && lastBidi >= 0 && !hits.some((hit) => hit.rule === 'bidi-override'))
    hits.push({ rule: 'bidi-override', severity: 'high', offset: lastBidi, length: 1 });
  return hits;
}

export const invisibleCharacters: Scanner = {
  id: 'invisible-characters',
  summary: 'zero-width characters, Unicode tag smuggling, bidi overrides and variation-selector runs',
  scan,
};
