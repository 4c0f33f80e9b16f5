/**
 * `classifier_model`: a local model in Meta's Prompt Guard format, run in-process through
 * onnxruntime-node. The directory holds `model.onnx` (or `onnx/model.onnx`), `tokenizer.json`
 * and, optionally, `config.json`. The model is a DeBERTa-v3 sequence classifier: `input_ids`
 * (and `attention_mask`, `token_type_ids` when it declares them) in, one row of logits out.
 *
 * Scores: the softmax of the logits, then the highest probability of any label that is not benign.
 * Labels come from `config.json`'s `id2label` (a label named like "benign" is the benign one, else
 * label 0); without it two labels are Prompt Guard 2's [benign, malicious] and three are Prompt
 * Guard 1's [BENIGN, INJECTION, JAILBREAK]. A text longer than the 512-token window is cut into
 * windows of 510 tokens (plus [CLS] and [SEP]) that overlap by 64 tokens, so an instruction that
 * straddles a boundary is whole in one of them; its score is the highest of its windows.
 *
 * onnxruntime-node is an optional dependency, imported on first use; the loaded model is kept per
 * directory (and reloaded when its files change).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIX_HINT, withHint } from './messages.js';
import { type Classifier, ClassifierError, type ClassifyOptions } from './types.js';
import { loadTokenizer, type Tokenizer } from './unigram.js';

export const WINDOW = 512;
export const OVERLAP = 64;

/** The parts of onnxruntime-node used here (it is optional, so its types are not imported). */
interface OrtTensor {
  readonly data: unknown;
  readonly dims: readonly number[];
}
interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
}
interface Ort {
  Tensor: new (type: 'int64', data: BigInt64Array, dims: number[]) => OrtTensor;
  InferenceSession: { create(path: string, options?: Record<string, unknown>): Promise<OrtSession> };
}

interface LoadedModel {
  ort: Ort;
  session: OrtSession;
  tokenizer: Tokenizer;
  /** Index of the benign label. */
  benign: number;
  labels: number;
}

const ORT_PACKAGE = 'onnxruntime-node';
const ORT_VERSION = '1.30.0';
/** Where curupira is installed (dist/screening/classifier/ → the package root). */
const INSTALL_ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));

let ortModule: Promise<Ort> | undefined;
/** Imports onnxruntime-node once; the import is by a variable name so that nothing requires it at build time. */
export function loadOrt(name: string = ORT_PACKAGE): Promise<Ort> {
  if (name !== ORT_PACKAGE) return importOrt(name);
  ortModule ??= importOrt(name).catch((error: unknown) => {
    ortModule = undefined;
    throw error;
  });
  return ortModule;
}

async function importOrt(name: string): Promise<Ort> {
  try {
    const loaded = (await import(name)) as Ort & { default?: Ort };
    return loaded.InferenceSession ? loaded : (loaded.default as Ort);
  } catch (error) {
    throw new ClassifierError(
      'missing',
      `the Prompt Guard runner needs the ${name} package, which could not be loaded (${(error as Error).message.split('\n')[0]}). ` +
        `Install it next to curupira with \`cd ${INSTALL_ROOT} && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save ${name}@${ORT_VERSION}\` ` +
        '(ONNXRUNTIME_NODE_INSTALL=skip: the CPU runtime ships in the package, nothing else is downloaded), ' +
        `or set \`classifier_command\` instead of \`classifier_model\`. ${FIX_HINT}`,
    );
  }
}

function modelFile(dir: string): string | undefined {
  return [join(dir, 'model.onnx'), join(dir, 'onnx', 'model.onnx')].find((path) => existsSync(path));
}

/** Index of the benign label and the number of labels, from `config.json` when there is one. */
export function labelsOf(dir: string): { benign: number; labels: number | undefined } {
  const path = join(dir, 'config.json');
  if (!existsSync(path)) return { benign: 0, labels: undefined };
  const config = JSON.parse(readFileSync(path, 'utf8')) as { id2label?: Record<string, string> };
  const entries = Object.entries(config.id2label ?? {});
  if (entries.length === 0) return { benign: 0, labels: undefined };
  const benign = entries.find(([, label]) => /benign|safe/i.test(label));
  return { benign: benign ? Number(benign[0]) : 0, labels: entries.length };
}

function missing(dir: string, what: string): ClassifierError {
  return new ClassifierError(
    'missing',
    withHint(`the Prompt Guard model in \`classifier_model\` = ${dir} ${what}`),
  );
}

async function loadModel(dir: string, ortName?: string): Promise<LoadedModel> {
  if (!existsSync(dir)) throw missing(dir, 'does not exist');
  const model = modelFile(dir);
  if (!model) throw missing(dir, 'has no model.onnx');
  const tokenizerPath = join(dir, 'tokenizer.json');
  if (!existsSync(tokenizerPath)) throw missing(dir, 'has no tokenizer.json');
  const ort = await loadOrt(ortName);
  const failed = (what: string, error: unknown): ClassifierError =>
    new ClassifierError(
      'failed',
      withHint(
        `the Prompt Guard model in ${dir} could not be loaded: ${what}: ${(error as Error).message.split('\n')[0]}`,
      ),
    );
  let tokenizer: Tokenizer;
  let labels: ReturnType<typeof labelsOf>;
  try {
    tokenizer = loadTokenizer(JSON.parse(readFileSync(tokenizerPath, 'utf8')));
    labels = labelsOf(dir);
  } catch (error) {
    throw failed('tokenizer.json or config.json', error);
  }
  let session: OrtSession;
  try {
    session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all' });
  } catch (error) {
    throw failed(model, error);
  }
  return { ort, session, tokenizer, benign: labels.benign, labels: labels.labels ?? 0 };
}

const cache = new Map<string, Promise<LoadedModel>>();

/** The loaded model for `dir`, shared by every classifier on it until its files change. */
function cachedModel(dir: string, ortName?: string): Promise<LoadedModel> {
  const stamp = ['model.onnx', 'onnx/model.onnx', 'tokenizer.json', 'config.json']
    .map((file) => {
      try {
        const stat = statSync(join(dir, file));
        return `${stat.size}:${stat.mtimeMs}`;
      } catch {
        return '-';
      }
    })
    .join('|');
  const key = `${dir}\u0000${stamp}\u0000${ortName ?? ''}`;
  let loaded = cache.get(key);
  if (!loaded) {
    loaded = loadModel(dir, ortName);
    cache.set(key, loaded);
    // A failure is not kept: the user may install what was missing and try again.
    loaded.catch(() => cache.delete(key));
  }
  return loaded;
}

/** Windows of at most `size` ids covering `ids`, each starting `size - overlap` after the previous. */
export function windows(ids: readonly number[], size: number, overlap: number = OVERLAP): number[][] {
  if (ids.length <= size) return [ids.slice()];
  const step = Math.max(1, size - overlap);
  const out: number[][] = [];
  for (let start = 0; ; start += step) {
    out.push(ids.slice(start, start + size));
    if (start + size >= ids.length) return out;
  }
}

/** The highest softmax probability among the labels that are not `benign`. */
export function maliciousScore(logits: ArrayLike<number>, benign: number): number {
  const values = Array.from(logits);
  const top = Math.max(...values);
  const exps = values.map((value) => Math.exp(value - top));
  const sum = exps.reduce((a, b) => a + b, 0);
  let score = 0;
  exps.forEach((value, index) => {
    if (index !== benign) score = Math.max(score, value / sum);
  });
  return Math.min(1, Math.max(0, score));
}

class Deadline {
  readonly #at: number;
  constructor(
    ms: number,
    readonly signal: AbortSignal | undefined,
    readonly onTimeout: () => ClassifierError,
  ) {
    this.#at = performance.now() + ms;
  }

  /**
   * `work`, unless the deadline passes or the signal aborts first. onnxruntime cannot interrupt an
   * inference, so a window still running then finishes in the background and is ignored.
   */
  async race<T>(work: Promise<T>): Promise<T> {
    if (this.signal?.aborted) throw abortReason(this.signal);
    const left = this.#at - performance.now();
    if (left <= 0) throw this.onTimeout();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.onTimeout()), left);
      onAbort = () => reject(abortReason(this.signal!));
      this.signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, stop]);
    } finally {
      clearTimeout(timer);
      if (onAbort) this.signal?.removeEventListener('abort', onAbort);
    }
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The classification was aborted', 'AbortError');
}

async function scoreWindow(model: LoadedModel, ids: readonly number[]): Promise<number> {
  const dims = [1, ids.length];
  const tensor = (fill: (id: number) => bigint) =>
    new model.ort.Tensor('int64', BigInt64Array.from(ids, fill), dims);
  const feeds: Record<string, OrtTensor> = {};
  for (const name of model.session.inputNames) {
    if (name === 'input_ids') feeds[name] = tensor((id) => BigInt(id));
    else if (name === 'attention_mask') feeds[name] = tensor(() => 1n);
    else if (name === 'token_type_ids') feeds[name] = tensor(() => 0n);
    else throw new Error(`the model wants an input named ${name}, which a Prompt Guard model does not have`);
  }
  const outputs = await model.session.run(feeds);
  const logits = outputs.logits ?? outputs[model.session.outputNames[0] ?? ''];
  const data = logits?.data as ArrayLike<number> | undefined;
  if (!data || data.length < 2 || (model.labels > 0 && data.length !== model.labels))
    throw new Error(
      `the model answered ${data?.length ?? 0} logits${model.labels > 0 ? ` for ${model.labels} labels in config.json` : ''}`,
    );
  if (!Array.from(data).every(Number.isFinite))
    throw new Error('the model answered a logit that is not a finite number');
  return maliciousScore(data, model.benign);
}

/** The runner for `classifier_model = dir`. `ortName` replaces the package name (tests). */
export function createPromptGuardClassifier(dir: string, options: { ortName?: string } = {}): Classifier {
  const shown = resolve(dir);
  return {
    description: `prompt-guard ${shown}`,
    async classify(texts: readonly string[], classify: ClassifyOptions): Promise<number[]> {
      const deadline = new Deadline(
        classify.timeoutMs,
        classify.signal,
        () =>
          new ClassifierError(
            'timeout',
            withHint(
              `the Prompt Guard model in ${shown} did not score ${texts.length} text${texts.length === 1 ? '' : 's'} within ${classify.timeoutMs / 1000} s (raise \`classifier_timeout\` if it is just slow)`,
            ),
          ),
      );
      if (texts.length === 0) return deadline.race(Promise.resolve([]));
      const model = await deadline.race(cachedModel(shown, options.ortName));
      const size = WINDOW - model.tokenizer.prefix.length - model.tokenizer.suffix.length;
      const scores: number[] = [];
      for (const text of texts) {
        const ids = model.tokenizer.encode(text);
        let score = 0;
        if (ids.length > 0) {
          for (const window of windows(ids, size)) {
            const run = scoreWindow(model, [...model.tokenizer.prefix, ...window, ...model.tokenizer.suffix]);
            // A window abandoned at the deadline may still fail later: that must not go unhandled.
            run.catch(() => {});
            const windowScore = await deadline.race(run).catch((error: unknown) => {
              if (error instanceof ClassifierError || error === classify.signal?.reason) throw error;
              if (error instanceof DOMException && error.name === 'AbortError') throw error;
              throw new ClassifierError(
                'failed',
                withHint(
                  `the Prompt Guard model in ${shown} failed: ${(error as Error).message.split('\n')[0]}`,
                ),
              );
            });
            score = Math.max(score, windowScore);
          }
        }
        scores.push(score);
      }
      return scores;
    },
  };
}
