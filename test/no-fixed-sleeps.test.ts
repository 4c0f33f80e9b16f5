/**
 * Tests wait on an event (a run settled, a round of the watch loop finished, a line logged) or poll
 * a condition with a deadline; a fixed sleep only makes the suite slow and still flaky. This scans
 * every test file for a literal sleep over 200 ms that no `why:` comment right above explains.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const LIMIT_MS = 200;

/** Test code: everything under test/, and the `*.test.ts` files of src/ and bench/. */
function testFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
      return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : [];
    });
  return [
    ...walk(join(ROOT, 'test')).filter((f) => f !== import.meta.filename),
    ...[...walk(join(ROOT, 'src')), ...walk(join(ROOT, 'bench'))].filter((f) => /\.test\.ts$/.test(f)),
  ];
}

/** The most a duration expression can be: a literal, or the sum of the literals in `400 + random() * 2600`. */
function upperBound(expression: string): number | undefined {
  const literals = expression.match(/\b\d[\d_]*(\.\d+)?\b/g);
  if (!literals) return undefined;
  return literals.reduce((sum, literal) => sum + Number(literal.replaceAll('_', '')), 0);
}

/** Calls that sleep; the duration is their argument right after the match. */
const SLEEPS: RegExp[] = [
  // `new Promise((resolve) => setTimeout(resolve, 700))`: a timer whose callback only resolves.
  /\bsetTimeout\(\s*[A-Za-z_$][\w$]*\s*,/g,
  // `sleep(500)`, `await delay(300)`, `pause(400)`, `settle(1000)` (not `clock.sleep(...)`).
  /(?<![.\w$])(?:sleep|delay|pause|settle|wait)\(/g,
];

/** A sleep helper with a default: `const settle = (ms = 300) => new Promise(... setTimeout ...)`. */
const DEFAULTED = /\(\s*[A-Za-z_$][\w$]*\s*=\s*([\d_]+)\s*\)\s*=>.*setTimeout/g;

/** The text of the argument that starts at `from`, up to a `,` or `)` outside any parentheses. */
function argumentAt(text: string, from: number): string {
  let depth = 0;
  for (let i = from; i < text.length; i += 1) {
    const c = text[i];
    if (c === '(') depth += 1;
    else if (c === ')' && depth === 0) return text.slice(from, i);
    else if (c === ')') depth -= 1;
    else if (c === ',' && depth === 0) return text.slice(from, i);
  }
  return text.slice(from);
}

interface FixedSleep {
  line: number;
  ms: number;
  text: string;
}

/** The literal sleeps over the limit in `source` without a `why:` comment in the comment lines just above. */
function fixedSleeps(source: string): FixedSleep[] {
  const lines = source.split('\n');
  const found: FixedSleep[] = [];
  lines.forEach((text, index) => {
    if (/^\s*(\/\/|\*|\/\*)/.test(text)) return;
    const durations = [
      ...SLEEPS.flatMap((call) =>
        [...text.matchAll(call)].map((m) => argumentAt(text, m.index + m[0].length)),
      ),
      ...[...text.matchAll(DEFAULTED)].map((m) => m[1]!),
    ];
    for (const duration of durations) {
      const ms = upperBound(duration);
      if (ms === undefined || ms <= LIMIT_MS || explained(lines, index)) continue;
      found.push({ line: index + 1, ms, text: text.trim() });
    }
  });
  return found;
}

/** A `why:` on the line itself or in the comment lines directly above it. */
function explained(lines: readonly string[], index: number): boolean {
  if (/\bwhy:/.test(lines[index]!)) return true;
  for (let i = index - 1; i >= 0 && /^\s*(\/\/|\*|\/\*)/.test(lines[i]!); i -= 1) {
    if (/\bwhy:/.test(lines[i]!)) return true;
  }
  return false;
}

describe('fixed sleeps in tests', () => {
  it('none over 200 ms without a `why:` comment saying why no event can be waited on', () => {
    const offenders = testFiles().flatMap((file) =>
      fixedSleeps(readFileSync(file, 'utf8')).map(
        (s) => `${relative(ROOT, file)}:${s.line}: ${s.ms} ms: ${s.text}`,
      ),
    );
    expect(offenders).toEqual([]);
  });

  it('the scan finds each form of sleep, and lets short and explained ones through', () => {
    const source = [
      'await new Promise((resolve) => setTimeout(resolve, 700));',
      'await new Promise((r) => setTimeout(r, 1_000));',
      'await sleep(400 + Math.floor(random() * 2600));',
      'const settle = (ms = 300) => new Promise((resolve) => setTimeout(resolve, ms));',
      'await pause(150);',
      'await new Promise((resolve) => setTimeout(resolve, 200));',
      'const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);',
      'await clock.sleep(5000);',
      '// why: nothing tells when the page has drawn the change it must not draw',
      'await new Promise((resolve) => setTimeout(resolve, 700));',
      '// @ts-expect-error',
      'await delay(900);',
    ].join('\n');
    expect(fixedSleeps(source).map((s) => [s.line, s.ms])).toEqual([
      [1, 700],
      [2, 1000],
      [3, 3000],
      [4, 300],
      [12, 900],
    ]);
  });
});
