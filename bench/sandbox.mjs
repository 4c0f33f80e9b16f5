/**
 * Sandbox benchmark (issue 26): what a sandbox adds to a run. The same no-op run (a 2,000-file
 * repository on a local bare remote, a warm checkout, a no-op agent printing a minimal Claude Code
 * stream, the GitHub simulator, real worktrees, the SQLite state file) with `sandbox = "none"` and
 * with `sandbox = "bubblewrap"`, interleaved round by round in one process (the order alternating),
 * so that the machine's load falls on both alike. The figure is sandboxed ÷ unsandboxed per run.
 *
 *   node bench/sandbox.mjs [--dist DIR] [--rounds N] [--tasks N]
 */

import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { origin, settingsText, simulatorWith, TOKEN } from './dispatch.mjs';

export const name = 'sandbox';

const DEFAULT_ROUNDS = 6;
const DEFAULT_TASKS = 5;

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
  const policy = result.runs[0].screeningFindings?.find(
    (f) => f.scanner === 'sandbox' && f.rule === 'policy',
  );
  if (!policy?.excerpt.startsWith(sandbox)) throw new Error(`${sandbox}: the run had ${policy?.excerpt}`);
  return elapsed / tasks;
}

export async function run({ dist, log = console.log, rounds = DEFAULT_ROUNDS, tasks = DEFAULT_TASKS } = {}) {
  const base = pathToFileURL(`${resolve(dist)}/`).href;
  const load = (path) => import(new URL(path, base).href);
  const [sim, loadMod, store, token, engine, clock, logMod, client, paths] = await Promise.all([
    load('simulator/index.js'),
    load('config/load.js'),
    load('store/index.js'),
    load('github/token.js'),
    load('features.js'),
    load('core/clock.js'),
    load('log.js'),
    load('github/client.js'),
    load('engine/paths.js'),
  ]);
  const mods = { sim, load: loadMod, store, token, engine, clock, log: logMod, client, paths };
  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-sandbox-'));
  try {
    const bare = origin(dir);
    const agent = noopAgent(dir);
    log(`sandbox: ${rounds} rounds × ${tasks} no-op runs each way, interleaved`);
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
    const none = median(times.none);
    const sandboxed = median(times.bubblewrap);
    const ratios = times.bubblewrap.map((t, i) => t / times.none[i]);
    log(
      `  per run: none ${none.toFixed(0)} ms, bubblewrap ${sandboxed.toFixed(0)} ms (medians); sandboxed ÷ unsandboxed ${(sandboxed / none).toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×)`,
    );
    return { rounds, tasks, noneMs: none, bubblewrapMs: sandboxed, ratio: sandboxed / none, ratios };
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
    rounds: Number(option('--rounds', DEFAULT_ROUNDS)),
    tasks: Number(option('--tasks', DEFAULT_TASKS)),
  });
}
