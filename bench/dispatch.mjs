/**
 * Dispatch benchmark: the engine's own cost per run. 200 issues, a no-op agent (a shell script that
 * prints a minimal Claude Code stream), real git worktrees on a local bare remote, the GitHub
 * simulator for discovery, at max_active_tasks 1 and 4.
 *
 * Beside it, in the same script, the bare steps one run cannot avoid, done by hand with the same
 * tools: `git worktree add -b` + `git worktree remove --force` + `git branch -D`, and one spawn of the
 * no-op agent. The engine's extra per run (fetch, inspecting the worktree for unpushed work, the
 * state file, the transcript, the prompt) is reported as a ratio to those bare steps. Peak memory
 * is the process's maximum resident set size.
 *
 *   node bench/dispatch.mjs [--dist DIR]      (DIR defaults to ../dist, or $CURUPIRA_DIST)
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export const name = 'dispatch';

const TASKS = 200;
const BARE_SAMPLES = 50;
const TOKEN = 'ghp_benchDispatchToken000000000000000001';

function git(args, cwd) {
  const result = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
    },
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

function noopAgent(dir) {
  const path = join(dir, 'noop-claude');
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

function origin(dir) {
  const seed = join(dir, 'seed');
  mkdirSync(seed, { recursive: true });
  git(['init', '-q', '-b', 'main', seed], dir);
  writeFileSync(join(seed, 'README.md'), '# bench\n');
  git(['add', '-A'], seed);
  git(['commit', '-q', '-m', 'init'], seed);
  const bare = join(dir, 'origin.git');
  git(['clone', '-q', '--bare', seed, bare], dir);
  return bare;
}

/** The bare steps of one run, by hand: worktree add, agent spawn, worktree remove, branch delete. */
function bareSteps(dir, bare, agent) {
  const checkout = join(dir, 'bare-checkout');
  git(['clone', '-q', bare, checkout], dir);
  const samples = [];
  for (let i = 0; i < BARE_SAMPLES; i += 1) {
    const start = performance.now();
    const path = join(dir, 'bare-wt', String(i));
    git(['worktree', 'add', '-q', '-b', `b${i}`, path, 'origin/main'], checkout);
    const run = spawnSync(agent, [], { cwd: path, encoding: 'utf8' });
    if (run.status !== 0) throw new Error('no-op agent failed');
    git(['worktree', 'remove', '--force', path], checkout);
    git(['branch', '-D', `b${i}`], checkout);
    samples.push(performance.now() - start);
  }
  return samples;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function engineRun(mods, dir, bare, agent, maxActive) {
  const world = new mods.sim.SimWorld();
  world.addRepo('acme/api');
  world.addUser('octocat');
  world.addToken(TOKEN, 'octocat');
  world.addLabel('acme/api', 'agent-ready');
  for (let i = 0; i < TASKS; i += 1)
    world.addIssue('acme/api', { title: `Task ${i}`, labels: ['agent-ready'], author: 'octocat' });
  const simulator = await mods.sim.startSimulator({ world });
  const root = join(dir, `engine-${maxActive}`);
  mkdirSync(root, { recursive: true });
  const settingsFile = join(root, 'settings.toml');
  writeFileSync(
    settingsFile,
    `[settings]
workspace_dir = "ws"
state_db_path = "state/state.sqlite3"
max_active_tasks = ${maxActive}
max_pending_tasks = 1000
[settings.polling]
batch_size = 1000
[settings.github]
api_url = "${simulator.url}"
[repositories.api]
remote = "file://${bare}"
[agents.defaults]
profile = "noop"
[agents.profiles.noop]
provider = "claude"
executable = "${agent}"
[automations.bench]
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Do task \${issue_number}: \${issue_title}"
`,
  );
  const { settings } = mods.load.loadSettings(settingsFile);
  const store = await mods.store.openStore(settings.execution.state_db_path);
  const tokens = mods.token.staticTokenSource(TOKEN);
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  const savedEnv = {
    GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM,
    GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL,
  };
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  process.env.GIT_CONFIG_GLOBAL = '/dev/null';
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
  Object.assign(process.env, savedEnv);
  await store.close();
  await simulator.close();
  const failed = result.runs.filter((r) => r.status !== 'succeeded');
  if (result.runs.length !== TASKS || failed.length > 0) {
    throw new Error(
      `expected ${TASKS} successful runs, got ${result.runs.length} (${failed.length} not succeeded: ${failed[0]?.reason})`,
    );
  }
  return elapsed;
}

export async function run({ dist, log = console.log } = {}) {
  const base = pathToFileURL(`${resolve(dist)}/`).href;
  const load = (path) => import(new URL(path, base).href);
  const [sim, loadMod, store, token, engine, clock, logMod, client, paths] = await Promise.all([
    load('simulator/index.js'),
    load('config/load.js'),
    load('store/index.js'),
    load('github/token.js'),
    load('engine/engine.js'),
    load('core/clock.js'),
    load('log.js'),
    load('github/client.js'),
    load('engine/paths.js'),
  ]);
  const mods = { sim, load: loadMod, store, token, engine, clock, log: logMod, client, paths };
  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-dispatch-'));
  try {
    const bare = origin(dir);
    const agent = noopAgent(dir);
    const bare1 = median(bareSteps(dir, bare, agent));
    const results = { tasks: TASKS, bareStepsMs: bare1, engine: {} };
    log(
      `dispatch: ${TASKS} tasks, no-op agent; bare steps (worktree add + spawn + remove + branch -D) median ${bare1.toFixed(1)} ms`,
    );
    for (const maxActive of [1, 4]) {
      const elapsed = await engineRun(mods, dir, bare, agent, maxActive);
      const perRun = elapsed / TASKS;
      const rss = process.resourceUsage().maxRSS / 1024;
      results.engine[maxActive] = {
        totalMs: elapsed,
        perRunMs: perRun,
        ratioToBareSteps: perRun / bare1,
        peakRssMiB: rss,
      };
      log(
        `  max_active_tasks ${maxActive}: ${(elapsed / 1000).toFixed(1)} s total, ${perRun.toFixed(1)} ms per run = ${(perRun / bare1).toFixed(2)}× the bare steps; peak RSS ${rss.toFixed(0)} MiB`,
      );
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const i = args.indexOf('--dist');
  const dist =
    i >= 0 ? args[i + 1] : (process.env.CURUPIRA_DIST ?? new URL('../dist/', import.meta.url).pathname);
  await run({ dist });
}
