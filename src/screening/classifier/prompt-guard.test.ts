import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createClassifier } from './index.js';
import { createPromptGuardClassifier, maliciousScore, windows } from './prompt-guard.js';
import { MAX_POSITIONS, writeTinyPromptGuard } from './tiny-model.js';
import { ClassifierError } from './types.js';

const root = mkdtempSync(join(tmpdir(), 'curupira-prompt-guard-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * onnxruntime-node is an optional dependency; `npm test` (scripts/test.mjs) installs it when it is
 * absent. Only a developer running vitest by hand without it skips these; in CI they run and fail.
 */
const ortAvailable = await import('onnxruntime-node').then(
  () => true,
  () => false,
);
const withOrt = describe.skipIf(!ortAvailable && !process.env.CI);

const OPTIONS = { timeoutMs: 30_000 };
/** The tiny model's logits are [1, 0] for benign text and [1, 6] with the hot token. */
const BENIGN = 1 / (1 + Math.E);
const HOT = 1 / (1 + Math.exp(-5));

async function failure(promise: Promise<unknown>): Promise<ClassifierError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ClassifierError);
  return error as ClassifierError;
}

withOrt('Prompt Guard runner on a tiny ONNX model', () => {
  const pg2 = join(root, 'pg2');
  writeTinyPromptGuard(pg2);

  it('scores benign text low and a text with the injection token high (Prompt Guard 2 labels)', async () => {
    const classifier = createPromptGuardClassifier(pg2);
    expect(classifier.description).toBe(`prompt-guard ${pg2}`);
    const [benign, attack, empty] = await classifier.classify(
      ['please fix the bug in hello world', 'hello ignore world', '   '],
      OPTIONS,
    );
    expect(benign).toBeCloseTo(BENIGN, 5);
    expect(attack).toBeCloseTo(HOT, 5);
    expect(empty).toBe(0);
  });

  it('finds the injection token far beyond the 512-token window (chunks, max over chunks)', async () => {
    const classifier = createPromptGuardClassifier(pg2);
    const long = `${'hello '.repeat(1500)}ignore ${'world '.repeat(300)}`;
    const clean = `${'hello '.repeat(1500)}${'world '.repeat(300)}`;
    const [hit, miss] = await classifier.classify([long, clean], OPTIONS);
    expect(hit).toBeCloseTo(HOT, 5);
    expect(miss).toBeCloseTo(BENIGN, 5);
    // Position 600: inside the second window only.
    const [second] = await classifier.classify([`${'hello '.repeat(600)}ignore`], OPTIONS);
    expect(second).toBeCloseTo(HOT, 5);
  });

  it('the tiny model, like Prompt Guard, refuses more than 512 tokens (so the chunking test can fail)', async () => {
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(join(pg2, 'model.onnx'));
    const feeds = (n: number) => {
      const ids = new BigInt64Array(n).fill(5n);
      return {
        input_ids: new ort.Tensor('int64', ids, [1, n]),
        attention_mask: new ort.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
      };
    };
    expect((await session.run(feeds(MAX_POSITIONS))).logits!.dims).toEqual([1, 2]);
    await expect(session.run(feeds(MAX_POSITIONS + 1))).rejects.toThrow();
  });

  it('reads Prompt Guard 1 labels from config.json: the score is the highest non-benign label', async () => {
    const pg1 = join(root, 'pg1');
    writeTinyPromptGuard(pg1, { labels: ['BENIGN', 'INJECTION', 'JAILBREAK'] });
    const [benign, injection, jailbreak] = await createPromptGuardClassifier(pg1).classify(
      ['hello world', 'hello ignore', 'jailbreak the bug'],
      OPTIONS,
    );
    const low = 1 / (1 + 2 / Math.E);
    const high = Math.exp(6) / (Math.exp(6) + Math.E + 1);
    expect(benign).toBeCloseTo(1 / (Math.E + 2), 5);
    expect(benign).toBeLessThan(low);
    expect(injection).toBeCloseTo(high, 5);
    expect(jailbreak).toBeCloseTo(high, 5);
  });

  it('takes the benign label from id2label wherever it is', async () => {
    const reversed = join(root, 'reversed');
    writeTinyPromptGuard(reversed, { labels: ['MALICIOUS', 'BENIGN'] });
    const [benign, attack] = await createPromptGuardClassifier(reversed).classify(
      ['hello', 'ignore'],
      OPTIONS,
    );
    // Benign text has logits [0, 1] here: the malicious label (index 0) gets 1 / (1 + e).
    expect(benign).toBeCloseTo(BENIGN, 5);
    expect(attack).toBeGreaterThan(0.99);
  });

  it('works without config.json (two logits: benign, malicious)', async () => {
    const bare = join(root, 'bare');
    writeTinyPromptGuard(bare, { config: false });
    expect(await createPromptGuardClassifier(bare).classify(['ignore'], OPTIONS)).toEqual([
      expect.closeTo(HOT, 5),
    ]);
  });

  it('is built by createClassifier from classifier_model', async () => {
    const classifier = createClassifier({ modelDir: pg2, timeoutSeconds: 30, threshold: 0.8 });
    expect(classifier?.description).toBe(`prompt-guard ${pg2}`);
    expect(await classifier!.classify(['ignore'], OPTIONS)).toEqual([expect.closeTo(HOT, 5)]);
  });

  it('a corrupt model.onnx is "failed"', async () => {
    const corrupt = join(root, 'corrupt');
    writeTinyPromptGuard(corrupt);
    writeFileSync(join(corrupt, 'model.onnx'), 'not a model');
    const error = await failure(createPromptGuardClassifier(corrupt).classify(['x'], OPTIONS));
    expect(error.kind).toBe('failed');
    expect(error.message).toContain(`the Prompt Guard model in ${corrupt} could not be loaded`);
  });

  it('running out of time is "timeout", an abort rejects with its reason', async () => {
    const error = await failure(createPromptGuardClassifier(pg2).classify(['hello'], { timeoutMs: 0 }));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('`classifier_timeout`');
    // A long text (hundreds of windows) with a short deadline stops part-way.
    const long = await failure(
      createPromptGuardClassifier(pg2).classify(['hello world '.repeat(100_000)], { timeoutMs: 50 }),
    );
    expect(long.kind).toBe('timeout');
    const controller = new AbortController();
    controller.abort(new Error('engine stopping'));
    await expect(
      createPromptGuardClassifier(pg2).classify(['hello'], { timeoutMs: 10_000, signal: controller.signal }),
    ).rejects.toThrow('engine stopping');
  });
});

describe('Prompt Guard runner without its files', () => {
  it('a directory that does not exist is "missing", with both ways to fix it', async () => {
    const error = await failure(createPromptGuardClassifier(join(root, 'nope')).classify(['x'], OPTIONS));
    expect(error.kind).toBe('missing');
    expect(error.message).toContain('does not exist');
    expect(error.message).toContain('`classifier_model`');
    expect(error.message).toContain('`classifier_command`');
  });

  it('a directory without tokenizer.json is "missing"', async () => {
    const half = join(root, 'half');
    writeTinyPromptGuard(half);
    rmSync(join(half, 'tokenizer.json'));
    const error = await failure(createPromptGuardClassifier(half).classify(['x'], OPTIONS));
    expect(error.kind).toBe('missing');
    expect(error.message).toContain('has no tokenizer.json');
  });

  it('onnxruntime-node that cannot be imported is "missing" and says how to install it', async () => {
    const dir = join(root, 'no-ort');
    writeTinyPromptGuard(dir);
    const classifier = createPromptGuardClassifier(dir, { ortName: 'curupira-no-such-onnxruntime' });
    const error = await failure(classifier.classify(['x'], OPTIONS));
    expect(error.kind).toBe('missing');
    expect(error.message).toContain(
      'ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save curupira-no-such-onnxruntime@',
    );
    expect(error.message).toContain('`classifier_command`');
  });
});

describe('windows and scores', () => {
  it('cuts long token lists into overlapping windows that cover every token', () => {
    const ids = Array.from({ length: 1200 }, (_, i) => i);
    const cut = windows(ids, 510, 64);
    expect(cut.map((w) => [w[0], w.length])).toEqual([
      [0, 510],
      [446, 510],
      [892, 308],
    ]);
    expect(new Set(cut.flat()).size).toBe(1200);
    expect(windows([1, 2, 3], 510)).toEqual([[1, 2, 3]]);
    expect(
      windows(
        Array.from({ length: 510 }, () => 0),
        510,
      ),
    ).toHaveLength(1);
  });

  it('the score is the highest softmax probability of a non-benign label', () => {
    expect(maliciousScore([0, 0], 0)).toBeCloseTo(0.5);
    expect(maliciousScore([3, 0, 1], 0)).toBeCloseTo(Math.E / (Math.exp(3) + 1 + Math.E));
    expect(maliciousScore([1000, -1000], 1)).toBe(1);
  });

  it('createClassifier is null with neither key, and prefers the command when both are set', () => {
    expect(createClassifier({ timeoutSeconds: 30, threshold: 0.8 })).toBeNull();
    expect(createClassifier({ command: [], timeoutSeconds: 30, threshold: 0.8 })).toBeNull();
    expect(
      createClassifier({ command: ['guard', '--json'], modelDir: '/m', timeoutSeconds: 30, threshold: 0.8 })
        ?.description,
    ).toBe('command guard --json');
  });
});
