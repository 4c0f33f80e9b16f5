/**
 * Quality gate for the deterministic scanners on the committed corpora (bench/screening/corpus/):
 * at least 85 % of attacks blocked and at most 3 % of benign items blocked, under the default
 * policy, on the tuning corpus (A) and on the held-out one (B). No timing here: speed is measured by
 * `node bench/run.mjs screening`, never asserted.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { screen } from '../../src/screening/index.js';
import { CORPORA, type CorpusItem, corpusPath, makeCorpus, serialize } from './make-corpus.mjs';

const MIN_ATTACKS_BLOCKED = 0.85;
const MAX_BENIGN_BLOCKED = 0.03;

function load(name: string): CorpusItem[] {
  return readFileSync(corpusPath(name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as CorpusItem);
}

function blocked(item: CorpusItem): boolean {
  const fields = [
    { name: 'title', text: item.title },
    { name: 'body', text: item.body },
    { name: 'author', text: item.author },
    ...item.comments.map((text, i) => ({ name: `comment[${i}]`, text })),
  ];
  return screen({ fields }).action === 'block';
}

describe.each(CORPORA)('screening corpus $name', (spec) => {
  const items = load(spec.name);

  it('is what make-corpus.mjs generates (run it after changing the generator)', () => {
    expect(readFileSync(corpusPath(spec.name), 'utf8')).toBe(serialize(makeCorpus(spec)));
  });

  it('has at least 250 attacks and 250 benign items, with unique ids', () => {
    expect(items.filter((item) => item.label === 'attack').length).toBeGreaterThanOrEqual(250);
    expect(items.filter((item) => item.label === 'benign').length).toBeGreaterThanOrEqual(250);
    expect(new Set(items.map((item) => item.id)).size).toBe(items.length);
  });

  it(`blocks at least ${MIN_ATTACKS_BLOCKED * 100} % of attacks and at most ${MAX_BENIGN_BLOCKED * 100} % of benign items`, () => {
    const attacks = items.filter((item) => item.label === 'attack');
    const benign = items.filter((item) => item.label === 'benign');
    const attackShare = attacks.filter(blocked).length / attacks.length;
    const benignShare = benign.filter(blocked).length / benign.length;
    expect(attackShare).toBeGreaterThanOrEqual(MIN_ATTACKS_BLOCKED);
    expect(benignShare).toBeLessThanOrEqual(MAX_BENIGN_BLOCKED);
  });
});
