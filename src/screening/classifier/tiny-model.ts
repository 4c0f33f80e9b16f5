/**
 * A tiny model in Prompt Guard's format, for tests and the benchmark: `model.onnx`, `tokenizer.json`
 * and `config.json`, written to a directory, no download. The ONNX graph takes `input_ids` [1, N]
 * and `attention_mask` [1, N] (int64) and answers `logits` [1, labels]:
 *
 *     logits = ReduceMax_over_positions(Gather(embedding, input_ids) + Gather(positions, 0…N-1)) · weights
 *
 * `positions` is a zero table of 512 rows, so like DeBERTa the model refuses more than 512 tokens.
 * Every token's embedding row is "benign" (1 on the benign label, 0 elsewhere) except the ids given in `hot`, whose row puts
 * a large value on one label, so a text containing one of them scores high. The protobuf encoder
 * below writes just the ONNX fields this graph needs (onnx.proto3: ModelProto, GraphProto,
 * NodeProto, TensorProto, ValueInfoProto).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Bytes = Uint8Array;

function varint(value: number | bigint): number[] {
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n;
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

function concat(parts: readonly (Bytes | number[])[]): Bytes {
  const arrays = parts.map((part) => (part instanceof Uint8Array ? part : Uint8Array.from(part)));
  const out = new Uint8Array(arrays.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of arrays) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const int = (field: number, value: number | bigint): Bytes => concat([varint(field << 3), varint(value)]);
const bytes = (field: number, value: Bytes): Bytes =>
  concat([varint((field << 3) | 2), varint(value.length), value]);
const str = (field: number, value: string): Bytes => bytes(field, new TextEncoder().encode(value));
const msg = (field: number, ...parts: Bytes[]): Bytes => bytes(field, concat(parts));

/** Like Prompt Guard, the tiny model takes at most this many tokens. */
export const MAX_POSITIONS = 512;
const FLOAT = 1;
const INT64 = 7;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;

function floatTensor(name: string, rows: readonly (readonly number[])[]): Bytes {
  const data = new Float32Array(rows.flat());
  return concat([
    int(1, rows.length),
    int(1, rows[0]!.length),
    int(2, FLOAT),
    str(8, name),
    bytes(9, new Uint8Array(data.buffer)),
  ]);
}

function int64Tensor(name: string, dims: readonly number[], values: readonly number[]): Bytes {
  const data = BigInt64Array.from(values, (value) => BigInt(value));
  return concat([
    ...dims.map((dim) => int(1, dim)),
    int(2, INT64),
    str(8, name),
    bytes(9, new Uint8Array(data.buffer)),
  ]);
}

/** A tensor value: `dims` are numbers or symbolic names. */
function valueInfo(name: string, elemType: number, dims: readonly (number | string)[]): Bytes {
  const shape = dims.map((dim) => msg(1, typeof dim === 'number' ? int(1, dim) : str(2, dim)));
  return concat([str(1, name), msg(2, msg(1, int(1, elemType), msg(2, ...shape)))]);
}

function node(op: string, inputs: string[], outputs: string[], ...attributes: Bytes[]): Bytes {
  return concat([
    ...inputs.map((input) => str(1, input)),
    ...outputs.map((output) => str(2, output)),
    str(3, `${outputs[0]}_node`),
    str(4, op),
    ...attributes.map((attribute) => msg(5, attribute)),
  ]);
}

export interface TinyModelOptions {
  /** Vocabulary size: rows of the embedding table. */
  vocabSize: number;
  /** Label names in output order. Default `['BENIGN', 'MALICIOUS']`. */
  labels?: readonly string[];
  /** Index of the benign label, which ordinary tokens push up (default 0). */
  benign?: number;
  /** Token id → the label index it pushes up. */
  hot: ReadonlyMap<number, number>;
  /** How far a hot token pushes its label's logit (default 6). */
  strength?: number;
}

const AXIS_0 = concat([str(1, 'axis'), int(20, ATTRIBUTE_INT), int(3, 0)]);

/** The ONNX model bytes. */
export function tinyModel(options: TinyModelOptions): Bytes {
  const labels = options.labels?.length ?? 2;
  const strength = options.strength ?? 6;
  const embedding = Array.from({ length: options.vocabSize }, (_, id) => {
    const row = new Array<number>(labels).fill(0);
    const hot = options.hot.get(id);
    row[hot ?? options.benign ?? 0] = hot === undefined ? 1 : strength;
    return row;
  });
  const identity = Array.from({ length: labels }, (_, i) =>
    Array.from({ length: labels }, (_, j) => (i === j ? 1 : 0)),
  );
  const graph = concat([
    msg(1, node('Gather', ['embedding', 'input_ids'], ['embedded'], AXIS_0)),
    // The position table: 512 zero rows looked up by 0…N-1, so a longer input fails as a real one does.
    msg(1, node('Shape', ['input_ids'], ['shape'])),
    msg(1, node('Gather', ['shape', 'one'], ['length'], AXIS_0)),
    msg(1, node('Range', ['zero', 'length', 'one'], ['position_ids'])),
    msg(1, node('Gather', ['positions', 'position_ids'], ['placed'], AXIS_0)),
    msg(1, node('Add', ['embedded', 'placed'], ['summed'])),
    msg(
      1,
      node(
        'ReduceMax',
        ['summed'],
        ['pooled'],
        concat([str(1, 'axes'), int(20, ATTRIBUTE_INTS), int(8, 1)]),
        concat([str(1, 'keepdims'), int(20, ATTRIBUTE_INT), int(3, 0)]),
      ),
    ),
    msg(1, node('MatMul', ['pooled', 'weights'], ['logits'])),
    str(2, 'tiny-prompt-guard'),
    msg(5, floatTensor('embedding', embedding)),
    msg(5, floatTensor('weights', identity)),
    msg(
      5,
      floatTensor(
        'positions',
        Array.from({ length: MAX_POSITIONS }, () => new Array<number>(labels).fill(0)),
      ),
    ),
    msg(5, int64Tensor('zero', [], [0])),
    msg(5, int64Tensor('one', [], [1])),
    msg(11, valueInfo('input_ids', INT64, [1, 'sequence'])),
    msg(11, valueInfo('attention_mask', INT64, [1, 'sequence'])),
    msg(12, valueInfo('logits', FLOAT, [1, labels])),
  ]);
  return concat([int(1, 8), str(2, 'curupira-tests'), msg(7, graph), msg(8, int(2, 13))]);
}

/** Pieces of the tiny vocabulary: the specials, then words, then single characters. */
const SPECIALS = ['[PAD]', '[CLS]', '[SEP]', '[UNK]'];
const WORDS = ['▁', '▁hello', '▁world', '▁please', '▁fix', '▁the', '▁bug', '▁in', 'struct', 'ions'];
/** Words whose token is "hot" in the tiny model: `▁ignore` is an injection, `▁jailbreak` label 2. */
export const INJECTION_WORD = '▁ignore';
export const JAILBREAK_WORD = '▁jailbreak';

export function tinyVocab(): [string, number][] {
  const letters = 'abcdefghijklmnopqrstuvwxyz'.split('');
  return [
    ...SPECIALS.map((piece): [string, number] => [piece, 0]),
    ...WORDS.map((piece): [string, number] => [piece, piece === '▁' ? -2 : -3 - piece.length / 10]),
    [INJECTION_WORD, -3],
    [JAILBREAK_WORD, -3],
    ...letters.map((piece): [string, number] => [piece, -6]),
    ...letters.map((piece): [string, number] => [`▁${piece}`, -5.5]),
  ];
}

/** A `tokenizer.json` shaped like DeBERTa-v3's (and so Prompt Guard's) over the tiny vocabulary. */
export function tinyTokenizerJson(vocab: [string, number][] = tinyVocab()): Record<string, unknown> {
  return {
    version: '1.0',
    added_tokens: SPECIALS.map((content, id) => ({ id, content, special: true })),
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Strip', strip_left: true, strip_right: true },
        { type: 'Precompiled', precompiled_charsmap: '' },
        { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' },
      ],
    },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'WhitespaceSplit' },
        { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
      ],
    },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [1], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [2], tokens: ['[SEP]'] },
      },
    },
    model: { type: 'Unigram', unk_id: 3, vocab, byte_fallback: false },
  };
}

/**
 * Writes a complete tiny Prompt Guard directory. `labels` of length 3 gives Prompt Guard 1's
 * `[BENIGN, INJECTION, JAILBREAK]`; `config` false leaves `config.json` out.
 */
export function writeTinyPromptGuard(
  dir: string,
  options: { labels?: readonly string[]; config?: boolean } = {},
): { injectionId: number; jailbreakId: number } {
  const vocab = tinyVocab();
  const labels = options.labels ?? ['BENIGN', 'MALICIOUS'];
  const injectionId = vocab.findIndex(([piece]) => piece === INJECTION_WORD);
  const jailbreakId = vocab.findIndex(([piece]) => piece === JAILBREAK_WORD);
  const benign = Math.max(
    0,
    labels.findIndex((label) => /benign/i.test(label)),
  );
  const malicious = labels.findIndex((label) => !/benign/i.test(label));
  const hot = new Map([[injectionId, malicious]]);
  if (labels.length > 2) hot.set(jailbreakId, 2);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.onnx'), tinyModel({ vocabSize: vocab.length, labels, benign, hot }));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(vocab)));
  if (options.config !== false)
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ id2label: Object.fromEntries(labels.map((label, i) => [String(i), label])) }),
    );
  return { injectionId, jailbreakId };
}
