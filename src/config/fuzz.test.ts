import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { loadSettingsFromText } from './load.js';

/** A small deterministic PRNG (mulberry32) so a failure reproduces from its iteration number. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EXAMPLE = readFileSync(join(import.meta.dirname, '../../examples/settings.toml'), 'utf8');
const JUNK: unknown[] = [
  0,
  -1,
  1.5,
  1e12,
  '',
  ' ',
  '$',
  '${x}',
  '{{',
  '{% if %}',
  'a/b',
  '../..',
  '* * * * * *',
  'Mars/Olympus',
  true,
  false,
  [],
  [1, 'a'],
  ['agent-ready', ''],
  {},
  { provider: 'claude' },
  { nested: { deep: [1] } },
  new Date('2026-01-01T00:00:00Z'),
  'plugins-py/github-issues',
  'cron',
  'codex',
  'x'.repeat(500),
];

type Path = (string | number)[];

function allPaths(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, child] of Object.entries(value)) {
      const path = [...prefix, Array.isArray(value) ? Number(key) : key];
      out.push(path);
      allPaths(child, path, out);
    }
  }
  return out;
}

/** A fresh copy each time: a shared junk value mutated later could come to contain itself. */
function junk(random: () => number): unknown {
  return structuredClone(JUNK[Math.floor(random() * JUNK.length)]);
}

function mutate(doc: Record<string, unknown>, random: () => number): void {
  const paths = allPaths(doc);
  const path = paths[Math.floor(random() * paths.length)]!;
  let parent: Record<string | number, unknown> = doc;
  for (const part of path.slice(0, -1)) parent = parent[part] as Record<string | number, unknown>;
  const key = path[path.length - 1]!;
  const pick = random();
  if (pick < 0.35) {
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete parent[key];
  } else if (pick < 0.85) {
    parent[key] = junk(random);
  } else {
    parent[`${String(key)}_x`] = junk(random);
  }
}

function breakText(text: string, random: () => number): string {
  const at = Math.floor(random() * text.length);
  const pick = random();
  if (pick < 0.3) return text.slice(0, at);
  if (pick < 0.6) return text.slice(0, at) + '[]"=\'{}#\n'.charAt(Math.floor(random() * 9)) + text.slice(at);
  const lines = text.split('\n');
  lines.splice(Math.floor(random() * lines.length), 1);
  return lines.join('\n');
}

describe('configuration fuzz', () => {
  it('turns thousands of random mutations of the example into a result or a ConfigError, never a crash', () => {
    const base = parse(EXAMPLE) as Record<string, unknown>;
    let valid = 0;
    let rejected = 0;
    for (let iteration = 0; iteration < 3000; iteration += 1) {
      const random = rng(iteration + 1);
      let text: string;
      if (iteration % 4 === 3) {
        text = breakText(EXAMPLE, random);
      } else {
        const doc = structuredClone(base);
        const rounds = 1 + Math.floor(random() * 3);
        for (let r = 0; r < rounds; r += 1) mutate(doc, random);
        try {
          text = stringify(doc);
        } catch {
          continue;
        }
      }
      try {
        loadSettingsFromText(text, '/fuzz/settings.toml');
        valid += 1;
      } catch (error) {
        if (!(error instanceof ConfigError)) {
          throw new Error(
            `iteration ${iteration}: ${String(error)}\n${(error as Error).stack}\n--- input ---\n${text}`,
          );
        }
        expect(error.issues.length).toBeGreaterThan(0);
        for (const issue of error.issues) expect(issue.message.length).toBeGreaterThan(0);
        rejected += 1;
      }
    }
    expect(valid).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(1000);
    // 3000 full loads take 15-20 s alone; on a shared machine under the whole suite, more.
  }, 120_000);
});
