/**
 * Fleet benchmark (issue 17): what a fleet on PostgreSQL buys and costs.
 *
 * Every scenario is real processes of the built CLI on the machine's PostgreSQL (a fresh schema per
 * scenario, `<name>` and `<name>_boss`, dropped at the end), the GitHub simulator (in this process)
 * with N open `agent-ready` issues whose body is `[[fake:sleep=2]]`, the fake agent CLIs (a Claude
 * Code stand-in that sleeps 2 s), a small local bare remote, and one settings file per host, each
 * with its own `workspace_dir` and state folder, as separate machines have. For each K:
 *
 * - **(a) one host**: `curupira serve --role all`, `host_max_active_tasks = K`, `max_active_tasks = K`;
 * - **(b) one poller and three workers**: `curupira serve --role poller` and three `curupira worker`,
 *   each `host_max_active_tasks = K`, fleet-wide `max_active_tasks = 3K`. The workers heartbeat
 *   before the poller starts, so no task waits for a worker to appear.
 *
 * The clock of a scenario is the database's: from its first dispatch's `enqueued_at` to its last
 * dispatch's `finished_at` (fleet_dispatches). Measured: items per minute and the ratio b/a (within
 * one invocation), dispatch latency (a dispatch's `enqueued_at` to its `started_at`, the worker's
 * claim, and to its run's `started_at`, the agent spawned), statements sent to PostgreSQL per run,
 * split by source (each process runs with CURUPIRA_COUNT_QUERIES, src/fleet/count-queries.ts, and
 * the figure is the difference of its counts between the window's start and end), the same with
 * nothing to do (statements per second over 10 s after the last run), the CPU of the fleet's
 * processes and their descendants (agents, git) per run and per role, and the machine's busy share
 * of its CPUs over the window (/proc/stat; other work on the machine counts too).
 *
 *   node bench/run.mjs fleet [--dist DIR]
 *   node bench/fleet.mjs [--dist DIR] [--items N] [--k 2,4]   (defaults: 36 items, K = 2,4)
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { busyShare, divided, median, percentile, perMinute, statementDelta } from './fleet-stats.mjs';

export const name = 'fleet';

const TOKEN = 'ghp_benchFleetToken0000000000000000000001';
const PG_URL = process.env.CURUPIRA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULT_ITEMS = 36;
const DEFAULT_KS = [2, 4];
const WORKERS = 3;
const AGENT_SECONDS = 2;
const IDLE_MS = 10_000;
const TIMEOUT_MS = 10 * 60_000;

/** The URL without its password, for printing. */
function redacted(url) {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = 'redacted';
  return parsed.toString();
}

const gitEnv = () => ({ ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' });

function git(args, cwd) {
  const result = spawnSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: gitEnv(),
  });
  if (result.status !== 0)
    throw new Error(`git ${args[0]} failed: ${result.error?.message ?? result.stderr}`);
}

/** A bare remote with one small commit (the fleet's cost, not git's, is what is measured). */
function smallOrigin(dir) {
  const seed = join(dir, 'seed');
  mkdirSync(join(seed, 'src'), { recursive: true });
  git(['init', '-q', '-b', 'main', seed], dir);
  writeFileSync(join(seed, 'README.md'), '# bench\n');
  for (let i = 0; i < 20; i += 1)
    writeFileSync(join(seed, 'src', `m${i}.ts`), `export const v${i} = ${i};\n`);
  git(['add', '-A'], seed);
  git(['commit', '-q', '-m', 'init'], seed);
  const bare = join(dir, 'origin.git');
  git(['clone', '-q', '--bare', seed, bare], dir);
  rmSync(seed, { recursive: true, force: true });
  return bare;
}

async function load(dist) {
  const base = pathToFileURL(`${resolve(dist)}/`).href;
  const [sim, fake, config] = await Promise.all([
    import(new URL('simulator/index.js', base).href),
    import(new URL('agents/fake/install.js', base).href),
    import(new URL('config/load.js', base).href),
  ]);
  return { sim, fake, config };
}

async function admin(sql) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

function settingsText({ hostDir, url, simUrl, bare, logDir, host, capacity, maxActive }) {
  return `[settings]
workspace_dir = "${join(hostDir, 'workspaces')}"
state_db_path = "${join(hostDir, 'state', 'state.sqlite3')}"
state_db_url = "${url}"
max_active_tasks = ${maxActive}
max_pending_tasks = 1000
task_timeout_minutes = 5

[settings.fleet]
host = "${host}"
${capacity > 0 ? `host_max_active_tasks = ${capacity}\n` : ''}
[settings.polling]
batch_size = 1000

[settings.github]
api_url = "${simUrl}"

[settings.screening]
required = false

[repositories.api]
remote = "file://${bare}"

[agents.defaults]
profile = "main"

[agents.profiles.main]
provider = "claude"
env = { FAKE_AGENT_LOG = "${logDir}" }

[automations.bench]
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Do task \${issue_number}: \${issue_title}\\n\${issue_body}"
`;
}

/**
 * CPU ms of each role's processes and everything below them, children's reaped time included: per
 * process utime + stime + cutime + cstime from /proc (Linux, 100 Hz ticks). A child that ended
 * between two readings is in its parent's cutime by then (the agents' and git's time lands in the
 * command helper's or the role's). Returns `{ total, <role>: ms }`.
 */
function treeCpu(procs) {
  const stats = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      stats.set(Number(entry), { ppid: Number(fields[1]), ms: ticks * 10 });
    } catch {
      // It ended meanwhile.
    }
  }
  const children = new Map();
  for (const [pid, { ppid }] of stats) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const result = { total: 0 };
  for (const proc of procs) {
    const queue = [proc.child.pid];
    while (queue.length > 0) {
      const pid = queue.pop();
      const ms = stats.get(pid)?.ms ?? 0;
      result.total += ms;
      result[proc.role] = (result[proc.role] ?? 0) + ms;
      queue.push(...(children.get(pid) ?? []));
    }
  }
  return result;
}

function readCounts(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One reading of everything the window's figures are differences of. */
function reading(procs) {
  return {
    counts: procs.map((p) => readCounts(p.countFile)),
    cpu: treeCpu(procs),
    own: process.cpuUsage(),
    stat: readFileSync('/proc/stat', 'utf8'),
    at: Date.now(),
  };
}

/** Runs one scenario: hosts `[{ name, role, capacity }]`, fleet-wide `maxActive`, `items` issues. */
async function scenario(mods, { dist, dir, bare, label, hosts, maxActive, items }) {
  const schema = `fleetbench_${randomBytes(5).toString('hex')}`;
  await admin(`CREATE SCHEMA ${schema}`);
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
  const root = join(dir, label);
  const binDir = join(root, 'bin');
  const logDir = join(root, 'agent-log');
  mkdirSync(logDir, { recursive: true });
  mods.fake.installFakeAgents(binDir, { logDir });
  const world = new mods.sim.SimWorld();
  world.addRepo('acme/api');
  world.addUser('octocat');
  world.addToken(TOKEN, 'octocat');
  world.addLabel('acme/api', 'agent-ready');
  for (let i = 0; i < items; i += 1)
    world.addIssue('acme/api', {
      title: `Task ${i}`,
      body: `[[fake:sleep=${AGENT_SECONDS}]]`,
      labels: ['agent-ready'],
      author: 'octocat',
    });
  const simulator = await mods.sim.startSimulator({ world });
  const db = new pg.Client({ connectionString: PG_URL });
  await db.connect();
  const procs = [];
  const start = (host) => {
    const hostDir = join(root, 'hosts', host.name);
    mkdirSync(hostDir, { recursive: true });
    const file = join(hostDir, 'settings.toml');
    writeFileSync(
      file,
      settingsText({
        hostDir,
        url,
        simUrl: simulator.url,
        bare,
        logDir,
        maxActive,
        host: host.name,
        capacity: host.capacity,
      }),
    );
    // Each host has its checkout already, as a host that ran work before has: the figures are
    // the steady state, not one clone per host.
    if (host.capacity > 0)
      git(
        [
          'clone',
          '-q',
          `file://${bare}`,
          mods.config.loadSettings(file).settings.repositories.api.checkoutPath,
        ],
        root,
      );
    const countFile = join(hostDir, 'queries.json');
    const args =
      host.role === 'worker'
        ? ['worker', '-c', file]
        : ['serve', '--role', host.role, '--port', '0', '-c', file];
    const out = openSync(join(hostDir, 'out.log'), 'a');
    const child = spawn(process.execPath, [join(dist, 'cli/main.js'), ...args], {
      cwd: hostDir,
      env: {
        PATH: `${binDir}:${process.env.PATH ?? ''}`,
        HOME: root,
        LANG: 'C.UTF-8',
        GH_TOKEN: TOKEN,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        CURUPIRA_COUNT_QUERIES: countFile,
      },
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    const exited = new Promise((done) => {
      child.on('exit', (code, signal) => done({ code, signal }));
      child.on('error', () => done({ code: -1, signal: null }));
    });
    procs.push({ ...host, child, exited, countFile, hostDir });
  };
  const scalar = async (sql) => {
    try {
      return (await db.query(sql)).rows[0];
    } catch (error) {
      if (error?.code === '42P01') return undefined; // the tables are not made yet
      throw error;
    }
  };
  const deadline = Date.now() + TIMEOUT_MS;
  const until = async (what, check) => {
    for (;;) {
      const value = await check();
      if (value) return value;
      for (const p of procs)
        if (p.child.exitCode !== null)
          throw new Error(
            `${p.name} exited (${p.child.exitCode}) while waiting for ${what}; see ${p.hostDir}/out.log`,
          );
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  };
  try {
    const workers = hosts.filter((h) => h.role === 'worker');
    for (const host of workers) start(host);
    if (workers.length > 0)
      await until('the workers heartbeat', async () => {
        const row = await scalar(
          `SELECT count(*)::int AS n FROM ${schema}.fleet_hosts WHERE stopped_at IS NULL`,
        );
        return row && row.n >= workers.length;
      });
    for (const host of hosts.filter((h) => h.role !== 'worker')) start(host);
    await until('the first dispatch', async () => {
      const row = await scalar(`SELECT count(*)::int AS n FROM ${schema}.fleet_dispatches`);
      return row && row.n > 0;
    });
    const first = reading(procs);
    await until(`${items} finished dispatches`, async () => {
      const row = await scalar(
        `SELECT count(*)::int AS n FROM ${schema}.fleet_dispatches WHERE state = 'done'`,
      );
      return row.n >= items;
    });
    // The poller settles the last one within its watch interval; the count files are 200 ms apart.
    await sleep(600);
    const last = reading(procs);
    await sleep(IDLE_MS);
    const idle = reading(procs);

    const { rows } = await db.query(
      `SELECT d.host, d.state, d.enqueued_at, d.started_at, d.finished_at, r.status,
         r.created_at AS run_created, r.started_at AS run_started, r.finished_at AS run_finished, r.host AS run_host
       FROM ${schema}.fleet_dispatches d LEFT JOIN ${schema}.runs r ON r.id = d.run_id`,
    );
    const runs = (await db.query(`SELECT status, count(*)::int AS n FROM ${schema}.runs GROUP BY status`))
      .rows;
    const succeeded = runs.find((r) => r.status === 'succeeded')?.n ?? 0;
    const agentLog = join(logDir, 'claude.jsonl');
    const agentRuns = existsSync(agentLog)
      ? readFileSync(agentLog, 'utf8')
          .split('\n')
          .filter((line) => line.includes('"kind":"run"')).length
      : 0;
    if (rows.length !== items || succeeded !== items || agentRuns !== items)
      throw new Error(
        `expected ${items} dispatches, succeeded runs and agent runs; got ${rows.length}, ${JSON.stringify(runs)}, ${agentRuns}`,
      );
    const t = (value) => (value instanceof Date ? value.getTime() : Date.parse(value));
    const windowMs =
      Math.max(...rows.map((r) => t(r.finished_at))) - Math.min(...rows.map((r) => t(r.enqueued_at)));
    const slots = hosts.reduce((sum, h) => sum + h.capacity, 0);
    const agentMs = rows.map((r) => t(r.run_finished) - t(r.run_started));
    const perHost = {};
    for (const r of rows) perHost[r.host] = (perHost[r.host] ?? 0) + 1;
    const claim = rows.map((r) => t(r.started_at) - t(r.enqueued_at));
    const spawned = rows.map((r) => t(r.run_started) - t(r.enqueued_at));
    const recorded = rows.map((r) => t(r.run_created) - t(r.enqueued_at));
    // A host's first runs also load the run path's modules and probe the agent's version; "warm"
    // leaves out every dispatch enqueued before its host had finished one.
    const warm = rows
      .filter((r) => rows.some((o) => o.host === r.host && t(o.finished_at) < t(r.enqueued_at)))
      .map((r) => t(r.run_started) - t(r.enqueued_at));
    const work = statementDelta(first.counts, last.counts);
    const of = (reading, role) => reading.counts.filter((_, n) => procs[n].role === role);
    const byRole = Object.fromEntries(
      [...new Set(procs.map((p) => p.role))].map((role) => [
        role,
        divided(statementDelta(of(first, role), of(last, role)), items),
      ]),
    );
    const rest = statementDelta(last.counts, idle.counts);
    const idleSeconds = (idle.at - last.at) / 1000;
    const fleetCpuMs = last.cpu.total - first.cpu.total;
    const cpuByRole = Object.fromEntries(
      [...new Set(procs.map((p) => p.role))].map((role) => [
        role,
        (last.cpu[role] - first.cpu[role]) / items,
      ]),
    );
    const own = process.cpuUsage(first.own);
    return {
      label,
      items,
      slots,
      windowMs,
      itemsPerMinute: perMinute(items, windowMs),
      perHost,
      runSpanMsMedian: median(agentMs),
      slotUse: agentMs.reduce((a, b) => a + b, 0) / (windowMs * slots),
      latency: {
        claimP50Ms: median(claim),
        claimP95Ms: percentile(claim, 95),
        runCreatedP50Ms: median(recorded),
        runCreatedP95Ms: percentile(recorded, 95),
        agentStartedP50Ms: median(spawned),
        agentStartedP95Ms: percentile(spawned, 95),
        agentStartedMaxMs: Math.max(...spawned),
        warmRuns: warm.length,
        warmAgentStartedP50Ms: median(warm),
        warmAgentStartedP95Ms: percentile(warm, 95),
      },
      statementsPerRun: divided(work, items),
      statementsPerRunByRole: byRole,
      idleStatementsPerSecond: divided(rest, idleSeconds),
      fleetCpuMsPerRun: fleetCpuMs / items,
      fleetCores: fleetCpuMs / (last.at - first.at),
      cpuMsPerRunByRole: cpuByRole,
      benchCpuMsPerRun: (own.user + own.system) / 1000 / items,
      machineBusy: busyShare(first.stat, last.stat),
    };
  } finally {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGTERM');
    const stopped = Promise.all(procs.map((p) => p.exited));
    const timer = setTimeout(() => {
      for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    }, 20_000);
    await stopped;
    clearTimeout(timer);
    await db.end().catch(() => {});
    await simulator.close();
    await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin(`DROP SCHEMA IF EXISTS ${schema}_boss CASCADE`);
  }
}

const ms = (v) => `${Math.round(v)} ms`;
const one = (v) => v.toFixed(1);

function describe(result, log) {
  const s = result.statementsPerRun;
  const i = result.idleStatementsPerSecond;
  const hostsText = Object.entries(result.perHost)
    .sort()
    .map(([host, n]) => `${host} ${n}`)
    .join(', ');
  log(
    `  ${result.label}: ${result.items} items in ${one(result.windowMs / 1000)} s = ${one(result.itemsPerMinute)} items/min (${result.slots} slots; runs per host: ${hostsText}; a run's agent span p50 ${ms(result.runSpanMsMedian)}, slots busy ${Math.round(result.slotUse * 100)} % of the window; machine CPU busy ${Math.round(result.machineBusy * 100)} % of ${cpus().length} cores)`,
  );
  log(
    `    dispatch latency: enqueued → claimed p50 ${ms(result.latency.claimP50Ms)}, p95 ${ms(result.latency.claimP95Ms)}; → run recorded p50 ${ms(result.latency.runCreatedP50Ms)}, p95 ${ms(result.latency.runCreatedP95Ms)}; → agent started p50 ${ms(result.latency.agentStartedP50Ms)}, p95 ${ms(result.latency.agentStartedP95Ms)}, max ${ms(result.latency.agentStartedMaxMs)}; warm hosts only (${result.latency.warmRuns} runs): → agent started p50 ${ms(result.latency.warmAgentStartedP50Ms)}, p95 ${ms(result.latency.warmAgentStartedP95Ms)}`,
  );
  log(
    `    statements per run: ${one(s.total)} (store ${one(s.store)}, fleet tables ${one(s.fleet)}, pg-boss ${one(s.queue)}, poller lock ${one(s.lock)}); FleetDb.queries ${one(s.counters.fleetDbQueries ?? 0)}, FleetQueue.calls ${one(s.counters.queueCalls ?? 0)}`,
  );
  const roles = Object.entries(result.statementsPerRunByRole);
  if (roles.length > 1)
    log(
      `      by role: ${roles.map(([role, r]) => `${role} ${one(r.total)} (store ${one(r.store)}, fleet ${one(r.fleet)}, pg-boss ${one(r.queue)}, lock ${one(r.lock)})`).join('; ')}`,
    );
  log(
    `    idle, per second: ${one(i.total)} statements (store ${one(i.store)}, fleet ${one(i.fleet)}, pg-boss ${one(i.queue)}, lock ${one(i.lock)})`,
  );
  log(
    `    CPU: the fleet's processes and their children (git, agents) ${ms(result.fleetCpuMsPerRun)} per run, ${result.fleetCores.toFixed(2)} cores over the window${
      Object.keys(result.cpuMsPerRunByRole).length > 1
        ? ` (per run: ${Object.entries(result.cpuMsPerRunByRole)
            .map(([role, v]) => `${role} ${ms(v)}`)
            .join(', ')})`
        : ''
    }; this process (simulator, watch) ${ms(result.benchCpuMsPerRun)} per run`,
  );
}

export async function run({ dist, log = console.log, items = DEFAULT_ITEMS, ks = DEFAULT_KS } = {}) {
  const mods = await load(dist);
  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-fleet-'));
  const [load1] = loadavg();
  log(
    `\n== fleet: ${items} items with a ${AGENT_SECONDS} s fake agent, one host vs a poller and ${WORKERS} workers (PostgreSQL ${redacted(PG_URL)}, ${cpus().length} cores, load average ${load1.toFixed(1)})`,
  );
  const results = {};
  try {
    const bare = smallOrigin(dir);
    for (const k of ks) {
      log(`  K = ${k} agents per host`);
      const single = await scenario(mods, {
        dist,
        dir,
        bare,
        label: `(a) one host, K=${k}`,
        hosts: [{ name: 'solo', role: 'all', capacity: k }],
        maxActive: k,
        items,
      });
      describe(single, log);
      const fleet = await scenario(mods, {
        dist,
        dir,
        bare,
        label: `(b) poller + ${WORKERS} workers, K=${k}`,
        hosts: [
          { name: 'poller', role: 'poller', capacity: 0 },
          ...Array.from({ length: WORKERS }, (_, n) => ({ name: `w${n + 1}`, role: 'worker', capacity: k })),
        ],
        maxActive: WORKERS * k,
        items,
      });
      describe(fleet, log);
      const ratio = fleet.itemsPerMinute / single.itemsPerMinute;
      log(`  throughput b/a at K = ${k}: ${ratio.toFixed(2)}× (${WORKERS}× the slots)`);
      results[k] = { single, fleet, ratio };
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const flag = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const dist = resolve(
    flag('--dist') ?? process.env.CURUPIRA_DIST ?? new URL('../dist/', import.meta.url).pathname,
  );
  if (!existsSync(join(dist, 'cli/main.js'))) {
    console.error(`no compiled curupira in ${dist}; run \`node scripts/build.mjs\` or pass --dist DIR`);
    process.exit(2);
  }
  const items = flag('--items') ? Number(flag('--items')) : DEFAULT_ITEMS;
  const ks = flag('--k') ? flag('--k').split(',').map(Number) : DEFAULT_KS;
  await run({ dist, items, ks });
}
