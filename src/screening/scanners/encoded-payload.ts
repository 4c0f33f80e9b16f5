/**
 * encoded-payload: instructions hidden in an encoding, and requests to decode something and act on
 * it.
 *
 * - `decoded-instructions` (critical): a base64 or hex blob (or the rot13 reading of a line) that
 *   decodes to an override, exfiltration, credential request, role token or config change.
 * - `decode-and-follow` (high): "decode … and follow / execute / run it" (in the screened languages)
 *   next to a blob that decodes to readable text, or naming rot13; medium when the only blobs decode
 *   to binary (a "decode this fixture and run it through the parser" bug report).
 * - `decode-to-shell` (high): `base64 -d | sh`, `eval(atob(…))`, `exec(base64.b64decode(…))`.
 *
 * Context: blobs are decoded everywhere (a payload in a code block is still read); a decoded
 * payload inside code in a field that discusses an attack (a security report) is medium. The
 * wording rules read prose only. `decode-to-shell` is high in code too (commands to run are
 * written in code); low in code and medium in prose when the field discusses an attack. A
 * plain base64 fixture (an image, a gzip stream, random bytes) is never reported.
 */
import { DISCUSSION_CUE } from '../lexicon.js';
import type { Hit, Scanner, Severity, TextView } from '../types.js';
import { instructionSignal } from './signals.js';

const BASE64 =
  /(?<![A-Za-z0-9+/=_-])(?:[A-Za-z0-9+/]{4}){4,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{0,3})(?![A-Za-z0-9+/=_-])/gu;
const HEX = /(?:\\x[0-9a-fA-F]{2}){10,}|(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}[ :]?){20,}(?![0-9a-fA-F])/gu;
const DECODE =
  /\b(?:decode[ds]?|decoding|b64decode|base64\s+-d|atob|unhex|from\s+(?:hex|base64)|rot-?13|de-?obfuscate|reverse\s+the\s+encoding|translate\s+the\s+(?:base64|hex))\b|decodifica|decodifique|decodificar|descodifica|décode|décodez|décoder|decode-le|dekodiere|dekodieren|entschlüssle|entschlüsseln|декодируй|декодируйте|расшифруй|расшифруйте|解码|解碼|译码|デコード|復号/iu;
const FOLLOW =
  /\b(?:follow|execute|run|obey|carry\s+out|perform|do|apply|act\s+on|comply\s+with|implement)\s+(?:it|them|that|this|those|the\s+(?:instructions?|commands?|steps|result|output|decoded\s+\w+|contents?|text|message|payload)|what(?:ever)?\s+it\s+says|exactly|as\s+instructed)\b|\b(?:execute|run|follow|obey)\s+(?:the\s+)?decoded\b|\b(?:sigue|síguelas|siguelas|ejecuta|ejecútalo|ejecutalo|ejecútalas|obedece|haz\s+lo\s+que\s+dice|siga|execute-o|execute-as|obedeça|faça\s+o\s+que\s+diz|suivez|suis-les|suis|exécutez|exécute|exécute-le|obéis|obéissez|fais\s+ce\s+qu'il\s+dit|befolge|befolgen|führe\s+(?:sie|es|das|den\s+Befehl|die\s+Befehle)\s+aus|ausführen|folge)\b|(?<!\p{L})(?:выполни|выполните|следуй|следуйте|исполни|исполните|сделай\s+то,?\s+что)(?!\p{L})|执行|照做|遵循|遵照|按照.{0,6}(?:做|执行)|実行|従って|従え|その通りに/iu;
const LETTERS = /[a-z]{4}/i;
const TO_SHELL_GATE = /base64|xxd|eval|exec|FromBase64|iex|Invoke-Expression/i;
const DECODE_GATE =
  /decod|b64|base64|atob|unhex|hex|rot-?13|obfusc|encoding|dekod|entschl|декод|расшифр|解码|解碼|译码|デコード|復号/i;
const DECODE_ALL = new RegExp(DECODE.source, 'giu');
const ROT13_NAME = /\brot-?13\b/iu;
const TO_SHELL =
  /\bbase64\s+(?:-d|--decode|-D)\b[^\n|]{0,80}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\bxxd\s+-r[^\n|]{0,60}\|\s*(?:ba)?sh\b|\beval\s*\(\s*(?:atob|Buffer\.from|unescape)\s*\(|\bexec\s*\(\s*(?:base64\.b64decode|bytes\.fromhex|codecs\.decode)\s*\(|\bFromBase64String\b[^\n]{0,80}\b(?:iex|Invoke-Expression)\b|\b(?:iex|Invoke-Expression)\b[^\n]{0,80}FromBase64String/giu;

const WINDOW = 240;
const ENGLISH = /\b(?:the|and|you|your|all|to|of|instructions|ignore|previous|send|print|token|run|with)\b/gi;

function printableShare(text: string): number {
  if (text.length === 0) return 0;
  let printable = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code === 0xfffd) continue;
    if (code === 9 || code === 10 || code === 13 || (code >= 32 && code !== 127)) printable += 1;
  }
  return printable / [...text].length;
}

function decodeBase64(blob: string): string | undefined {
  const decoded = Buffer.from(blob, 'base64').toString('utf8');
  return decoded.length >= 8 && printableShare(decoded) > 0.95 && /[a-z]{3}/i.test(decoded)
    ? decoded
    : undefined;
}

function decodeHex(blob: string): string | undefined {
  const digits = blob.replace(/\\x|[ :]/g, '');
  const decoded = Buffer.from(digits, 'hex').toString('utf8');
  return decoded.length >= 8 && printableShare(decoded) > 0.95 && /[a-z]{3}\s/i.test(decoded)
    ? decoded
    : undefined;
}

function rot13(text: string): string {
  const codes = new Array<number>(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 65 && code <= 90) codes[i] = ((code - 52) % 26) + 65;
    else if (code >= 97 && code <= 122) codes[i] = ((code - 84) % 26) + 97;
    else codes[i] = code;
  }
  return String.fromCharCode(...codes);
}

interface Blob {
  offset: number;
  length: number;
  decoded: string | undefined;
}

function blobsOf(text: string): Blob[] {
  const blobs: Blob[] = [];
  for (const match of text.matchAll(BASE64)) {
    // Long words, paths and identifiers match the alphabet too; a blob mixes cases and digits.
    const value = match[0];
    if (!/[A-Z]/.test(value) || !/[a-z]/.test(value) || !/[0-9+/]/.test(value)) continue;
    blobs.push({ offset: match.index, length: value.length, decoded: decodeBase64(value) });
  }
  for (const match of text.matchAll(HEX))
    blobs.push({ offset: match.index, length: match[0].length, decoded: decodeHex(match[0]) });
  return blobs;
}

function scan(view: TextView): Hit[] {
  const hits: Hit[] = [];
  const { text } = view;
  // Whether the field discusses an attack: asked only when a hit needs it (the cue list is long).
  let cue: boolean | undefined;
  const discussed = () => (cue ??= DISCUSSION_CUE.test(text));
  const blobs = blobsOf(text);
  for (const blob of blobs) {
    if (blob.decoded === undefined || instructionSignal(blob.decoded) !== 'payload') continue;
    const severity: Severity = view.inCode(blob.offset) && discussed() ? 'medium' : 'critical';
    hits.push({ rule: 'decoded-instructions', severity, offset: blob.offset, length: blob.length });
  }
  // rot13: read each prose line backwards through the cipher; only whole payloads count.
  if (/[a-z]{4,}/i.test(view.prose)) {
    let lineStart = 0;
    for (const line of view.prose.split('\n')) {
      // Plain English lines (two common words or more) are not rot13; most prose stops here.
      const turned =
        line.length >= 16 && LETTERS.test(line) && (line.match(ENGLISH) ?? []).length < 2 ? rot13(line) : '';
      if (
        turned !== '' &&
        (turned.match(ENGLISH) ?? []).length >= 2 &&
        instructionSignal(turned) === 'payload'
      )
        hits.push({
          rule: 'decoded-instructions',
          severity: 'critical',
          offset: lineStart,
          length: line.length,
        });
      lineStart += line.length + 1;
    }
  }
  for (const decode of DECODE_GATE.test(view.prose) ? view.prose.matchAll(DECODE_ALL) : []) {
    const around = view.prose.slice(Math.max(0, decode.index - WINDOW), decode.index + WINDOW);
    if (!FOLLOW.test(around)) continue;
    const readable = blobs.some((blob) => blob.decoded !== undefined);
    const named = ROT13_NAME.test(text) || /\b(?:hex|base64|b64)\b/i.test(around);
    if (!readable && !named && blobs.length === 0) continue;
    const severity: Severity = discussed() ? 'medium' : readable || ROT13_NAME.test(text) ? 'high' : 'medium';
    hits.push({ rule: 'decode-and-follow', severity, offset: decode.index, length: decode[0].length });
    break;
  }
  for (const match of TO_SHELL_GATE.test(text) ? text.matchAll(TO_SHELL) : []) {
    const inCode = view.inCode(match.index);
    const severity: Severity = discussed() ? (inCode ? 'low' : 'medium') : 'high';
    hits.push({ rule: 'decode-to-shell', severity, offset: match.index, length: match[0].length });
  }
  return hits;
}

export const encodedPayload: Scanner = {
  id: 'encoded-payload',
  summary: 'base64, hex or rot13 payloads that decode to instructions, and "decode and follow" requests',
  scan,
};
