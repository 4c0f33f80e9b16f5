/**
 * Runs the benchmarks: `node bench/run.mjs [name…] [--dist DIR] [--json FILE]`.
 * `npm run bench` builds dist/ first and runs them all. To add one, write `bench/<name>.mjs`
 * exporting `run({ dist, log })` (it prints its own lines and returns its figures) and add its
 * name to BENCHMARKS (a benchmark in its own folder also gets a line in MODULES).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const BENCHMARKS = [
  'discovery',
  'dispatch',
  'screening',
  'board',
  'sse',
  'webhooks',
  'fleet',
  'sandbox',
  'agent-spawn',
];
/** Benchmarks that live in their own folder (with data beside them). */
const MODULES = { screening: './screening/run.mjs', board: './board/run.mjs', sse: './board/sse.mjs' };

const args = process.argv.slice(2);
const option = (flag) => {
  const index = args.indexOf(flag);
  if (index < 0) return undefined;
  const [, value] = args.splice(index, 2);
  return value;
};
const dist = resolve(
  option('--dist') ?? process.env.CURUPIRA_DIST ?? new URL('../dist/', import.meta.url).pathname,
);
const json = option('--json');
const wanted = args.length > 0 ? args : BENCHMARKS;
const unknown = wanted.filter((name) => !BENCHMARKS.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}; choose from ${BENCHMARKS.join(', ')}`);
  process.exit(2);
}

if (!existsSync(resolve(dist, 'simulator/index.js'))) {
  console.error(`no compiled curupira in ${dist}; run \`npm run build\` or pass --dist DIR`);
  process.exit(2);
}

const results = {};
for (const name of wanted) {
  const bench = await import(MODULES[name] ?? `./${name}.mjs`);
  results[name] = await bench.run({ dist, log: console.log });
}
if (json) writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
