/**
 * Screening benchmark: the deterministic scanners (src/screening, from the compiled dist/) over the
 * labelled corpora in corpus/. Reports, per category and overall, the share of attacks blocked and
 * the share of benign items blocked under the default policy (block on high and critical), plus
 * items screened per second and milliseconds per item. The "with the classifier" column adds a
 * classifier: by default stand-in-classifier.mjs through the real `classifier_command` runner, a
 * keyword STAND-IN, not Prompt Guard; `--classifier-model DIR` or `--classifier-command` put a real
 * one there (see classifier.mjs, which also measures what each classifier runner costs per item).
 *
 *   node bench/screening/run.mjs [--dist DIR] [--misses | --warnings] [--json FILE]
 *                                [--classifier-model DIR | --classifier-command "prog args"]
 *   node bench/run.mjs screening                 (as part of npm run bench)
 *
 * --misses lists every attack the scanners let through (and whether the classifier blocks it) and every
 * benign item blocked by the scanners or the classifier, with its findings;
 * --warnings also lists benign items that were warned about.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { itemScores, loadClassifiers, runnerCosts, standIn, THRESHOLD } from './classifier.mjs';

export const name = 'screening';

const CORPORA = ['seed-a', 'seed-b', 'hand-c'];
const TIMING_PASSES = 5;
/** Thresholds at which the classifier's effect is also reported. */
const SWEEP = [0.3, 0.5, 0.8];

/** The fields curupira screens for an item: title, body, author, each comment. */
export function fieldsOf(item) {
  return [
    { name: 'title', text: item.title },
    { name: 'body', text: item.body },
    { name: 'author', text: item.author },
    ...item.comments.map((text, i) => ({ name: `comment[${i}]`, text })),
  ];
}

export function loadCorpus(corpus) {
  const path = fileURLToPath(new URL(`./corpus/${corpus}.jsonl`, import.meta.url));
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/**
 * Verdicts for every item, and the share blocked per label and category. `scores` (one per item,
 * optional) adds "blocked with the classifier": the scanners block, or the score reaches THRESHOLD.
 */
export function evaluate(screening, items, scores) {
  const rows = new Map();
  const results = [];
  items.forEach((item, index) => {
    const verdict = screening.screen({ fields: fieldsOf(item) });
    const blocked = verdict.action === 'block';
    const withClassifier = blocked || (scores !== undefined && scores[index] >= THRESHOLD);
    results.push({ item, verdict, blocked, withClassifier, score: scores?.[index] ?? 0 });
    const key = `${item.label}\u0000${item.category}`;
    const row = rows.get(key) ?? {
      label: item.label,
      category: item.category,
      items: 0,
      blocked: 0,
      warned: 0,
      withClassifier: 0,
    };
    row.items += 1;
    if (blocked) row.blocked += 1;
    if (verdict.action === 'warn') row.warned += 1;
    if (withClassifier) row.withClassifier += 1;
    rows.set(key, row);
  });
  const total = (label) => {
    const of = results.filter((result) => result.item.label === label);
    return {
      items: of.length,
      blocked: of.filter((result) => result.blocked).length,
      warned: of.filter((result) => result.verdict.action === 'warn').length,
      withClassifier: of.filter((result) => result.withClassifier).length,
    };
  };
  return {
    rows: [...rows.values()].sort(
      (a, b) => a.label.localeCompare(b.label) || a.category.localeCompare(b.category),
    ),
    attacks: total('attack'),
    benign: total('benign'),
    results,
  };
}

/**
 * Cost per item. CPU time (process.cpuUsage around each item) is the figure that matters: on a
 * shared machine wall-clock time also counts the time other processes held the CPU. Wall-clock
 * throughput is reported beside it.
 */
function time(screening, items) {
  const cpu = [];
  const big = [];
  let chars = 0;
  const sizes = items.map((item) => fieldsOf(item).reduce((sum, field) => sum + field.text.length, 0));
  for (const size of sizes) chars += size;
  for (const item of items) screening.screen({ fields: fieldsOf(item) }); // warm-up: regexes compile lazily
  const started = performance.now();
  for (let pass = 0; pass < TIMING_PASSES; pass++) {
    items.forEach((item, index) => {
      const fields = fieldsOf(item);
      const before = process.cpuUsage();
      screening.screen({ fields });
      const spent = process.cpuUsage(before);
      const ms = (spent.user + spent.system) / 1000;
      cpu.push(ms);
      if (sizes[index] >= 4000) big.push(ms);
    });
  }
  const elapsed = performance.now() - started;
  cpu.sort((a, b) => a - b);
  big.sort((a, b) => a - b);
  const count = cpu.length;
  const mean = (list) => (list.length === 0 ? 0 : list.reduce((a, b) => a + b, 0) / list.length);
  return {
    itemsPerSecondWall: Math.round((count / elapsed) * 1000),
    cpuMeanMs: mean(cpu),
    cpuP95Ms: cpu[Math.floor(count * 0.95)],
    cpuMaxMs: cpu[count - 1],
    bigItems: big.length / TIMING_PASSES,
    bigCpuMeanMs: mean(big),
    bigCpuP95Ms: big[Math.floor(big.length * 0.95)] ?? 0,
    meanChars: Math.round(chars / items.length),
  };
}

const pct = (part, whole) => (whole === 0 ? 'n/a' : `${((part / whole) * 100).toFixed(1)} %`);

/**
 * `classifier` (optional): `{ model: DIR }` or `{ command: [argv] }` scores the corpora with a real
 * classifier instead of the stand-in.
 */
export async function run({ dist, log, misses = false, classifier }) {
  const screening = await import(pathToFileURL(resolve(dist, 'screening/index.js')).href);
  const classifiers = await loadClassifiers(dist);
  const chosen = classifier?.model
    ? classifiers.runners.createPromptGuardClassifier(classifier.model)
    : classifier?.command
      ? classifiers.runners.createCommandClassifier(classifier.command)
      : standIn(classifiers.runners);
  log(
    `\nclassifier for the "with" column: ${chosen.description}${classifier ? '' : ' (a keyword stand-in, not Prompt Guard)'}`,
  );
  const figures = {};
  for (const corpus of CORPORA) {
    const items = loadCorpus(corpus);
    const scores = await itemScores(chosen, items, fieldsOf);
    const result = evaluate(screening, items, scores);
    const timing = time(screening, items);
    log(`\nscreening — corpus ${corpus} (${result.attacks.items} attacks, ${result.benign.items} benign)`);
    log(
      `| label | category | items | blocked by scanners | warned (not blocked) | blocked with the classifier (score ≥ ${THRESHOLD}) |`,
    );
    log('| --- | --- | --- | --- | --- | --- |');
    for (const row of result.rows)
      log(
        `| ${row.label} | ${row.category} | ${row.items} | ${pct(row.blocked, row.items)} | ${pct(row.warned, row.items)} | ${pct(row.withClassifier, row.items)} |`,
      );
    for (const [label, total] of [
      ['attack', result.attacks],
      ['benign', result.benign],
    ])
      log(
        `| **${label}** | **all** | ${total.items} | **${pct(total.blocked, total.items)}** | ${pct(total.warned, total.items)} | **${pct(total.withClassifier, total.items)}** |`,
      );
    const sweep = SWEEP.map((threshold) => {
      const share = (label) => {
        const of = result.results.filter((r) => r.item.label === label);
        return of.filter((r) => r.blocked || r.score >= threshold).length / of.length;
      };
      return { threshold, attacks: share('attack'), benign: share('benign') };
    });
    log(
      `classifier threshold sweep (scanners or score ≥ t): ${sweep.map((row) => `t=${row.threshold}: attacks ${pct(row.attacks, 1)}, benign ${pct(row.benign, 1)}`).join('; ')}`,
    );
    log(
      `cost: ${timing.cpuMeanMs.toFixed(3)} ms CPU per item (p95 ${timing.cpuP95Ms.toFixed(3)}, max ${timing.cpuMaxMs.toFixed(2)}; mean item ${timing.meanChars} chars); items of 4 KB or more (${timing.bigItems}): ${timing.bigCpuMeanMs.toFixed(3)} ms mean, p95 ${timing.bigCpuP95Ms.toFixed(3)}; ${timing.itemsPerSecondWall} items/s wall-clock`,
    );
    if (misses) {
      for (const { item, verdict, blocked, withClassifier } of result.results) {
        const wrong =
          item.label === 'attack'
            ? !blocked
            : withClassifier || (misses === 'all' && verdict.action === 'warn');
        if (!wrong) continue;
        const found = verdict.findings
          .map((f) => `${f.scanner}/${f.rule}:${f.severity}@${f.field}`)
          .join(', ');
        const tag =
          item.label === 'attack'
            ? withClassifier
              ? 'MISSED (classifier blocks)'
              : 'MISSED '
            : blocked
              ? 'BLOCKED'
              : withClassifier
                ? 'BLOCKED by classifier'
                : 'WARNED ';
        log(`  ${tag} ${item.id} ${item.category} [${item.placement}] ${found || '(no findings)'}`);
      }
    }
    figures[corpus] = {
      attacks: result.attacks,
      benign: result.benign,
      attackBlockedShare: result.attacks.blocked / result.attacks.items,
      benignBlockedShare: result.benign.blocked / result.benign.items,
      attackBlockedWithStandInShare: result.attacks.withClassifier / result.attacks.items,
      benignBlockedWithStandInShare: result.benign.withClassifier / result.benign.items,
      categories: result.rows,
      standInSweep: sweep,
      timing,
    };
  }
  figures.classifierRunners = await runnerCosts(classifiers, loadCorpus(CORPORA[0]), fieldsOf, log);
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (flag) => {
    const index = args.indexOf(flag);
    return index < 0 ? undefined : args[index + 1];
  };
  const dist = resolve(
    option('--dist') ?? process.env.CURUPIRA_DIST ?? fileURLToPath(new URL('../../dist/', import.meta.url)),
  );
  const figures = await run({
    dist,
    log: console.log,
    misses: args.includes('--warnings') ? 'all' : args.includes('--misses'),
    classifier: option('--classifier-model')
      ? { model: option('--classifier-model') }
      : option('--classifier-command')
        ? { command: option('--classifier-command').split(' ').filter(Boolean) }
        : undefined,
  });
  const json = option('--json');
  if (json) writeFileSync(json, `${JSON.stringify(figures, null, 2)}\n`);
}
