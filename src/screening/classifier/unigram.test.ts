import { describe, expect, it } from 'vitest';
import { tinyTokenizerJson, tinyVocab } from './tiny-model.js';
import { buildNormalizer, buildPreTokenizer, loadTokenizer, TokenizerFormatError } from './unigram.js';

const vocab = tinyVocab();
const id = (piece: string): number => {
  const index = vocab.findIndex(([p]) => p === piece);
  if (index < 0) throw new Error(`no piece ${piece}`);
  return index;
};
const tokenizer = loadTokenizer(tinyTokenizerJson());

describe('Unigram tokenizer', () => {
  it('marks each word with the metaspace ▁ and takes whole-word pieces', () => {
    expect(tokenizer.encode('hello world')).toEqual([id('▁hello'), id('▁world')]);
  });

  it('takes the most probable segmentation, not the longest first piece', () => {
    // ▁in + struct + s (-3.2 - 3.6 - 6) beats spelling it out letter by letter (-5.5 - 6 × 8).
    expect(tokenizer.encode('instructs')).toEqual([id('▁in'), id('struct'), id('s')]);
    // ▁in + struct + ions against ▁i + n + … : the pieces win.
    expect(tokenizer.encode('instructions')).toEqual([id('▁in'), id('struct'), id('ions')]);
    expect(tokenizer.encode('hellos')).toEqual([id('▁hello'), id('s')]);
  });

  it('normalizes like DeBERTa-v3: strip, NFKC, runs of spaces and whitespace splitting', () => {
    expect(tokenizer.encode('  ｈｅｌｌｏ \n\t  world   ')).toEqual([id('▁hello'), id('▁world')]);
  });

  it('fuses consecutive unknown characters into one [UNK]', () => {
    expect(tokenizer.encode('hello €€ world')).toEqual([id('▁hello'), id('▁'), 3, id('▁world')]);
    expect(tokenizer.encode('€a€')).toEqual([id('▁'), 3, id('a'), 3]);
    expect(tokenizer.encode('')).toEqual([]);
  });

  it('never produces a special token from the text itself', () => {
    const ids = tokenizer.encode('[SEP] [CLS]');
    expect(ids).not.toContain(1);
    expect(ids).not.toContain(2);
    expect(ids).toContain(3);
  });

  it('reads [CLS] and [SEP] from the template post-processor', () => {
    expect(tokenizer.prefix).toEqual([1]);
    expect(tokenizer.suffix).toEqual([2]);
    const roberta = loadTokenizer({
      ...tinyTokenizerJson(),
      post_processor: { type: 'RobertaProcessing', cls: ['<s>', 7], sep: ['</s>', 8] },
    });
    expect([roberta.prefix, roberta.suffix]).toEqual([[7], [8]]);
    const bare = loadTokenizer({ ...tinyTokenizerJson(), post_processor: null });
    expect([bare.prefix, bare.suffix]).toEqual([[1], [2]]);
  });

  it('falls back to <0xXX> byte pieces when byte_fallback is on', () => {
    const bytes = Array.from({ length: 256 }, (_, b): [string, number] => [
      `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`,
      -20,
    ]);
    const json = tinyTokenizerJson([...vocab, ...bytes]);
    (json.model as Record<string, unknown>).byte_fallback = true;
    const ids = loadTokenizer(json).encode('a€');
    expect(ids).toEqual([id('▁a'), ...[0xe2, 0x82, 0xac].map((b) => vocab.length + b)]);
  });

  it('supports the Metaspace prepend schemes', () => {
    const words = (scheme: string) =>
      buildPreTokenizer({
        type: 'Sequence',
        pretokenizers: [
          { type: 'WhitespaceSplit' },
          { type: 'Metaspace', replacement: '▁', prepend_scheme: scheme },
        ],
      })(['one two']);
    expect(words('always')).toEqual(['▁one', '▁two']);
    expect(words('first')).toEqual(['▁one', 'two']);
    expect(words('never')).toEqual(['one', 'two']);
    // Without WhitespaceSplit, Metaspace itself turns spaces into ▁ and splits before each.
    expect(buildPreTokenizer({ type: 'Metaspace', add_prefix_space: true })(['a b'])).toEqual(['▁a', '▁b']);
  });

  it('applies Replace, Lowercase and NFD normalizers', () => {
    expect(buildNormalizer({ type: 'Replace', pattern: { String: '``' }, content: '"' })('``a``')).toBe(
      '"a"',
    );
    expect(
      buildNormalizer({ type: 'Sequence', normalizers: [{ type: 'Lowercase' }, { type: 'NFD' }] })('É'),
    ).toBe('e\u0301');
  });

  it('rejects what it does not implement instead of guessing', () => {
    expect(() =>
      loadTokenizer({ ...tinyTokenizerJson(), model: { type: 'BPE', vocab: {}, merges: [] } }),
    ).toThrow(TokenizerFormatError);
    expect(() => loadTokenizer({ ...tinyTokenizerJson(), normalizer: { type: 'BertNormalizer' } })).toThrow(
      /unsupported normalizer "BertNormalizer"/,
    );
    expect(() => loadTokenizer({ ...tinyTokenizerJson(), pre_tokenizer: { type: 'ByteLevel' } })).toThrow(
      /unsupported pre_tokenizer/,
    );
  });

  it('tokenizes a long text without a space in it (a base64 blob) in linear time', () => {
    const ids = tokenizer.encode('ab'.repeat(50_000));
    expect(ids.length).toBe(100_000);
    expect(ids[0]).toBe(id('▁a'));
  });
});
