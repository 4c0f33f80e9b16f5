/**
 * Discovery while busy (issue 34, item 3): what the watch loop asks GitHub per poll while one agent
 * runs and N tasks wait behind it (`max_active_tasks = 1`), at the default settings (30 s poll,
 * change probe, max_staleness_seconds = 600). The real engine runs on an injected clock against
 * the simulator, with an agent that starts and never ends; each step moves the clock 30 s and
 * waits until GitHub hears nothing more. Counted: GraphQL requests (searches and item-state
 * reads), their rate-limit points, and REST requests charged to the core budget.
 *
 * Rows: 0, 10 and 100 queued tasks with room for one more in the queue (`max_pending_tasks = N +
 * 1`), 10 steps each; then one hour (120 steps) with 100 queued, and with the default full queue
 * (`max_pending_tasks = 100`: 1 running, 100 waiting, one more item left for later).
 *
 *   node bench/discovery.mjs --only busy [--dist DIR] [--no-full-queue]
 *
 * `--no-full-queue` leaves out the full-queue hour: before issue 34 a full queue made the watch
 * loop wait 0 ms and spin, which on the injected clock never ends.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const TOKEN = 'ghp_benchBusyToken00000000000000000000001';
const STEP_MS = 30_000;

function git(args, cwd) {
  const result = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
}

function origin(dir) {
  const seed = join(dir, 'seed');
  const bare = join(dir, 'origin.git');
  mkdirSync(seed, { recursive: true });
  git(['init', '-q', '-b', 'main'], seed);
  writeFileSync(join(seed, 'README.md'), '# bench\n');
  git(['add', '.'], seed);
  git(['commit', '-q', '-m', 'seed'], seed);
  git(['clone', '-q', '--bare', seed, bare], dir);
  return bare;
}

/** A Claude Code stand-in that starts a session and then works for an hour (it is stopped first). */
function busyAgent(dir) {
  const path = join(dir, 'busy-claude');
  writeFileSync(
    path,
    `#!/bin/sh
echo '{"type":"system","subtype":"init","session_id":"00000000-0000-4000-8000-'"$$"'0000","model":"busy"}'
touch "${join(dir, 'started')}"
exec sleep 3600
`,
  );
  chmodSync(path, 0o755);
  return path;
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, check, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(20);
  }
}

/** The engine finished what a clock step woke it for: it sleeps and GitHub heard nothing for 100 ms. */
async function settled(sim, clock) {
  let count = -1;
  let since = Date.now();
  await until('the engine to settle', () => {
    if (sim.requests.length !== count) {
      count = sim.requests.length;
      since = Date.now();
    }
    return clock.pending > 0 && Date.now() - since >= 100;
  });
}

async function scenario(m, root, { queued, maxPending, steps }) {
  const dir = mkdtempSync(join(root, 'busy-'));
  const bare = origin(dir);
  const agent = busyAgent(dir);
  const world = new m.SimWorld();
  world.addRepo('acme/api');
  world.addUser('octocat');
  world.addToken(TOKEN, 'octocat');
  world.addLabel('acme/api', 'agent-ready');
  const items = queued + 1 + (maxPending <= queued ? 1 : 0);
  for (let i = 1; i <= items; i += 1)
    world.addIssue('acme/api', { title: `Task ${i}`, labels: ['agent-ready'], author: 'octocat' });
  const sim = await m.startSimulator({ world });
  const settingsFile = join(dir, 'settings.toml');
  writeFileSync(
    settingsFile,
    `[settings]
workspace_dir = "ws"
state_db_path = "state/state.sqlite3"
max_active_tasks = 1
max_pending_tasks = ${maxPending}
task_timeout_minutes = 1440
[settings.screening]
required = false
[settings.github]
api_url = "${sim.url}"
[repositories.api]
remote = "file://${bare}"
[agents.defaults]
profile = "busy"
[agents.profiles.busy]
provider = "claude"
executable = "${agent}"
[automations.work]
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Do task \${issue_number}"
`,
  );
  const { settings } = m.loadSettings(settingsFile);
  const store = await m.openStore(settings.execution.state_db_path);
  const clock = new m.FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
  const tokens = m.staticTokenSource(TOKEN);
  const stop = new AbortController();
  const engine = new m.Engine({
    settings,
    mode: 'watch',
    store,
    clock,
    log: m.silentLogger(),
    env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    github: () => m.createGitHubClient({ apiUrl: settings.execution.github.api_url, tokens, clock }),
    tokens,
    transcriptsDir: m.transcriptsDir(settings),
    stopSignal: stop.signal,
  });
  const done = engine.run();
  try {
    await until('the agent to start', () => existsSync(join(dir, 'started')));
    await settled(sim, clock);
    // The first step: the first check is one interval after the poll that found the tasks.
    await clock.advance(STEP_MS);
    await settled(sim, clock);
    const from = sim.requests.length;
    for (let i = 0; i < steps; i += 1) {
      await clock.advance(STEP_MS);
      await settled(sim, clock);
    }
    const requests = sim.requests.slice(from);
    const graphql = requests.filter((r) => r.path === '/graphql');
    const reads = graphql.filter((r) => r.operationName?.startsWith('CurupiraItemState'));
    const sum = (list) => list.reduce((n, r) => n + r.cost, 0);
    return {
      queued,
      maxPending,
      steps,
      graphqlRequests: graphql.length,
      itemReads: reads.length,
      searches: graphql.length - reads.length,
      points: sum(graphql),
      restCore: requests.reduce((n, r) => n + r.coreCost, 0),
    };
  } finally {
    stop.abort();
    await clock.advance(60_000);
    await done;
    await store.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function busy({
  dist,
  log = console.log,
  hour = true,
  fullQueue = !process.argv.includes('--no-full-queue'),
} = {}) {
  const base = pathToFileURL(`${resolve(dist)}/`).href;
  const load = (path) => import(new URL(path, base).href);
  // The engine with its features (features.js); a build from before the kernel had it in engine.js.
  const loadEngine = () => load('features.js').catch(() => load('engine/engine.js'));
  const m = Object.assign(
    {},
    ...(await Promise.all(
      [
        'simulator/index.js',
        'config/load.js',
        'store/index.js',
        'github/token.js',
        'github/client.js',
        'engine/paths.js',
        'core/clock.js',
        'log.js',
      ]
        .map(load)
        .concat(loadEngine()),
    )),
  );
  const root = mkdtempSync(join(tmpdir(), 'curupira-bench-busy-'));
  const perStep = (r) => ({
    requests: r.graphqlRequests / r.steps,
    reads: r.itemReads / r.steps,
    points: r.points / r.steps,
  });
  const line = (label, r) => {
    const p = perStep(r);
    log(
      `  ${label}: per 30 s poll ${p.requests.toFixed(2)} GraphQL requests (${p.reads.toFixed(2)} item reads), ` +
        `${p.points.toFixed(2)} points; over ${r.steps} polls ${r.graphqlRequests} requests, ${r.points} points, ` +
        `${r.restCore} REST core`,
    );
  };
  try {
    log('discovery while busy (1 agent running, N queued, default 30 s poll, injected clock)');
    const rows = [];
    for (const queued of [0, 10, 100]) {
      const r = await scenario(m, root, { queued, maxPending: queued + 1, steps: 10 });
      rows.push(r);
      line(`${queued} queued`, r);
    }
    const result = { rows };
    if (hour) {
      result.hour = await scenario(m, root, { queued: 100, maxPending: 101, steps: 120 });
      line('one hour, 100 queued', result.hour);
      if (fullQueue) {
        result.fullQueueHour = await scenario(m, root, { queued: 100, maxPending: 100, steps: 120 });
        line('one hour, full default queue (max_pending_tasks = 100)', result.fullQueueHour);
      }
    }
    return result;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
