/**
 * Quality gate for the deterministic scanners on the committed corpora (bench/screening/corpus/):
 * at least 85 % of attacks blocked and at most 2 % of benign items blocked, under the default
 * policy, on the tuning corpus (A) and on the held-out one (B); on the hand-written corpus (C,
 * hand-corpus.mjs) at least 80 % and at most 2 %, every attack category above zero. No timing here: speed is measured by
 * `node bench/run.mjs screening`, never asserted.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { screen } from '../../src/screening/index.js';
import { handCorpus } from './hand-corpus.mjs';
import { CORPORA, type CorpusItem, corpusPath, makeCorpus, serialize } from './make-corpus.mjs';

const MIN_ATTACKS_BLOCKED = 0.85;
const MAX_BENIGN_BLOCKED = 0.02;

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

describe('screening corpus hand-c (written by hand, in another style)', () => {
  const items = load('hand-c');
  const attacks = items.filter((item) => item.label === 'attack');
  const benign = items.filter((item) => item.label === 'benign');

  it('is what hand-corpus.mjs writes, with at least 150 attacks in 20 categories and 150 benign items', () => {
    expect(readFileSync(corpusPath('hand-c'), 'utf8')).toBe(
      `${handCorpus()
        .map((item) => JSON.stringify(item))
        .join('\n')}\n`,
    );
    expect(attacks.length).toBeGreaterThanOrEqual(150);
    expect(benign.length).toBeGreaterThanOrEqual(150);
    expect(new Set(attacks.map((item) => item.category)).size).toBeGreaterThanOrEqual(20);
    expect(new Set(items.map((item) => item.id)).size).toBe(items.length);
  });

  it('blocks at least 80 % of attacks, every category above zero, and at most 2 % of benign items', () => {
    expect(attacks.filter(blocked).length / attacks.length).toBeGreaterThanOrEqual(0.8);
    expect(benign.filter(blocked).length / benign.length).toBeLessThanOrEqual(0.02);
    const categories = [...new Set(attacks.map((item) => item.category))];
    const empty = categories.filter((c) => !attacks.some((item) => item.category === c && blocked(item)));
    expect(empty).toEqual([]);
  });
});
