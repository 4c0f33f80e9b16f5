/**
 * The classifier half of the screening benchmark (see run.mjs):
 *
 * - blocked shares with a classifier: the scanners' verdict, or a classifier score of at least
 *   THRESHOLD on any field. The classifier is `stand-in-classifier.mjs` through the real
 *   `classifier_command` runner: a keyword STAND-IN, not Prompt Guard (no model can be downloaded
 *   here), so these shares show the plumbing, not what Prompt Guard would catch;
 * - the runners' own cost per item: the command runner (a process per item, and one batch for all),
 *   the Prompt Guard runner on the tiny ONNX model the tests use (tokenizer, windows, onnxruntime;
 *   a real DeBERTa's inference comes on top and is not measured), and the Unigram tokenizer on a
 *   synthetic 250,000-piece vocabulary, the size of Prompt Guard's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const THRESHOLD = 0.8;
const STAND_IN = fileURLToPath(new URL('./stand-in-classifier.mjs', import.meta.url));
const SAMPLE_EVERY = 15;

export async function loadClassifiers(dist) {
  const load = (path) => import(pathToFileURL(resolve(dist, path)).href);
  return {
    runners: await load('screening/classifier/index.js'),
    tiny: await load('screening/classifier/tiny-model.js'),
  };
}

export function standIn(runners) {
  return runners.createCommandClassifier([process.execPath, STAND_IN]);
}

/** The highest stand-in score per item, from one batched call. */
export async function itemScores(classifier, items, fieldsOf) {
  const texts = items.map((item) => fieldsOf(item).map((field) => field.text));
  const flat = await classifier.classify(texts.flat(), { timeoutMs: 300_000 });
  let next = 0;
  return texts.map((fields) => {
    const scores = flat.slice(next, next + fields.length);
    next += fields.length;
    return Math.max(...scores);
  });
}

/** Wall-clock and CPU milliseconds of `work()` per call, over `inputs`. */
async function measure(inputs, work) {
  const wall = [];
  const cpu = [];
  for (const input of inputs) {
    const before = process.cpuUsage();
    const started = performance.now();
    await work(input);
    wall.push(performance.now() - started);
    const spent = process.cpuUsage(before);
    cpu.push((spent.user + spent.system) / 1000);
  }
  const sorted = [...wall].sort((a, b) => a - b);
  const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
  return {
    wallMeanMs: mean(wall),
    wallP95Ms: sorted[Math.floor(sorted.length * 0.95)],
    cpuMeanMs: mean(cpu),
  };
}

/** A Unigram vocabulary of `size` pieces drawn from the corpus's own substrings (a realistic shape). */
function syntheticVocab(items, size) {
  const counts = new Map();
  for (const item of items)
    for (const word of `${item.title} ${item.body}`.split(/\s+/)) {
      const chars = Array.from(`▁${word}`);
      for (let start = 0; start < chars.length; start++)
        for (let end = start + 1; end <= Math.min(chars.length, start + 10); end++) {
          const piece = chars.slice(start, end).join('');
          counts.set(piece, (counts.get(piece) ?? 0) + 1);
        }
    }
  const pieces = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, size - 4);
  for (let i = 0; pieces.length < size - 4; i++) pieces.push([`▁filler${i}`, 1]);
  const total = pieces.reduce((sum, [, count]) => sum + count, 0);
  return [
    ['[PAD]', 0],
    ['[CLS]', 0],
    ['[SEP]', 0],
    ['[UNK]', 0],
    ...pieces.map(([piece, count]) => [piece, Math.log(count / total)]),
  ];
}

/** Cost of each runner per item (all of an item's fields in one call, as the engine will call it). */
export async function runnerCosts({ runners, tiny }, items, fieldsOf, log) {
  const textsOf = (item) => fieldsOf(item).map((field) => field.text);
  const sample = items.filter((_, index) => index % SAMPLE_EVERY === 0);
  const command = standIn(runners);
  await command.classify(['warm-up'], { timeoutMs: 60_000 });
  const perItem = await measure(sample, (item) => command.classify(textsOf(item), { timeoutMs: 60_000 }));
  const batchStarted = performance.now();
  await command.classify(items.flatMap(textsOf), { timeoutMs: 300_000 });
  const batchMs = (performance.now() - batchStarted) / items.length;

  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-pg-'));
  let model;
  let windows = 0;
  try {
    tiny.writeTinyPromptGuard(dir);
    const guard = runners.createPromptGuardClassifier(dir);
    await guard.classify(['warm-up'], { timeoutMs: 60_000 });
    model = await measure(items, (item) => guard.classify(textsOf(item), { timeoutMs: 60_000 }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const tokenizer = runners.loadTokenizer(tiny.tinyTokenizerJson(syntheticVocab(items, 250_000)));
  let tokens = 0;
  const size = runners.WINDOW - 2;
  const tokenize = await measure(items, (item) => {
    for (const text of textsOf(item)) {
      const ids = tokenizer.encode(text);
      tokens += ids.length;
      windows += ids.length === 0 ? 0 : runners.windows(ids, size).length;
    }
  });
  const figures = {
    commandPerItem: perItem,
    commandBatchedMsPerItem: batchMs,
    promptGuardTinyPerItem: model,
    tokenizer250kPerItem: tokenize,
    tokensPerItem: tokens / items.length,
    windowsPerItem: windows / items.length,
    sampleItems: sample.length,
  };
  log(
    `classifier runners, per item (all fields in one call): command stand-in ${perItem.wallMeanMs.toFixed(1)} ms wall (p95 ${perItem.wallP95Ms.toFixed(1)}, ${perItem.cpuMeanMs.toFixed(2)} ms CPU in curupira; ${sample.length} items, a process each), batched ${batchMs.toFixed(3)} ms; Prompt Guard runner on the tiny model ${model.wallMeanMs.toFixed(2)} ms wall (p95 ${model.wallP95Ms.toFixed(2)}, ${model.cpuMeanMs.toFixed(2)} ms CPU); Unigram tokenizer, 250k-piece vocabulary: ${tokenize.cpuMeanMs.toFixed(3)} ms CPU, ${figures.tokensPerItem.toFixed(0)} tokens and ${figures.windowsPerItem.toFixed(2)} windows of 512 per item`,
  );
  return figures;
}
