/**
 * Dispatch benchmark: the engine's own cost per run, against the bare steps a run cannot avoid.
 *
 * A 2,000-file repository on a local bare remote, a no-op agent (a shell script that prints a
 * minimal Claude Code stream), the GitHub simulator for discovery, real worktrees, the SQLite state
 * file. Measured in one run, on a real-disk folder and on a RAM disk (/dev/shm), at concurrency 1
 * and 4:
 *
 * - **bare steps**: `git fetch` + `git worktree add -b` + one spawn of the agent + `git worktree
 *   remove --force` + `git branch -D`, by hand, N at a time (the same concurrency as the engine);
 * - **curupira**: the engine in drain mode over as many issues, `max_active_tasks` = 1 or 4.
 *
 * Then: processes per run (every git process, children included, counted with `GIT_TRACE2_EVENT`
 * pointed at a folder: git writes one file per process), main-thread time per run (the event loop's
 * busy time), the ledger at 100,000 runs (per-run time and store open time against an empty
 * ledger), idle RSS of `curupira run --watch` with 1 and 50 automations, and `--version` start-up.
 *
 * Each drain runs twice per mode: without worktree reuse (`reuse_worktrees = false`), with it, and
 * with it from a checkout cloned before the clock starts ("warm", as the bare steps' checkout is).
 *
 *   node bench/dispatch.mjs [--dist DIR] [--tasks N]   (DIR defaults to ../dist, or $CURUPIRA_DIST)
 *   node bench/dispatch.mjs --only disks|spawn|startup  (one part alone)
 *   node bench/dispatch.mjs --only best [--tasks N] [--rounds R] [--disk-tasks N]  (against the
 *     best bare technique: kept worktrees, one fetch per round; N ≥ 50 on the RAM disk)
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export const name = 'dispatch';

const DEFAULT_TASKS = 24;
const FILES = 2000;
const COUNTED_TASKS = 10;
const LEDGER_RUNS = 100_000;
const LEDGER_TASKS = 20;
const STARTUP_SAMPLES = 15;
export const TOKEN = 'ghp_benchDispatchToken000000000000000001';

const gitEnv = () => ({
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
});

function git(args, cwd) {
  const result = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: gitEnv(),
  });
  if (result.status !== 0)
    throw new Error(`git ${args.join(' ')} failed: ${result.error?.message ?? result.stderr}`);
  return result.stdout;
}

/** Spawns without blocking, so N bare-step workers really overlap. */
function spawnAsync(command, args, cwd) {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: gitEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0 ? done() : fail(new Error(`${command} ${args.join(' ')} failed: ${stderr}`)),
    );
  });
}

export function noopAgent(dir) {
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

/** A bare remote whose one commit holds FILES small files in 40 folders. */
export function origin(dir) {
  const seed = join(dir, 'seed');
  mkdirSync(seed, { recursive: true });
  git(['init', '-q', '-b', 'main', seed], dir);
  for (let i = 0; i < FILES; i += 1) {
    const folder = join(seed, `pkg${i % 40}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `file${i}.ts`), `export const value${i} = ${i};\n`);
  }
  git(['add', '-A'], seed);
  git(['commit', '-q', '-m', 'init'], seed);
  const bare = join(dir, 'origin.git');
  git(['clone', '-q', '--bare', seed, bare], dir);
  rmSync(seed, { recursive: true, force: true });
  return bare;
}

/** A promise-chain mutex: `locked(fn)` runs fn once every earlier holder has finished. */
function mutex() {
  let tail = Promise.resolve();
  return (fn) => {
    const result = tail.then(fn);
    tail = result.catch(() => undefined);
    return result;
  };
}

/**
 * The bare steps of `runs` runs, `concurrency` at a time; returns wall-clock ms per run. One at a
 * time, every run fetches. Four at a time, the runs go in rounds of four: one fetch, then four
 * overlapping runs whose `worktree add` and `worktree remove` take turns (git 2.39 cannot run them
 * at once in one repository: one trips over the other's half-written `.git/worktrees/<id>`, and a
 * fetch over a new worktree's HEAD), while the agents and `branch -D` overlap.
 */
async function bareSteps(dir, bare, agent, runs, concurrency) {
  const checkout = join(dir, `bare-checkout-${concurrency}`);
  mkdirSync(dir, { recursive: true });
  git(['clone', '-q', bare, checkout], dir);
  const locked = mutex();
  const one = async (i) => {
    const path = join(dir, `bare-wt-${concurrency}`, String(i));
    await locked(() =>
      spawnAsync('git', ['worktree', 'add', '-q', '-b', `b${i}`, path, 'origin/main'], checkout),
    );
    await spawnAsync(agent, [], path);
    await locked(() => spawnAsync('git', ['worktree', 'remove', '--force', path], checkout));
    await spawnAsync('git', ['branch', '-q', '-D', `b${i}`], checkout);
  };
  const start = performance.now();
  for (let i = 0; i < runs; i += concurrency) {
    await spawnAsync('git', ['fetch', '-q', 'origin'], checkout);
    const round = Array.from({ length: Math.min(concurrency, runs - i) }, (_, k) => one(i + k));
    await Promise.all(round);
  }
  const perRun = (performance.now() - start) / runs;
  // git may still be writing there (a detached `gc --auto`); the whole folder goes at the end anyway.
  try {
    rmSync(checkout, { recursive: true, force: true, maxRetries: 5 });
  } catch {}
  return perRun;
}

let keptBranches = 0;

/**
 * The best bare steps as a careful hand-written script runs them: a shell script, so that no
 * process's spawn is slowed by this one's heap (a fork costs in proportion to the forking process's
 * memory). Arguments: the checkout, the number of runs, the concurrency, the agent, the folder of
 * kept worktrees, the first branch number.
 */
const KEPT_SCRIPT = `#!/bin/sh
set -e
checkout=$1 runs=$2 concurrency=$3 agent=$4 slots=$5 n=$6
one() {
  cd "$slots/$1"
  git checkout -q --no-track -B "kept-$2" origin/main
  "$agent" > /dev/null
  git status --porcelain > /dev/null
  git checkout -q --detach
  git branch -q -D "kept-$2"
}
done_runs=0
while [ "$done_runs" -lt "$runs" ]; do
  git -C "$checkout" fetch -q origin
  pids=""
  k=0
  while [ "$k" -lt "$concurrency" ] && [ "$done_runs" -lt "$runs" ]; do
    n=$((n + 1))
    one "$k" "$n" &
    pids="$pids $!"
    k=$((k + 1))
    done_runs=$((done_runs + 1))
  done
  for pid in $pids; do wait "$pid"; done
done
`;

/**
 * The best bare technique: what a careful hand-written script does. Worktrees kept between runs
 * (one per concurrent run, made once, before any clock starts), one `git fetch` per round, then per
 * run `checkout --no-track -B <branch> origin/main`, the agent, `status --porcelain`, `checkout
 * --detach` and `branch -D`, run by a shell script (`KEPT_SCRIPT`). Returns wall-clock ms per run.
 */
async function keptSteps(dir, bare, agent, runs, concurrency) {
  const checkout = join(dir, `kept-checkout-${concurrency}`);
  const slots = join(dir, `kept-wt-${concurrency}`);
  const script = join(dir, 'kept-steps.sh');
  if (!existsSync(checkout)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(script, KEPT_SCRIPT);
    git(['clone', '-q', bare, checkout], dir);
    for (let k = 0; k < concurrency; k += 1)
      git(['worktree', 'add', '-q', '--detach', join(slots, String(k)), 'origin/main'], checkout);
  }
  const first = keptBranches;
  keptBranches += runs;
  const start = performance.now();
  await spawnAsync(
    '/bin/sh',
    [script, checkout, String(runs), String(concurrency), agent, slots, String(first)],
    dir,
  );
  return (performance.now() - start) / runs;
}

export function settingsText({ simulatorUrl, bare, agent, maxActive, automations = 1, historyLimit, reuse }) {
  const blocks = [];
  for (let a = 0; a < automations; a += 1) {
    blocks.push(`[automations.bench${a === 0 ? '' : a}]
repository = "api"
repo = "acme/api"
labels = ["${a === 0 ? 'agent-ready' : `other-${a}`}"]
prompt = "Do task \${issue_number}: \${issue_title}"
`);
  }
  return `[settings]
workspace_dir = "ws"
state_db_path = "state/state.sqlite3"
max_active_tasks = ${maxActive}
max_pending_tasks = 1000
${historyLimit ? `history_limit = ${historyLimit}\n` : ''}${reuse === false ? 'reuse_worktrees = false\n' : ''}[settings.screening]
required = false
[settings.polling]
batch_size = 1000
[settings.github]
api_url = "${simulatorUrl}"
[repositories.api]
remote = "file://${bare}"
[agents.defaults]
profile = "noop"
[agents.profiles.noop]
provider = "claude"
executable = "${agent}"
${blocks.join('')}`;
}

/** The one simulator thread of this process (bench/simulator-worker.mjs), made on first use. */
let simulatorThread;

/**
 * Asks the simulator thread (made on first use, from `simUrl`) and waits for its answer. The thread
 * keeps the process alive only while a question is pending.
 */
function askSimulatorThread(simUrl, message) {
  if (!simulatorThread) {
    const worker = new Worker(new URL('./simulator-worker.mjs', import.meta.url), { workerData: { simUrl } });
    simulatorThread = { worker, pending: new Map(), next: 0 };
    const { pending } = simulatorThread;
    const failAll = (error) => {
      for (const { fail } of pending.values()) fail(error);
      pending.clear();
      simulatorThread = undefined;
    };
    worker.on('message', ({ id, error, ...answer }) => {
      const waiting = pending.get(id);
      pending.delete(id);
      if (pending.size === 0) worker.unref();
      if (error) waiting?.fail(new Error(`the simulator thread: ${error}`));
      else waiting?.done(answer);
    });
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the simulator thread exited (${code})`)));
  }
  const thread = simulatorThread;
  thread.next += 1;
  const id = thread.next;
  thread.worker.ref();
  return new Promise((done, fail) => {
    thread.pending.set(id, { done, fail });
    thread.worker.postMessage({ id, ...message });
  });
}

/**
 * The GitHub simulator holding `tasks` issues labelled `agent-ready` after `skip` that no automation
 * matches (`benchWorld` of bench/simulator-worker.mjs), run in a worker thread: answering the
 * engine's GitHub queries is GitHub's work, which against real GitHub runs on another machine, so it
 * stays off the engine's thread (and out of its main-thread figures). One thread serves the whole
 * process, so the simulator's code is as warm from drain to drain as it was in-process. Returns
 * `{ url, close() }`.
 */
export async function simulatorWith(mods, tasks, skip = 0) {
  if (!mods.simUrl) throw new Error('simulatorWith needs mods.simUrl, the compiled simulator module');
  const { key, url } = await askSimulatorThread(mods.simUrl, { start: { token: TOKEN, tasks, skip } });
  return { url, close: () => askSimulatorThread(mods.simUrl, { close: key }).then(() => undefined) };
}

/**
 * One drain of `tasks` issues. Returns wall-clock ms per run, main-thread (event-loop busy) ms per
 * run, and the state file's open time. `seedLedger` fills the ledger with that many finished runs
 * first; `traceDir` counts git processes.
 */
export async function engineRun(mods, opts) {
  const { root, bare, agent, maxActive, tasks, seedLedger = 0, historyLimit, traceDir } = opts;
  const simulator = await simulatorWith(mods, tasks, opts.skip ?? 0);
  mkdirSync(root, { recursive: true });
  const settingsFile = join(root, 'settings.toml');
  writeFileSync(
    settingsFile,
    // The engine's own cost: the sandbox's is measured apart (bench/sandbox.mjs), as the bare steps
    // have none.
    settingsText({
      simulatorUrl: simulator.url,
      bare,
      agent,
      maxActive,
      historyLimit,
      reuse: opts.reuse,
    }).replace('[settings]\n', `[settings]\nsandbox = "${opts.sandbox ?? 'none'}"\n`),
  );
  const { settings } = mods.load.loadSettings(settingsFile);
  // `warm`: the repository's checkout is cloned before the clock starts, as the bare steps' is, so
  // the figure is a run's own cost without the drain's one clone spread over its runs.
  if (opts.warm && !existsSync(settings.automations[0].repository.checkoutPath))
    git(['clone', '-q', `file://${bare}`, settings.automations[0].repository.checkoutPath], root);
  if (seedLedger > 0) await seed(mods, settings.execution.state_db_path, seedLedger);
  const openStart = performance.now();
  const store = await mods.store.openStore(settings.execution.state_db_path);
  const openMs = performance.now() - openStart;
  const tokens = mods.token.staticTokenSource(TOKEN);
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
  const saved = { ...process.env };
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  process.env.GIT_CONFIG_GLOBAL = '/dev/null';
  if (traceDir) {
    mkdirSync(traceDir, { recursive: true });
    process.env.GIT_TRACE2_EVENT = traceDir;
  }
  mods.spawner.useSpawnHelper(opts.helper !== false);
  const elu = performance.eventLoopUtilization();
  const cpu = mainThreadCpuMs();
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
  const busy = performance.eventLoopUtilization(elu).active;
  const mainCpu = mainThreadCpuMs() - cpu;
  mods.spawner.useSpawnHelper(true);
  for (const key of ['GIT_CONFIG_NOSYSTEM', 'GIT_CONFIG_GLOBAL', 'GIT_TRACE2_EVENT']) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
  await store.close();
  await simulator.close();
  const failed = result.runs.filter((r) => r.status !== 'succeeded');
  if (result.runs.length !== tasks || failed.length > 0) {
    throw new Error(
      `expected ${tasks} successful runs, got ${result.runs.length} (${failed.length} not succeeded: ${failed[0]?.reason})`,
    );
  }
  return {
    totalMs: elapsed,
    perRunMs: tasks > 0 ? elapsed / tasks : 0,
    mainThreadMsPerRun: tasks > 0 ? busy / tasks : 0,
    mainThreadCpuMsPerRun: tasks > 0 ? mainCpu / tasks : 0,
    openMs,
    runs: result.runs,
  };
}

/**
 * CPU time of this process's main thread alone (Linux: `/proc/self/task/<pid>/stat`, user + system
 * ticks at 100 Hz). Unlike the event loop's busy time it does not grow when the machine is loaded.
 */
function mainThreadCpuMs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** Fills the ledger with `count` finished runs of automation `bench`, older than any real run. */
async function seed(mods, path, count) {
  const store = await mods.store.openStore(path);
  await store.close();
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path);
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
     INSERT INTO runs (id, automation_id, task_key, repo, task_type, item_id, item_key, item_title,
       item_url, status, created_at, started_at, finished_at, profile, provider, prompt)
     SELECT printf('r_0000000001%08d', i), 'bench', 'old:' || i, 'acme/api', 'issue', i, 'old:' || i,
       'Old task ' || i, 'https://github.invalid/' || i, 'succeeded', '2020-01-01T00:00:00.000Z',
       '2020-01-01T00:00:00.000Z', '2020-01-01T00:00:01.000Z', 'noop', 'claude', 'Do old task ' || i
     FROM n`,
  ).run(count - 1);
  db.close();
}

/**
 * The store's share of a run at `seedRuns` runs in the ledger, on the RAM disk: a run's writes
 * (create + five updates) and a prune that finds nothing to delete (what every run cost before
 * pruning waited for an automation to be over `history_limit`). Milliseconds per run.
 */
async function ledgerOps(mods, dir, seedRuns) {
  const path = join(dir, `ledger-ops-${seedRuns}`, 'state.sqlite3');
  mkdirSync(join(dir, `ledger-ops-${seedRuns}`), { recursive: true });
  if (seedRuns > 0) await seed(mods, path, seedRuns);
  const store = await mods.store.openStore(path);
  const write = async (i) => {
    const run = await store.createRun({
      ...{ automationId: 'bench', taskKey: `k${i}`, repo: 'acme/api', taskType: 'issue', itemId: String(i) },
      ...{ itemKey: `k${i}`, itemTitle: 't', itemUrl: 'u', status: 'preparing', prompt: 'p' },
    });
    for (const patch of [
      { worktreePath: '/w' },
      { transcriptPath: '/t' },
      { status: 'running', agentPid: 1 },
      { exitCode: 0 },
      { status: 'succeeded', finishedAt: '2026-01-01T00:00:00.000Z' },
    ])
      await store.updateRun(run.id, patch);
  };
  const time = async (fn) => {
    const start = performance.now();
    for (let i = 0; i < 100; i += 1) await fn(i);
    return (performance.now() - start) / 100;
  };
  const writes = await time(write);
  const prune = await time(() => store.pruneRuns('bench', 1_000_000));
  await store.close();
  return { writesMsPerRun: writes, pruneMs: prune };
}

/** Counts git processes (one trace file each) and agent spawns per run. */
function countProcesses(traceDir, runs) {
  const files = readdirSync(traceDir);
  const commands = new Map();
  for (const file of files) {
    const text = readFileSync(join(traceDir, file), 'utf8');
    const start = text.split('\n').find((line) => line.includes('"event":"start"'));
    const argv = start ? JSON.parse(start).argv : ['?'];
    const key = argv.slice(1).find((arg) => !arg.startsWith('-') && !arg.includes('=')) ?? '?';
    commands.set(key, (commands.get(key) ?? 0) + 1);
  }
  return {
    gitPerRun: files.length / runs,
    byCommand: Object.fromEntries([...commands].map(([k, v]) => [k, +(v / runs).toFixed(2)])),
  };
}

/** RSS of `curupira run --watch` once idle, with `automations` automations that find nothing. */
async function idleRss(mods, dist, dir, bare, agent, automations) {
  const simulator = await simulatorWith(mods, 0);
  const root = join(dir, `rss-${automations}`);
  mkdirSync(root, { recursive: true });
  const settingsFile = join(root, 'settings.toml');
  writeFileSync(
    settingsFile,
    settingsText({ simulatorUrl: simulator.url, bare, agent, maxActive: 1, automations }),
  );
  const child = spawn(process.execPath, [join(dist, 'cli/main.js'), 'run', '--watch', '-c', settingsFile], {
    cwd: root,
    env: { ...gitEnv(), GH_TOKEN: TOKEN, HOME: root },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    return await rssAfter(child, 'run --watch');
  } finally {
    await simulator.close();
  }
}

/**
 * The RSS (MiB) of a child started with its stderr piped, 4 s after its start: long enough for the
 * first poll of every automation and a settled heap. The child is killed after.
 */
async function rssAfter(child, label) {
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  try {
    await new Promise((done) => setTimeout(done, 4000));
    if (child.exitCode !== null) throw new Error(`${label} exited: ${stderr}`);
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const closed = new Promise((done) => child.once('close', done));
      child.kill('SIGKILL');
      await closed;
    }
  }
}

/**
 * The floor under an idle daemon's RSS: what Node.js weighs with nothing loaded, with the pieces
 * any daemon doing this job holds (better-sqlite3 with a WAL database, node:http polling a local
 * server once a second, one child process started), and with zod imported besides (curupira's
 * settings are validated with it). Measured as `idleRss` measures curupira: 4 s after the start.
 */
const FLOOR_SCRIPT = `
const [mode, url, sqlite, zod, dbFile] = process.argv.slice(2);
if (mode !== 'node') {
  const { request } = await import('node:http');
  const { spawnSync } = await import('node:child_process');
  const { default: Database } = await import(sqlite);
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  db.exec('create table if not exists t (a)');
  const poll = () => {
    db.prepare('insert into t values (?)').run(Date.now());
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => res.resume());
    req.on('error', () => {});
    req.end('{"query":"{ viewer { login } }"}');
  };
  spawnSync('git', ['--version']);
  setInterval(poll, 1000);
  poll();
  if (mode === 'zod') await import(zod);
}
setInterval(() => {}, 1000);
`;

async function floorRss(mods, dist, dir, mode) {
  const simulator = await simulatorWith(mods, 0);
  const root = join(dir, `floor-${mode}`);
  mkdirSync(root, { recursive: true });
  const script = join(root, 'floor.mjs');
  writeFileSync(script, FLOOR_SCRIPT);
  // The packages as curupira's build resolves them.
  const resolveFrom = (name) => pathToFileURL(createRequire(join(dist, 'cli/main.js')).resolve(name)).href;
  const child = spawn(
    process.execPath,
    [
      script,
      mode,
      `${simulator.url}/graphql`,
      resolveFrom('better-sqlite3'),
      resolveFrom('zod'),
      join(root, 'db.sqlite3'),
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  try {
    return await rssAfter(child, `the floor's ${mode} process`);
  } finally {
    await simulator.close();
  }
}

/**
 * Median wall-clock ms of each command line, the samples interleaved (one of each per round), so
 * that a change in the machine's load moves them all alike and the ratios hold within a run.
 */
function startupMs(commands) {
  const samples = commands.map(() => []);
  for (let i = 0; i < STARTUP_SAMPLES; i += 1) {
    for (const [index, args] of commands.entries()) {
      const start = performance.now();
      const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
      samples[index].push(performance.now() - start);
      if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`);
    }
  }
  return samples.map(median);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const ms = (value) => `${value.toFixed(1)} ms`;

/** The field-by-field mean of drain results. */
function meanOf(list) {
  const out = {};
  for (const key of Object.keys(list[0])) out[key] = list.reduce((sum, r) => sum + r[key], 0) / list.length;
  return out;
}

/** Real-disk runs are many times slower (git's file work waits on the kernel): a third as many. */
async function disks(mods, dir, bare, agent, tasks, log) {
  const places = [['real disk', dir, Math.max(4, Math.round(tasks / 12) * 4)]];
  if (existsSync('/dev/shm'))
    places.push(['RAM disk', mkdtempSync('/dev/shm/curupira-bench-dispatch-'), tasks]);
  const results = {};
  try {
    for (const [label, base, runs] of places) {
      results[label] = { runs };
      for (const concurrency of [1, 4]) {
        // The bare steps before and after the engine, averaged: the machine's load drifts. The
        // engine six times between them: without worktree reuse (`reuse_worktrees = false`), with
        // it, and with it from a checkout cloned before the clock starts ("warm", as the bare
        // steps' checkout is), in the order without, with, warm, warm, with, without; each figure
        // the mean of its two.
        const before = await bareSteps(base, bare, agent, runs, concurrency);
        const drains = { rebuild: [], reuse: [], warm: [] };
        for (const [i, mode] of ['rebuild', 'reuse', 'warm', 'warm', 'reuse', 'rebuild'].entries()) {
          drains[mode].push(
            await engineRun(mods, {
              root: join(base, `engine-${concurrency}-${i}`),
              ...{
                bare,
                agent,
                maxActive: concurrency,
                tasks: runs,
                reuse: mode !== 'rebuild',
                warm: mode === 'warm',
              },
            }),
          );
        }
        const rebuild = meanOf(drains.rebuild);
        const engine = meanOf(drains.reuse);
        const warm = meanOf(drains.warm);
        const bareMs = (before + (await bareSteps(join(base, 'again'), bare, agent, runs, concurrency))) / 2;
        const ratio = engine.perRunMs / bareMs;
        const rebuildRatio = rebuild.perRunMs / bareMs;
        const warmRatio = warm.perRunMs / bareMs;
        results[label][concurrency] = {
          bareStepsMsPerRun: bareMs,
          ...engine,
          ratioToBareSteps: ratio,
          withoutReuse: { ...rebuild, ratioToBareSteps: rebuildRatio },
          warmCheckout: { ...warm, ratioToBareSteps: warmRatio },
        };
        log(
          `  ${label} (${runs} runs), concurrency ${concurrency}: curupira ${ms(engine.perRunMs)} per run, bare steps ${ms(bareMs)} = ${ratio.toFixed(2)}× (checkout cloned first ${ms(warm.perRunMs)} = ${warmRatio.toFixed(2)}×; without worktree reuse ${ms(rebuild.perRunMs)} = ${rebuildRatio.toFixed(2)}×); main thread ${ms(engine.mainThreadMsPerRun)} per run (CPU ${ms(engine.mainThreadCpuMsPerRun)}; without reuse ${ms(rebuild.mainThreadCpuMsPerRun)})`,
        );
      }
    }
  } finally {
    for (const [, base] of places.slice(1)) rmSync(base, { recursive: true, force: true });
  }
  return results;
}

/**
 * curupira against the best bare technique (`keptSteps`), rounds interleaved with the order
 * alternating, the naive bare steps (`bareSteps`) beside them for history. curupira drains with
 * worktree reuse into one state file and one workspace per concurrency, warmed by a first drain of
 * `concurrency` runs (its kept worktrees, as the script's are made before the clock); each round
 * also drains once with nothing to run, and that fixed start-up (settings, store, discovery,
 * shutdown) is subtracted: `(drain of N − empty drain) / N`. Each ratio is taken within its round;
 * the figure is the median over the rounds.
 */
async function bestBare(mods, { base, label, bare, agent, runs, rounds, log }) {
  const results = { runs, rounds };
  for (const concurrency of [1, 4]) {
    const root = join(base, `best-engine-${concurrency}`);
    const common = { root, bare, agent, maxActive: concurrency, warm: true };
    let used = 0;
    const drain = async (tasks) => {
      const result = await engineRun(mods, { ...common, tasks, skip: used });
      used += tasks;
      return result;
    };
    await drain(concurrency);
    await keptSteps(base, bare, agent, concurrency, concurrency);
    const perRound = [];
    for (let r = 0; r < rounds; r += 1) {
      const round = {
        naiveMs: await bareSteps(join(base, `naive-${concurrency}-${r}`), bare, agent, runs, concurrency),
      };
      const engineFirst = r % 2 === 0;
      if (!engineFirst) round.keptMs = await keptSteps(base, bare, agent, runs, concurrency);
      const empty = await drain(0);
      const full = await drain(runs);
      round.engineMs = (full.totalMs - empty.totalMs) / runs;
      round.fixedMs = empty.totalMs;
      round.mainThreadCpuMs = full.mainThreadCpuMsPerRun;
      if (engineFirst) round.keptMs = await keptSteps(base, bare, agent, runs, concurrency);
      round.ratio = round.engineMs / round.keptMs;
      round.naiveRatio = round.engineMs / round.naiveMs;
      perRound.push(round);
    }
    const ratios = perRound.map((r) => r.ratio);
    results[concurrency] = {
      ratio: median(ratios),
      naiveRatio: median(perRound.map((r) => r.naiveRatio)),
      engineMs: median(perRound.map((r) => r.engineMs)),
      keptMs: median(perRound.map((r) => r.keptMs)),
      naiveMs: median(perRound.map((r) => r.naiveMs)),
      fixedMs: median(perRound.map((r) => r.fixedMs)),
      rounds: perRound,
    };
    const f = results[concurrency];
    log(
      `  ${label}, concurrency ${concurrency} (${rounds} rounds of ${runs} runs): curupira ${ms(f.engineMs)} per run (drain's fixed ${ms(f.fixedMs)} subtracted), best bare steps ${ms(f.keptMs)} = ${f.ratio.toFixed(2)}× (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×); naive bare steps ${ms(f.naiveMs)} = ${f.naiveRatio.toFixed(2)}×`,
    );
  }
  return results;
}

/** `--only best`: the comparison with the best bare technique, on the RAM disk and the real disk. */
async function best(mods, { dir, bare, agent, tasks, rounds, diskTasks, log }) {
  const results = {};
  if (existsSync('/dev/shm')) {
    const ram = mkdtempSync('/dev/shm/curupira-bench-best-');
    try {
      results.ram = await bestBare(mods, {
        base: ram,
        label: 'RAM disk',
        bare,
        agent,
        runs: tasks,
        rounds,
        log,
      });
    } finally {
      rmSync(ram, { recursive: true, force: true });
    }
  }
  results.disk = await bestBare(mods, {
    base: join(dir, 'best'),
    ...{ label: 'real disk', bare, agent, runs: diskTasks, rounds, log },
  });
  return results;
}

/** The compiled modules a drain needs, from `dist`. */
export async function loadModules(dist) {
  const base = pathToFileURL(`${resolve(dist)}/`).href;
  const load = (path) => import(new URL(path, base).href);
  const [sim, loadMod, store, token, engine, clock, logMod, client, paths, spawner] = await Promise.all([
    load('simulator/index.js'),
    load('config/load.js'),
    load('store/index.js'),
    load('github/token.js'),
    load('features.js'),
    load('core/clock.js'),
    load('log.js'),
    load('github/client.js'),
    load('engine/paths.js'),
    load('process/spawner.js').catch(() => ({ useSpawnHelper() {} })), // builds before the helper
  ]);
  const simUrl = new URL('simulator/index.js', base).href;
  return { sim, simUrl, load: loadMod, store, token, engine, clock, log: logMod, client, paths, spawner };
}

/**
 * `only = 'startup'` measures idle RSS and start-up alone (seconds instead of minutes); `only =
 * 'spawn'` the command helper against spawning from the engine alone.
 */
export async function run({
  dist,
  log = console.log,
  tasks = DEFAULT_TASKS,
  only,
  rounds = 5,
  diskTasks = 20,
} = {}) {
  const mods = await loadModules(dist);
  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-dispatch-'));
  const ram = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/curupira-bench-ledger-') : dir;
  try {
    const bare = origin(dir);
    const agent = noopAgent(dir);
    log(`dispatch: ${FILES}-file repository on a local bare remote, no-op agent`);
    const results = { tasks, files: FILES };
    if (only === 'best') {
      results.best = await best(mods, {
        dir,
        bare,
        agent,
        tasks: Math.max(tasks, 50),
        rounds,
        diskTasks,
        log,
      });
      return results;
    }
    if (only === 'processes') {
      await countedDrains(mods, { dir, ram, bare, agent, log }, results);
      return results;
    }
    if (only === 'spawn') {
      results.spawnHelper = await helperVsDirect(mods, { ram, bare, agent, tasks, log });
      return results;
    }
    if (only === 'disks') {
      results.disks = await disks(mods, dir, bare, agent, tasks, log);
      await countedDrains(mods, { dir, ram, bare, agent, log }, results);
      return results;
    }
    if (only !== 'startup') await runDrains(mods, { dir, ram, bare, agent, tasks, log }, results);
    await startup(mods, { dist, dir, bare, agent, log }, results);
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (ram !== dir) rmSync(ram, { recursive: true, force: true });
  }
}

async function runDrains(mods, { dir, ram, bare, agent, tasks, log }, results) {
  results.disks = await disks(mods, dir, bare, agent, tasks, log);
  results.best = await best(mods, {
    dir,
    bare,
    agent,
    tasks: Math.max(tasks, 50),
    rounds: 5,
    diskTasks: 20,
    log,
  });
  results.spawnHelper = await helperVsDirect(mods, { ram, bare, agent, tasks, log });
  await countedDrains(mods, { dir, ram, bare, agent, log }, results);

  const empty = await engineRun(mods, {
    root: join(ram, 'ledger-empty'),
    ...{ bare, agent, maxActive: 1, tasks: LEDGER_TASKS, historyLimit: 1_000_000 },
  });
  const full = await engineRun(mods, {
    root: join(ram, 'ledger-full'),
    ...{ bare, agent, maxActive: 1, tasks: LEDGER_TASKS, historyLimit: 1_000_000, seedLedger: LEDGER_RUNS },
  });
  const ops = { empty: await ledgerOps(mods, ram, 0), full: await ledgerOps(mods, ram, LEDGER_RUNS) };
  results.ledger = { runs: LEDGER_RUNS, empty, full, ratio: full.perRunMs / empty.perRunMs, ops };
  log(
    `  ledger at ${LEDGER_RUNS.toLocaleString('en')} runs (history_limit 1,000,000, RAM disk): ${ms(full.perRunMs)} per run vs ${ms(empty.perRunMs)} empty = ${results.ledger.ratio.toFixed(2)}×; state file opens in ${ms(full.openMs)} vs ${ms(empty.openMs)}`,
  );
  log(
    `  store alone: a run's writes ${ms(ops.full.writesMsPerRun)} at ${LEDGER_RUNS.toLocaleString('en')} runs vs ${ms(ops.empty.writesMsPerRun)} empty; a prune with nothing to delete ${ms(ops.full.pruneMs)} vs ${ms(ops.empty.pruneMs)} (runs no longer prune until over history_limit)`,
  );
}

/** Git processes per run (one clone included), with worktree reuse and without. */
async function countedDrains(mods, { dir, ram, bare, agent, log }, results) {
  for (const reuse of [true, false]) {
    const traceDir = join(dir, `trace-${reuse}`);
    await engineRun(mods, {
      root: join(ram, `counted-${reuse}`),
      ...{ bare, agent, maxActive: 1, tasks: COUNTED_TASKS, traceDir, reuse },
    });
    const counted = countProcesses(traceDir, COUNTED_TASKS);
    results[reuse ? 'processes' : 'processesWithoutReuse'] = counted;
    log(
      `  processes per run${reuse ? '' : ' without worktree reuse'}: ${counted.gitPerRun.toFixed(1)} git + 1 agent (${Object.entries(
        counted.byCommand,
      )
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
    );
  }
}

/**
 * The same drain with every command spawned from the engine's process, and from the command helper
 * (src/process/spawner.ts), in the order direct, helper, helper, direct (the machine's load drifts).
 * Main-thread CPU is the figure the helper is for; wall-clock time says whether runs overlap more.
 */
async function helperVsDirect(mods, { ram, bare, agent, tasks, log }) {
  const results = {};
  for (const concurrency of [1, 4]) {
    const sums = { direct: { perRunMs: 0, cpu: 0 }, helper: { perRunMs: 0, cpu: 0 } };
    for (const [i, mode] of ['direct', 'helper', 'helper', 'direct'].entries()) {
      const drain = await engineRun(mods, {
        root: join(ram, `spawn-${concurrency}-${i}`),
        ...{ bare, agent, maxActive: concurrency, tasks, helper: mode === 'helper' },
      });
      sums[mode].perRunMs += drain.perRunMs / 2;
      sums[mode].cpu += drain.mainThreadCpuMsPerRun / 2;
    }
    results[concurrency] = {
      direct: sums.direct,
      helper: sums.helper,
      wallRatio: sums.helper.perRunMs / sums.direct.perRunMs,
      mainThreadCpuRatio: sums.helper.cpu / sums.direct.cpu,
    };
    log(
      `  RAM disk, concurrency ${concurrency}, spawn from the engine vs the helper: per run ${ms(sums.direct.perRunMs)} vs ${ms(sums.helper.perRunMs)} = ${results[concurrency].wallRatio.toFixed(2)}×; main-thread CPU ${ms(sums.direct.cpu)} vs ${ms(sums.helper.cpu)} = ${results[concurrency].mainThreadCpuRatio.toFixed(2)}×`,
    );
  }
  return results;
}

async function startup(mods, { dist, dir, bare, agent, log }, results) {
  results.idleRssMiB = {};
  // The median of three daemons each: one sample moves by ±10 MiB on a loaded machine.
  for (const count of [1, 50]) {
    const samples = [];
    for (let i = 0; i < 3; i += 1) samples.push(await idleRss(mods, dist, dir, bare, agent, count));
    results.idleRssMiB[count] = median(samples);
  }
  const mb = (mib) => ((mib * 1024 * 1024) / 1e6).toFixed(1);
  log(
    `  idle RSS of run --watch: ${results.idleRssMiB[1].toFixed(1)} MiB (${mb(results.idleRssMiB[1])} MB) with 1 automation, ${results.idleRssMiB[50].toFixed(1)} MiB (${mb(results.idleRssMiB[50])} MB) with 50`,
  );
  results.floorRssMiB = {};
  for (const mode of ['node', 'platform', 'zod']) {
    const samples = [];
    for (let i = 0; i < 3; i += 1) samples.push(await floorRss(mods, dist, dir, mode));
    results.floorRssMiB[mode] = median(samples);
  }
  const floor = results.floorRssMiB;
  log(
    `  the floor under it: Node.js idle ${floor.node.toFixed(1)} MiB; with better-sqlite3, node:http polling and a child process ${floor.platform.toFixed(1)} MiB (${mb(floor.platform)} MB); and zod imported ${floor.zod.toFixed(1)} MiB; curupira with 50 automations is ${(results.idleRssMiB[50] - floor.platform).toFixed(1)} MiB above the second`,
  );

  const [node, version, help] = startupMs([
    ['-e', '0'],
    [join(dist, 'cli/main.js'), '--version'],
    [join(dist, 'cli/main.js'), '--help'],
  ]);
  results.startup = { nodeMs: node, versionMs: version, helpMs: help };
  log(
    `  start-up (median of ${STARTUP_SAMPLES}, interleaved): --version ${ms(version)} (${(version / node).toFixed(2)}× node), --help ${ms(help)} (${(help / node).toFixed(2)}×); node -e 0: ${ms(node)}`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const flag = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  // Absolute: the daemons of the startup part run in folders of their own.
  const dist = resolve(
    flag('--dist') ?? process.env.CURUPIRA_DIST ?? new URL('../dist/', import.meta.url).pathname,
  );
  const tasks = flag('--tasks') ? Number(flag('--tasks')) : DEFAULT_TASKS;
  const rounds = flag('--rounds') ? Number(flag('--rounds')) : 5;
  const diskTasks = flag('--disk-tasks') ? Number(flag('--disk-tasks')) : 20;
  await run({ dist, tasks, only: flag('--only'), rounds, diskTasks });
}
