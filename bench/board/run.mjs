/**
 * Board benchmark: what `curupira serve` costs with a big ledger. 100,000 runs (and 1,000 for
 * comparison) in a real state file; the real app (auth, board, API) over a real listener on
 * 127.0.0.1. Measured: the board page (server time, and first contentful paint in chromium when
 * /usr/bin/chromium exists), the API routes, a deep cursor page, and what 20 SSE clients add to
 * the engine's side (the cost of one change notice). Times are ratios to `GET /api/v1/health` on
 * the same listener; milliseconds are context.
 *
 *   node bench/run.mjs board [--dist DIR]
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export const name = 'board';

/** `CURUPIRA_BENCH_SIZES=100000` measures one ledger size only. */
const SIZES = process.env.CURUPIRA_BENCH_SIZES
  ? process.env.CURUPIRA_BENCH_SIZES.split(',').map(Number)
  : [1_000, 100_000];
const SAMPLES = 40;
const DIGITS = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function runId(n) {
  let out = '';
  let rest = n;
  for (let i = 0; i < 18; i += 1) {
    out = DIGITS[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return `r_${out}`;
}

/** A status mix like a long-lived deployment: mostly done, a few failures and kept worktrees. */
function statusOf(i) {
  if (i % 200 === 0) return ['failed', 0];
  if (i % 333 === 0) return ['timed_out', 0];
  if (i % 500 === 0) return ['succeeded', 1];
  if (i % 50 === 0) return ['skipped', 0];
  return ['succeeded', 0];
}

export async function seed(dist, dir, count) {
  const { openStore } = await import(pathToFileURL(join(dist, 'store/index.js')).href);
  const path = join(dir, 'state', 'state.sqlite3');
  mkdirSync(join(dir, 'state'), { recursive: true });
  await (await openStore(path)).close();
  const require = createRequire(join(dist, '..', 'package.json'));
  const Database = require('better-sqlite3');
  const db = new Database(path);
  const insert =
    db.prepare(`INSERT INTO runs (id, automation_id, task_key, repo, task_type, item_id, item_key,
    item_title, item_url, status, reason, created_at, started_at, finished_at, worktree_kept, branch, worktree_path,
    profile, cost_usd)
    VALUES (?, ?, ?, 'acme/api', 'github-issues', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  // One run a minute up to now: the figures' 7-day window holds the last 10,080 of them.
  const start = Date.now() - count * 60_000;
  db.transaction(() => {
    for (let i = 0; i < count; i += 1) {
      const [status, kept] = statusOf(i);
      const at = new Date(start + i * 60_000).toISOString();
      insert.run(
        runId(1_000_000 + i),
        i % 3 === 0 ? 'nightly' : 'fix',
        `k${i}`,
        String(i),
        `issue:${i}`,
        `Issue number ${i} with a title of ordinary length`,
        `https://github.com/acme/api/issues/${i}`,
        status,
        status === 'failed' ? 'claude exited with status 1: error: something broke' : null,
        at,
        at,
        at,
        kept,
        `curupira/fix/github-issues-${i}`,
        kept ? `/w/api.worktrees/fix/${i}` : null,
        i % 2 === 0 ? 'main' : 'second',
        0.05 + (i % 7) * 0.01,
      );
    }
  })();
  db.close();
  return path;
}

function settingsToml(dir) {
  return `[settings]
workspace_dir = "${join(dir, 'ws')}"
state_db_path = "${join(dir, 'state', 'state.sqlite3')}"
[settings.github]
api_url = "http://127.0.0.1:9"
[repositories.api]
remote = "file:///nonexistent"
[agents.defaults]
profile = "main"
[agents.profiles.main]
provider = "claude"
[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix \${issue_title}"
[automations.nightly]
trigger_type = "cron"
repository = "api"
schedule = "30 2 * * 0"
prompt = "Nightly chores"
`;
}

/** The engine's view without an engine: the benchmark measures the server, not polling. */
function engineView(settings) {
  return {
    automations: () =>
      settings.automations.map((a) => ({
        id: a.id,
        paused: false,
        nextPollAt: Date.now() + 30_000,
        waiting: 0,
      })),
    currentSettings: () => settings,
    setPaused: async () => undefined,
    trigger: () => 'polling',
    cancel: () => undefined,
    retry: async () => 'polling',
  };
}

async function timeGet(url, headers, samples = SAMPLES) {
  const times = [];
  let bytes = 0;
  for (let i = 0; i < samples + 3; i += 1) {
    const t0 = performance.now();
    const response = await fetch(url, { headers });
    const text = await response.text();
    const ms = performance.now() - t0;
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text.slice(0, 200)}`);
    bytes = text.length;
    if (i >= 3) times.push(ms);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)], p95: times[Math.floor(times.length * 0.95)], bytes };
}

async function firstPaint(url, token) {
  if (!existsSync('/usr/bin/chromium')) return undefined;
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    return undefined;
  }
  const profile = mkdtempSync(join(tmpdir(), 'curupira-bench-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await context.newPage();
    await page.goto(`${url}?token=${token}`);
    const paints = [];
    for (let i = 0; i < 7; i += 1) {
      await page.reload({ waitUntil: 'load' });
      const fcp = await page.evaluate(() => {
        const entry = performance.getEntriesByName('first-contentful-paint')[0];
        return entry ? entry.startTime : null;
      });
      if (fcp !== null) paints.push(fcp);
    }
    paints.sort((a, b) => a - b);
    return paints[Math.floor(paints.length / 2)];
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/** The figures as the board and an automation page compute them when their 10 s cache is cold. */
async function figuresUncached(dist, store, settings) {
  const { statusFigures, loadFigures, windowEnding } = await import(
    pathToFileURL(join(dist, 'server/figures.js')).href
  );
  const ids = settings.automations.map((a) => a.id);
  const time = async (f) => {
    const times = [];
    for (let i = 0; i < 7; i += 1) {
      const t0 = performance.now();
      await f();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return times[3];
  };
  return {
    all: await time(() => statusFigures(store, ids, windowEnding(new Date()))),
    one: await time(() => loadFigures(store, windowEnding(new Date()), 'fix')),
  };
}

async function sseCost(dist, ctx, url, headers) {
  const { Hub } = await import(pathToFileURL(join(dist, 'server/hub.js')).href);
  const measure = (hub) => {
    const t0 = performance.now();
    for (let i = 0; i < 100_000; i += 1) hub.changed();
    return (performance.now() - t0) / 100_000;
  };
  const quiet = measure(new Hub());
  const controllers = [];
  for (let i = 0; i < 20; i += 1) {
    const controller = new AbortController();
    controllers.push(controller);
    const response = await fetch(`${url}api/v1/events`, { headers, signal: controller.signal });
    const reader = response.body.getReader();
    // Drained in the background until the benchmark aborts the stream.
    void (async () => {
      try {
        for (;;) if ((await reader.read()).done) break;
      } catch {}
    })();
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  const clients = ctx.hub.clients;
  const busy = measure(ctx.hub);
  for (const c of controllers) c.abort();
  return { clients, quietUs: quiet * 1000, busyUs: busy * 1000 };
}

async function measureSize(dist, count, log) {
  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-board-'));
  try {
    const t0 = performance.now();
    await seed(dist, dir, count);
    const seedMs = performance.now() - t0;
    writeFileSync(join(dir, 'settings.toml'), settingsToml(dir));
    const load = (m) => import(pathToFileURL(join(dist, m)).href);
    const [{ loadSettings }, { openStore }, { createApp }, { Hub }, { startListeners }] = await Promise.all([
      load('config/load.js'),
      load('store/index.js'),
      load('server/app.js'),
      load('server/hub.js'),
      load('server/listen.js'),
    ]);
    const { settings } = loadSettings(join(dir, 'settings.toml'));
    const store = await openStore(settings.execution.state_db_path);
    const token = 'bench-token-0123456789abcdef0123456789abcdef';
    const ctx = {
      store,
      engine: engineView(settings),
      hub: new Hub(),
      token,
      version: 'bench',
      startedAt: Date.now(),
    };
    const listening = await startListeners(createApp(ctx), {
      host: '127.0.0.1',
      port: 0,
      stateDir: join(dir, 'state'),
    });
    const headers = { authorization: `Bearer ${token}` };
    const u = listening.url;
    try {
      const cursor = (await store.listRuns({ limit: 1, offset: Math.floor(count * 0.9) }))[0].id;
      const routes = {
        health: `${u}api/v1/health`,
        board: u,
        'board live fragment': `${u}board/live`,
        state: `${u}api/v1/state`,
        'runs (first page of 50)': `${u}api/v1/runs`,
        'runs?status=failed': `${u}api/v1/runs?status=failed`,
        'runs?attention=true': `${u}api/v1/runs?attention=true`,
        'runs, cursor at 90 %': `${u}api/v1/runs?cursor=${cursor}`,
        'run page': `${u}runs/${cursor}`,
        'automation page (7-day figures)': `${u}automations/fix`,
        'runs page, filtered': `${u}runs?status=failed&q=number%2012`,
        'runs?q= (title search)': `${u}api/v1/runs?q=number%2099`,
        'runs?status=failed&q=': `${u}api/v1/runs?status=failed&q=number%2012`,
        'runs?profile=second&automation=fix': `${u}api/v1/runs?profile=second&automation=fix`,
        'figures (7 days, one automation)': `${u}api/v1/figures?automation=fix`,
      };
      const figures = {};
      for (const [route, url] of Object.entries(routes)) figures[route] = await timeGet(url, headers);
      const uncached = await figuresUncached(dist, store, settings, log);
      // Baseline of the paints: a run's page (same stylesheet, next to no server work).
      const baselineFcp = await firstPaint(`${u}runs/${cursor}`, token);
      const fcp = await firstPaint(u, token);
      const automationFcp = await firstPaint(`${u}automations/fix`, token);
      const sse = await sseCost(dist, ctx, u, headers);
      const base = figures.health.p50;
      log(`  ${count.toLocaleString('en')} runs (seeded in ${(seedMs / 1000).toFixed(1)} s)`);
      for (const [route, f] of Object.entries(figures)) {
        log(
          `    ${route.padEnd(24)} p50 ${f.p50.toFixed(2).padStart(7)} ms  p95 ${f.p95.toFixed(2).padStart(7)} ms  ${(f.p50 / base).toFixed(1).padStart(6)}× health  ${f.bytes} bytes`,
        );
      }
      log(
        `    figures computed without the cache, 7 days: all automations p50 ${uncached.all.toFixed(1)} ms, one automation p50 ${uncached.one.toFixed(1)} ms`,
      );
      const ratio = (ms) => (baselineFcp ? ` (${(ms / baselineFcp).toFixed(2)}× a run page's)` : '');
      if (baselineFcp !== undefined)
        log(`    run page first contentful paint (baseline): ${baselineFcp.toFixed(0)} ms`);
      if (fcp !== undefined) log(`    first contentful paint (chromium): ${fcp.toFixed(0)} ms${ratio(fcp)}`);
      if (automationFcp !== undefined)
        log(
          `    automation page first contentful paint (chromium): ${automationFcp.toFixed(0)} ms${ratio(automationFcp)}`,
        );
      log(
        `    change notice: ${sse.quietUs.toFixed(3)} µs with no client, ${sse.busyUs.toFixed(3)} µs with ${sse.clients} SSE clients`,
      );
      return {
        count,
        seedMs,
        figures,
        figuresUncachedMs: uncached,
        runPageFirstContentfulPaintMs: baselineFcp ?? null,
        firstContentfulPaintMs: fcp ?? null,
        automationFirstContentfulPaintMs: automationFcp ?? null,
        sse,
      };
    } finally {
      ctx.hub.close();
      await listening.close();
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run({ dist, log }) {
  log('\n== board: `curupira serve` with a big ledger');
  const results = [];
  for (const count of SIZES) results.push(await measureSize(dist, count, log));
  return results;
}
