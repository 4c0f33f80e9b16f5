/**
 * A Unigram tokenizer read from a Hugging Face `tokenizer.json`, the format Prompt Guard ships
 * (DeBERTa-v3, SentencePiece vocabulary). It covers what that family uses:
 *
 * - normalizers: `Sequence`, `NFC`/`NFD`/`NFKC`/`NFKD`, `Lowercase`, `Strip`, `Replace` (string or
 *   regex) and `Precompiled` (SentencePiece's charsmap, approximated by NFKC: the charsmap is NFKC
 *   plus a few whitespace and control-character rules, and the scores only have to be close);
 * - pre-tokenizers: `Sequence`, `WhitespaceSplit`, `Whitespace`, `Metaspace` (replacement `▁`,
 *   `prepend_scheme` always / first / never, or the older `add_prefix_space`);
 * - the `Unigram` model: Viterbi over the vocabulary's log-probabilities, an unknown character
 *   scored as the lowest piece minus 10 (as SentencePiece does), consecutive unknowns fused into one
 *   `unk_id`, and `byte_fallback` to `<0xXX>` pieces when the vocabulary has them;
 * - the special tokens around a sequence (`[CLS]` … `[SEP]`) from the `TemplateProcessing`,
 *   `BertProcessing` or `RobertaProcessing` post-processor, or from `added_tokens`.
 *
 * Special tokens are never produced from the text itself: a body that spells `[SEP]` is tokenized
 * as the characters `[`, `SEP`, `]`, so untrusted text cannot forge a segment boundary.
 * Anything else in the file (another model type, an unknown normalizer) is an error, not a guess.
 */

export interface Tokenizer {
  /** Token ids of `text`, without special tokens. */
  encode(text: string): number[];
  /** Ids to put before and after each window of tokens. */
  readonly prefix: readonly number[];
  readonly suffix: readonly number[];
}

export class TokenizerFormatError extends Error {}

type Json = Record<string, unknown>;
type Normalize = (text: string) => string;
type PreTokenize = (words: string[]) => string[];

const UNK_PENALTY = 10;

function asObject(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TokenizerFormatError(`${what} is not an object`);
  return value as Json;
}

function patternOf(pattern: unknown): RegExp {
  const spec = asObject(pattern, 'Replace pattern');
  if (typeof spec.String === 'string')
    return new RegExp(spec.String.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gu');
  if (typeof spec.Regex === 'string') return new RegExp(spec.Regex, 'gu');
  throw new TokenizerFormatError('Replace pattern is neither String nor Regex');
}

export function buildNormalizer(spec: unknown): Normalize {
  if (spec === null || spec === undefined) return (text) => text;
  const node = asObject(spec, 'normalizer');
  switch (node.type) {
    case 'Sequence': {
      const steps = ((node.normalizers as unknown[]) ?? []).map(buildNormalizer);
      return (text) => steps.reduce((acc, step) => step(acc), text);
    }
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD': {
      const form = node.type;
      return (text) => text.normalize(form);
    }
    case 'Precompiled':
      return (text) => text.normalize('NFKC');
    case 'Lowercase':
      return (text) => text.toLowerCase();
    case 'Strip': {
      const left = node.strip_left !== false;
      const right = node.strip_right !== false;
      return (text) =>
        left && right ? text.trim() : left ? text.trimStart() : right ? text.trimEnd() : text;
    }
    case 'Replace': {
      const pattern = patternOf(node.pattern);
      const content = String(node.content ?? '');
      return (text) => text.replace(pattern, () => content);
    }
    default:
      throw new TokenizerFormatError(`unsupported normalizer ${JSON.stringify(node.type)}`);
  }
}

function metaspace(node: Json): PreTokenize {
  const replacement = typeof node.replacement === 'string' ? node.replacement : '▁';
  const scheme =
    typeof node.prepend_scheme === 'string'
      ? node.prepend_scheme
      : node.add_prefix_space === false
        ? 'never'
        : 'always';
  const split = node.split !== false;
  return (words) =>
    words.flatMap((word, index) => {
      let text = word.replaceAll(' ', replacement);
      const prepend = scheme === 'always' || (scheme === 'first' && index === 0);
      if (prepend && !text.startsWith(replacement)) text = replacement + text;
      if (!split) return [text];
      // Split before each replacement character, keeping it at the start of the next piece.
      return text
        .split(new RegExp(`(?=${replacement.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})`, 'u'))
        .filter((p) => p !== '');
    });
}

export function buildPreTokenizer(spec: unknown): PreTokenize {
  if (spec === null || spec === undefined) return (words) => words;
  const node = asObject(spec, 'pre_tokenizer');
  switch (node.type) {
    case 'Sequence': {
      const steps = ((node.pretokenizers as unknown[]) ?? []).map(buildPreTokenizer);
      return (words) => steps.reduce((acc, step) => step(acc), words);
    }
    case 'WhitespaceSplit':
      return (words) => words.flatMap((word) => word.split(/\s+/u).filter((p) => p !== ''));
    case 'Whitespace':
      return (words) => words.flatMap((word) => word.match(/\w+|[^\w\s]+/gu) ?? []);
    case 'Metaspace':
      return metaspace(node);
    default:
      throw new TokenizerFormatError(`unsupported pre_tokenizer ${JSON.stringify(node.type)}`);
  }
}

interface UnigramModel {
  pieces: Map<string, { id: number; score: number }>;
  /** Every prefix of every piece (the pieces too): the Viterbi inner loop stops at the first miss. */
  prefixes: Set<string>;
  unkId: number;
  unkScore: number;
  byteIds: number[] | undefined;
}

function unigramModel(spec: unknown, specials: ReadonlySet<string>): UnigramModel {
  const node = asObject(spec, 'model');
  if (node.type !== 'Unigram')
    throw new TokenizerFormatError(`model type ${JSON.stringify(node.type)} is not Unigram`);
  if (!Array.isArray(node.vocab)) throw new TokenizerFormatError('model.vocab is not a list');
  if (typeof node.unk_id !== 'number') throw new TokenizerFormatError('model.unk_id is missing');
  const pieces = new Map<string, { id: number; score: number }>();
  const prefixes = new Set<string>();
  let minScore = 0;
  node.vocab.forEach((entry: unknown, id) => {
    const [piece, score] = entry as [unknown, unknown];
    if (typeof piece !== 'string' || typeof score !== 'number')
      throw new TokenizerFormatError(`model.vocab[${id}] is not [piece, score]`);
    minScore = Math.min(minScore, score);
    if (specials.has(piece) || id === node.unk_id) return;
    pieces.set(piece, { id, score });
    let prefix = '';
    for (const char of piece) {
      prefix += char;
      prefixes.add(prefix);
    }
  });
  let byteIds: number[] | undefined;
  if (node.byte_fallback === true) {
    const ids = Array.from({ length: 256 }, (_, byte) => {
      return pieces.get(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`)?.id;
    });
    if (ids.every((id) => id !== undefined)) byteIds = ids as number[];
  }
  return { pieces, prefixes, unkId: node.unk_id, unkScore: minScore - UNK_PENALTY, byteIds };
}

/** The best segmentation of one pre-token (Viterbi over code points). */
function viterbi(model: UnigramModel, word: string): number[] {
  const chars = Array.from(word);
  const n = chars.length;
  const best = new Float64Array(n + 1).fill(Number.NEGATIVE_INFINITY);
  const from = new Int32Array(n + 1);
  const ids = new Int32Array(n + 1); // -1: an unknown character
  best[0] = 0;
  for (let start = 0; start < n; start++) {
    if (best[start] === Number.NEGATIVE_INFINITY) continue;
    let piece = '';
    let single = false;
    for (let end = start + 1; end <= n; end++) {
      piece += chars[end - 1];
      if (!model.prefixes.has(piece)) break;
      const hit = model.pieces.get(piece);
      if (!hit) continue;
      if (end === start + 1) single = true;
      const score = best[start]! + hit.score;
      if (score > best[end]!) {
        best[end] = score;
        from[end] = start;
        ids[end] = hit.id;
      }
    }
    if (!single && best[start]! + model.unkScore > best[start + 1]!) {
      best[start + 1] = best[start]! + model.unkScore;
      from[start + 1] = start;
      ids[start + 1] = -1;
    }
  }
  const pieces: { id: number; text: string }[] = [];
  for (let end = n; end > 0; end = from[end]!)
    pieces.push({ id: ids[end]!, text: chars.slice(from[end], end).join('') });
  pieces.reverse();
  const out: number[] = [];
  pieces.forEach((piece, index) => {
    if (piece.id >= 0) out.push(piece.id);
    else if (model.byteIds)
      for (const byte of Buffer.from(piece.text, 'utf8')) out.push(model.byteIds[byte]!);
    // Consecutive unknown characters become one unknown id.
    else if (index === 0 || pieces[index - 1]!.id !== -1) out.push(model.unkId);
  });
  return out;
}

function idOf(token: unknown, added: Map<string, number>, what: string): number {
  if (typeof token === 'number') return token;
  const id = typeof token === 'string' ? added.get(token) : undefined;
  if (id === undefined) throw new TokenizerFormatError(`${what} ${JSON.stringify(token)} has no id`);
  return id;
}

/** The special ids before and after a single sequence, from the post-processor or `added_tokens`. */
function specialIds(root: Json, added: Map<string, number>): { prefix: number[]; suffix: number[] } {
  const post = root.post_processor as Json | null | undefined;
  if (post?.type === 'TemplateProcessing' && Array.isArray(post.single)) {
    const specials = asObject(post.special_tokens ?? {}, 'special_tokens');
    const prefix: number[] = [];
    const suffix: number[] = [];
    let seen = false;
    for (const part of post.single as Json[]) {
      if (part.Sequence) seen = true;
      const special = part.SpecialToken as Json | undefined;
      if (!special) continue;
      const entry = specials[String(special.id)] as Json | undefined;
      const ids = Array.isArray(entry?.ids)
        ? (entry.ids as number[])
        : [idOf(special.id, added, 'special token')];
      (seen ? suffix : prefix).push(...ids);
    }
    return { prefix, suffix };
  }
  if (post?.type === 'BertProcessing' || post?.type === 'RobertaProcessing') {
    const [, cls] = post.cls as [string, number];
    const [, sep] = post.sep as [string, number];
    return { prefix: [cls], suffix: [sep] };
  }
  const cls = added.get('[CLS]') ?? added.get('<s>');
  const sep = added.get('[SEP]') ?? added.get('</s>');
  return { prefix: cls === undefined ? [] : [cls], suffix: sep === undefined ? [] : [sep] };
}

/** Builds the tokenizer from the parsed `tokenizer.json`. Throws `TokenizerFormatError`. */
export function loadTokenizer(json: unknown): Tokenizer {
  const root = asObject(json, 'tokenizer.json');
  const added = new Map<string, number>();
  const specials = new Set<string>();
  for (const token of (root.added_tokens as Json[] | undefined) ?? []) {
    if (typeof token.content !== 'string' || typeof token.id !== 'number') continue;
    added.set(token.content, token.id);
    if (token.special === true) specials.add(token.content);
  }
  const model = unigramModel(root.model, specials);
  const normalize = buildNormalizer(root.normalizer);
  const preTokenize = buildPreTokenizer(root.pre_tokenizer);
  const { prefix, suffix } = specialIds(root, added);
  return {
    prefix,
    suffix,
    encode(text: string): number[] {
      const words = preTokenize([normalize(text)]);
      const out: number[] = [];
      for (const word of words) for (const id of viterbi(model, word)) out.push(id);
      return out;
    },
  };
}
