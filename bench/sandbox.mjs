/**
 * Sandbox benchmark (issue 26): what a sandbox adds to a run. The same no-op run (a 2,000-file
 * repository on a local bare remote, a warm checkout, a no-op agent printing a minimal Claude Code
 * stream, the GitHub simulator, real worktrees, the SQLite state file) with `sandbox = "none"` and
 * with `sandbox = "bubblewrap"`, interleaved round by round in one process (the order alternating),
 * so that the machine's load falls on both alike. Two figures, each sandboxed ÷ unsandboxed:
 *
 * - steady state (the figure against the target): one state file and one worktree pool per mode,
 *   kept across rounds (warmed by an unmeasured drain first); each round is a drain of N new items
 *   (earlier rounds' items are skipped) minus an empty drain of the same state file, divided by N:
 *   a run's own cost without the drain's start-up, as `bench/dispatch.mjs --only best` measures it;
 * - per run of a 5-run drain, fixed costs included: a fresh clone, state file and worktree pool per
 *   drain, its whole time divided by its runs (each run then carries a fifth of a fresh checkout and
 *   of the drain's start-up, which dilutes what the sandbox adds).
 *
 * `--base DIR` adds a third variant to the steady state: bubblewrap with the compiled curupira in
 * DIR, interleaved with the two others, to compare a change with the code before it.
 *
 *   node bench/sandbox.mjs [--dist DIR] [--base DIR] [--only steady|drain]
 *     [--rounds N] [--tasks N] [--steady-rounds N] [--steady-tasks N]
 */

import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { engineRun, loadModules, origin, settingsText, simulatorWith, TOKEN } from './dispatch.mjs';

export const name = 'sandbox';

const DEFAULT_ROUNDS = 6;
const DEFAULT_TASKS = 5;
const DEFAULT_STEADY_ROUNDS = 7;
const DEFAULT_STEADY_TASKS = 25;

function noopAgent(dir) {
  const path = join(dir, 'bin', 'noop-claude');
  mkdirSync(join(dir, 'bin'), { recursive: true });
  writeFileSync(
    path,
    `#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"00000000-0000-4000-8000-'"$$"'0000","model":"noop"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"nothing to do","session_id":"00000000-0000-4000-8000-'"$$"'0000","usage":{"input_tokens":1,"output_tokens":1}}'
`,
  );
  chmodSync(path, 0o755);
  return path;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function drain(mods, { root, bare, agent, tasks, sandbox }) {
  const simulator = await simulatorWith(mods, tasks);
  mkdirSync(root, { recursive: true });
  const settingsFile = join(root, 'settings.toml');
  const text = settingsText({ simulatorUrl: simulator.url, bare, agent, maxActive: 1 }).replace(
    '[settings]\n',
    `[settings]\nsandbox = "${sandbox}"\n`,
  );
  writeFileSync(settingsFile, text);
  const { settings } = mods.load.loadSettings(settingsFile);
  spawnSync('git', ['clone', '-q', `file://${bare}`, settings.automations[0].repository.checkoutPath], {
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
  const store = await mods.store.openStore(settings.execution.state_db_path);
  const tokens = mods.token.staticTokenSource(TOKEN);
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  const start = performance.now();
  const result = await mods.engine.runEngine({
    settings,
    mode: 'drain',
    store,
    clock: mods.clock.systemClock,
    log: mods.log.silentLogger(),
    env,
    github: () => mods.client.createGitHubClient({ apiUrl: settings.execution.github.api_url, tokens }),
    tokens,
    transcriptsDir: mods.paths.transcriptsDir(settings),
    stopSignal: new AbortController().signal,
  });
  const elapsed = performance.now() - start;
  await store.close();
  await simulator.close();
  const failed = result.runs.filter((r) => r.status !== 'succeeded');
  if (result.runs.length !== tasks || failed.length > 0)
    throw new Error(
      `${sandbox}: ${failed.length} of ${result.runs.length} runs failed: ${failed[0]?.reason}`,
    );
  policyOf(result.runs, sandbox);
  return elapsed / tasks;
}

function policyOf(runs, sandbox) {
  const policy = runs[0]?.screeningFindings?.find((f) => f.scanner === 'sandbox' && f.rule === 'policy');
  if (!policy?.excerpt.startsWith(sandbox)) throw new Error(`${sandbox}: the run had ${policy?.excerpt}`);
}

function summary(times, label) {
  const none = median(times.none);
  const sandboxed = median(times[label]);
  const ratios = times[label].map((t, i) => t / times.none[i]);
  return { noneMs: none, bubblewrapMs: sandboxed, ratio: sandboxed / none, ratios };
}

function line(name, s) {
  return `  ${name}: none ${s.noneMs.toFixed(1)} ms, bubblewrap ${s.bubblewrapMs.toFixed(1)} ms (medians); sandboxed ÷ unsandboxed ${s.ratio.toFixed(2)}× (rounds ${Math.min(...s.ratios).toFixed(2)}–${Math.max(...s.ratios).toFixed(2)}×)`;
}

/**
 * The steady state: per variant one state file and worktree pool kept across rounds; a round's
 * figure is (drain of `tasks` new items − empty drain) ÷ `tasks`.
 */
async function steady({ variants, dir, bare, agent, rounds, tasks }) {
  const used = new Map(variants.map((v) => [v.label, 0]));
  const drainOf = async (variant, count) => {
    const result = await engineRun(variant.mods, {
      root: join(dir, `steady-${variant.label}`),
      bare,
      agent,
      maxActive: 1,
      tasks: count,
      skip: used.get(variant.label),
      warm: true,
      sandbox: variant.sandbox,
    });
    used.set(variant.label, used.get(variant.label) + count);
    if (count > 0) policyOf(result.runs, variant.sandbox);
    return result.totalMs;
  };
  // Unmeasured: fills each pool, loads the modules, probes bubblewrap, copies /etc.
  for (const variant of variants) await drainOf(variant, 2);
  const times = Object.fromEntries(variants.map((v) => [v.label, []]));
  for (let round = 0; round < rounds; round += 1) {
    // Each variant goes first, in the middle and last equally often.
    const shift = round % variants.length;
    const order = [...variants.slice(shift), ...variants.slice(0, shift)];
    if (Math.floor(round / variants.length) % 2 === 1) order.reverse();
    for (const variant of order) {
      const empty = await drainOf(variant, 0);
      const full = await drainOf(variant, tasks);
      times[variant.label].push((full - empty) / tasks);
    }
  }
  return times;
}

export async function run({
  dist,
  base,
  only,
  log = console.log,
  rounds = DEFAULT_ROUNDS,
  tasks = DEFAULT_TASKS,
  steadyRounds = DEFAULT_STEADY_ROUNDS,
  steadyTasks = DEFAULT_STEADY_TASKS,
} = {}) {
  const mods = await loadModules(dist);
  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-sandbox-'));
  const results = {};
  try {
    const bare = origin(dir);
    const agent = noopAgent(dir);
    if (only !== 'drain') {
      const variants = [
        { label: 'none', mods, sandbox: 'none' },
        { label: 'bubblewrap', mods, sandbox: 'bubblewrap' },
      ];
      if (base) variants.push({ label: 'base', mods: await loadModules(base), sandbox: 'bubblewrap' });
      log(
        `sandbox, steady state: ${steadyRounds} rounds × (drain of ${steadyTasks} − empty drain) ÷ ${steadyTasks}, warm pool, ${variants.length} variants interleaved`,
      );
      const times = await steady({ variants, dir, bare, agent, rounds: steadyRounds, tasks: steadyTasks });
      results.steady = { rounds: steadyRounds, tasks: steadyTasks, ...summary(times, 'bubblewrap') };
      log(line('per run, steady state', results.steady));
      if (base) {
        results.steadyBase = summary(times, 'base');
        log(line('per run, steady state, --base build', results.steadyBase));
        const changed = times.bubblewrap.map((t, i) => t / times.base[i]);
        log(
          `  this build ÷ --base build, bubblewrap: ${(median(times.bubblewrap) / median(times.base)).toFixed(2)}× (rounds ${Math.min(...changed).toFixed(2)}–${Math.max(...changed).toFixed(2)}×)`,
        );
      }
      log(
        `    rounds (ms/run): ${Object.entries(times)
          .map(([label, list]) => `${label} ${list.map((t) => t.toFixed(0)).join(' ')}`)
          .join('; ')}`,
      );
    }
    if (only !== 'steady') {
      log(`sandbox, whole drains: ${rounds} rounds × ${tasks} no-op runs each way, interleaved`);
      const times = { none: [], bubblewrap: [] };
      // One unmeasured round each way: the first drain pays for loading modules and the probe.
      for (const sandbox of ['none', 'bubblewrap'])
        await drain(mods, { root: join(dir, `warm-${sandbox}`), bare, agent, tasks: 1, sandbox });
      for (let round = 0; round < rounds; round += 1) {
        const order = round % 2 === 0 ? ['none', 'bubblewrap'] : ['bubblewrap', 'none'];
        for (const sandbox of order) {
          const perRun = await drain(mods, {
            root: join(dir, `r${round}-${sandbox}`),
            bare,
            agent,
            tasks,
            sandbox,
          });
          times[sandbox].push(perRun);
        }
      }
      results.drain = { rounds, tasks, ...summary(times, 'bubblewrap') };
      log(line(`per run of a ${tasks}-run drain, fixed costs included`, results.drain));
    }
    // The figure against the target (≤ 1.15×) is the steady state's.
    return { ...results, ratio: (results.steady ?? results.drain).ratio };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const option = (flag, fallback) => {
    const at = args.indexOf(flag);
    return at >= 0 ? args[at + 1] : fallback;
  };
  await run({
    dist: option('--dist', process.env.CURUPIRA_DIST ?? join(import.meta.dirname, '../dist')),
    base: option('--base', undefined),
    only: option('--only', undefined),
    rounds: Number(option('--rounds', DEFAULT_ROUNDS)),
    tasks: Number(option('--tasks', DEFAULT_TASKS)),
    steadyRounds: Number(option('--steady-rounds', DEFAULT_STEADY_ROUNDS)),
    steadyTasks: Number(option('--steady-tasks', DEFAULT_STEADY_TASKS)),
  });
}
