/**
 * Do 20 SSE clients slow the engine? `curupira serve` as `serveEngine` builds it (the engine, the
 * hub, the app, a real listener on 127.0.0.1) draining N issues from the simulator with a short
 * agent (three events over ~0.4 s) on real worktrees, with 0 and with 20 board clients connected
 * from another process (bench/board/sse-clients.mjs: each holds the board stream, fetches
 * `/board/live` on every change as board.js does, and follows a running run's event stream).
 * After an uncounted warm-up, rounds go 0, 20, 20, 0 so the machine's drift falls on both. Measured: wall-clock ms
 * per run and this process's main-thread busy ms per run (engine and server share that thread);
 * the figure is the ratio with clients to without, from the same invocation.
 *
 *   node bench/run.mjs sse [--dist DIR]
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { origin, settingsText, simulatorWith, TOKEN } from '../dispatch.mjs';

export const name = 'sse';

const TASKS = 16;
const CLIENTS = 20;
const ROUNDS = [0, CLIENTS, CLIENTS, 0];
/** Runs of a first, uncounted round (module loading, the first clone, the JIT). */
const WARM_UP = 4;
const BOARD_TOKEN = 'bench-token-0123456789abcdef0123456789abcdef';

/** A Claude Code stream of init, one narration and a result, ~0.4 s long (a run page has something to stream). */
function shortAgent(dir) {
  const path = join(dir, 'short-claude');
  const session = `"session_id":"00000000-0000-4000-8000-'"$$"'0000"`;
  writeFileSync(
    path,
    `#!/bin/sh
echo '{"type":"system","subtype":"init",${session},"model":"noop"}'
sleep 0.2
echo '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"looking"}]},${session}}'
sleep 0.2
echo '{"type":"result","subtype":"success","is_error":false,"result":"done",${session},"usage":{"input_tokens":1,"output_tokens":1}}'
`,
  );
  chmodSync(path, 0o755);
  return path;
}

/** Starts the client process; resolves once its board streams are open, with a function that stops it. */
function startClients(url, count) {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'sse-clients.mjs'), url, BOARD_TOKEN, String(count)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  return new Promise((ready, fail) => {
    child.on('error', fail);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.startsWith('ready\n')) ready(stopper);
    });
    const stopper = () =>
      new Promise((done) => {
        child.on('close', () => done(JSON.parse(out.split('\n')[1] ?? '{}')));
        child.kill('SIGTERM');
      });
  });
}

async function drainServed(mods, { root, bare, agent, clients, tasks }) {
  const simulator = await simulatorWith(mods, tasks);
  mkdirSync(root, { recursive: true });
  const file = join(root, 'settings.toml');
  writeFileSync(file, settingsText({ simulatorUrl: simulator.url, bare, agent, maxActive: 2 }));
  const { settings } = mods.load.loadSettings(file);
  const store = await mods.store.openStore(settings.execution.state_db_path);
  const tokens = mods.token.staticTokenSource(TOKEN);
  const hub = new mods.hub.Hub();
  const engine = new mods.engine.Engine({
    settings,
    mode: 'drain',
    store,
    clock: mods.clock.systemClock,
    log: mods.log.silentLogger(),
    env: { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    github: () => mods.client.createGitHubClient({ apiUrl: settings.execution.github.api_url, tokens }),
    tokens,
    transcriptsDir: mods.paths.transcriptsDir(settings),
    stopSignal: new AbortController().signal,
    onStatus: (status) => hub.setStatus(status),
    onRun: () => hub.changed(),
  });
  const app = mods.app.createApp({
    store,
    engine,
    hub,
    token: BOARD_TOKEN,
    version: 'bench',
    startedAt: Date.now(),
  });
  const listening = await mods.listen.startListeners(app, {
    host: '127.0.0.1',
    port: 0,
    stateDir: join(root, 'state'),
  });
  try {
    const stopClients = clients > 0 ? await startClients(listening.url, clients) : undefined;
    const connected = hub.clients;
    const elu = performance.eventLoopUtilization();
    const start = performance.now();
    const result = await engine.run();
    const wallMs = performance.now() - start;
    const busyMs = performance.eventLoopUtilization(elu).active;
    const counts = stopClients ? await stopClients() : {};
    const failed = result.runs.filter((r) => r.status !== 'succeeded');
    if (result.runs.length !== tasks || failed.length > 0)
      throw new Error(`expected ${tasks} successful runs, got ${result.runs.length} (${failed[0]?.reason})`);
    return { clients, connected, perRunMs: wallMs / tasks, busyMsPerRun: busyMs / tasks, counts };
  } finally {
    hub.close();
    await listening.close();
    await store.close();
    await simulator.close();
  }
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

export async function run({ dist, log = console.log, tasks = TASKS } = {}) {
  const base = pathToFileURL(`${resolve(dist)}/`).href;
  const load = (path) => import(new URL(path, base).href);
  const names = {
    sim: 'simulator/index.js',
    load: 'config/load.js',
    store: 'store/index.js',
    token: 'github/token.js',
    engine: 'features.js',
    clock: 'core/clock.js',
    log: 'log.js',
    client: 'github/client.js',
    paths: 'engine/paths.js',
    app: 'server/app.js',
    hub: 'server/hub.js',
    listen: 'server/listen.js',
  };
  const mods = Object.fromEntries(
    await Promise.all(Object.entries(names).map(async ([key, path]) => [key, await load(path)])),
  );
  // simulatorWith starts the simulator in a worker thread, from this module.
  mods.simUrl = new URL(names.sim, base).href;
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  process.env.GIT_CONFIG_GLOBAL = '/dev/null';
  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-sse-'));
  log(`\n== sse: a drain of ${tasks} runs under \`curupira serve\`, with 0 and ${CLIENTS} board clients`);
  try {
    const bare = origin(dir);
    const agent = shortAgent(dir);
    await drainServed(mods, { root: join(dir, 'warm-up'), bare, agent, clients: 0, tasks: WARM_UP });
    const rounds = [];
    for (const [i, clients] of ROUNDS.entries()) {
      const round = await drainServed(mods, { root: join(dir, `round-${i}`), bare, agent, clients, tasks });
      rounds.push(round);
      log(
        `  ${String(clients).padStart(2)} clients (${round.connected} board streams open): ${round.perRunMs.toFixed(0)} ms per run, main thread ${round.busyMsPerRun.toFixed(1)} ms per run${
          clients > 0 ? `; clients saw ${JSON.stringify(round.counts)}` : ''
        }`,
      );
    }
    const pick = (clients, key) => mean(rounds.filter((r) => r.clients === clients).map((r) => r[key]));
    const summary = {
      tasks,
      rounds,
      wallRatio: pick(CLIENTS, 'perRunMs') / pick(0, 'perRunMs'),
      busyRatio: pick(CLIENTS, 'busyMsPerRun') / pick(0, 'busyMsPerRun'),
    };
    log(
      `  with ${CLIENTS} clients: ${summary.wallRatio.toFixed(2)}× the wall-clock time per run, ${summary.busyRatio.toFixed(2)}× the main-thread time per run`,
    );
    return summary;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
