/**
 * Webhook benchmark: from a GitHub webhook received to the agent started.
 *
 * `curupira serve` as `serveEngine` builds it (the engine in watch mode, the app, a real listener
 * on 127.0.0.1) over the GitHub simulator, with `poll_interval_seconds` an hour long, so only the
 * webhook can start a run. For each sample: an issue gains the `agent-ready` label in the
 * simulator, a signed `issues.labeled` delivery is POSTed to `/webhooks/github`, and the time runs
 * until the agent (a shell script) writes its first line; the next sample starts once that run has
 * finished. Measured: the median and the 95th percentile (target p50 under 2 s), and the 202's
 * own response time. Each run is a real one: poll (search), screening off, a worktree, the agent.
 *
 *   node bench/run.mjs webhooks [--dist DIR]
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { origin, settingsText, TOKEN } from './dispatch.mjs';

export const name = 'webhooks';

const SAMPLES = 20;
const SECRET = 'bench-webhook-secret-0123456789';
const BOARD_TOKEN = 'bench-token-0123456789abcdef0123456789abcdef';

/** A Claude Code stream that first appends the epoch ms it started at to `starts`. */
function timedAgent(dir, starts) {
  const path = join(dir, 'timed-claude');
  const session = `"session_id":"00000000-0000-4000-8000-'"$$"'0000"`;
  writeFileSync(
    path,
    `#!/bin/sh
date +%s%3N >> '${starts}'
echo '{"type":"system","subtype":"init",${session},"model":"noop"}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"done",${session},"usage":{"input_tokens":1,"output_tokens":1}}'
`,
  );
  chmodSync(path, 0o755);
  return path;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function until(check, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function startsIn(file) {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

async function load(dist) {
  const base = pathToFileURL(`${resolve(dist)}/`).href;
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
    methods: '../node_modules/@octokit/webhooks-methods/dist-node/index.js',
  };
  return Object.fromEntries(
    await Promise.all(
      Object.entries(names).map(async ([key, path]) => [key, await import(new URL(path, base).href)]),
    ),
  );
}

async function serve(mods, root, agent) {
  const world = new mods.sim.SimWorld();
  world.addRepo('acme/api');
  world.addUser('octocat');
  world.addToken(TOKEN, 'octocat');
  world.addLabel('acme/api', 'agent-ready');
  const simulator = await mods.sim.startSimulator({ world });
  const file = join(root, 'settings.toml');
  const text = settingsText({
    simulatorUrl: simulator.url,
    bare: join(root, '..', 'origin.git'),
    agent,
    maxActive: 1,
  });
  writeFileSync(
    file,
    text.replace('[settings.polling]\n', '[settings.polling]\npoll_interval_seconds = 3600\n'),
  );
  const { settings } = mods.load.loadSettings(file);
  const store = await mods.store.openStore(settings.execution.state_db_path);
  const tokens = mods.token.staticTokenSource(TOKEN);
  const hub = new mods.hub.Hub();
  const stop = new AbortController();
  const finished = [];
  const engine = new mods.engine.Engine({
    settings,
    mode: 'watch',
    store,
    clock: mods.clock.systemClock,
    log: mods.log.silentLogger(),
    env: { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    github: () => mods.client.createGitHubClient({ apiUrl: settings.execution.github.api_url, tokens }),
    tokens,
    transcriptsDir: mods.paths.transcriptsDir(settings),
    stopSignal: stop.signal,
    onStatus: (status) => hub.setStatus(status),
    onRun: (run) => finished.push(run),
  });
  const done = engine.run();
  const app = mods.app.createApp({
    store,
    engine,
    hub,
    token: BOARD_TOKEN,
    version: 'bench',
    startedAt: Date.now(),
    webhookSecret: SECRET,
  });
  const listening = await mods.listen.startListeners(app, {
    host: '127.0.0.1',
    port: 0,
    stateDir: join(root, 'state'),
  });
  await until(() => engine.automations()[0]?.lastPollAt !== undefined);
  return {
    world,
    finished,
    lastPollAt: () => engine.automations()[0]?.lastPollAt,
    url: new URL('webhooks/github', listening.url).href,
    async close() {
      stop.abort();
      await done;
      hub.close();
      await listening.close();
      await store.close();
      await simulator.close();
    },
  };
}

async function deliver(mods, url, number, id) {
  const body = JSON.stringify({
    action: 'labeled',
    label: { name: 'agent-ready' },
    issue: { number },
    repository: { full_name: 'acme/api' },
    sender: { login: 'octocat' },
  });
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': id,
      'x-hub-signature-256': await mods.methods.sign(SECRET, body),
    },
    body,
  });
  if (response.status !== 202) throw new Error(`webhook answered ${response.status}`);
  await response.body?.cancel();
}

export async function run({ dist, log = console.log, samples = SAMPLES } = {}) {
  const mods = await load(dist);
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  process.env.GIT_CONFIG_GLOBAL = '/dev/null';
  const dir = mkdtempSync(join(tmpdir(), 'curupira-bench-webhooks-'));
  log(
    `\n== webhooks: ${samples} issues.labeled deliveries to \`curupira serve\` (poll interval 1 h), received → agent started`,
  );
  try {
    origin(dir);
    const starts = join(dir, 'starts.txt');
    const agent = timedAgent(dir, starts);
    const root = join(dir, 'serve');
    mkdirSync(root, { recursive: true });
    const served = await serve(mods, root, agent);
    const latencies = [];
    const responses = [];
    const polls = [];
    try {
      for (let i = 0; i < samples; i += 1) {
        const issue = served.world.addIssue('acme/api', {
          title: `Task ${i}`,
          labels: [],
          author: 'octocat',
        });
        served.world.addLabels('acme/api', issue.number, ['agent-ready'], 'octocat');
        const sentAt = Date.now();
        const t0 = performance.now();
        await deliver(mods, served.url, issue.number, `bench-${i}`);
        responses.push(performance.now() - t0);
        const polledBefore = served.lastPollAt();
        await until(() => served.lastPollAt() !== polledBefore);
        polls.push(Date.now() - sentAt);
        await until(() => startsIn(starts).length === i + 1);
        latencies.push(startsIn(starts)[i] - sentAt);
        await until(() => served.finished.length === i + 1);
      }
    } finally {
      await served.close();
    }
    const failed = served.finished.filter((r) => r.status !== 'succeeded');
    if (failed.length > 0) throw new Error(`a run did not succeed: ${failed[0].reason}`);
    const sorted = [...latencies].sort((a, b) => a - b);
    const sortedResponses = [...responses].sort((a, b) => a - b);
    const sortedPolls = [...polls].sort((a, b) => a - b);
    const summary = {
      samples,
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      maxMs: sorted.at(-1),
      response202P50Ms: percentile(sortedResponses, 50),
      pollDoneP50Ms: percentile(sortedPolls, 50),
      pollDoneP95Ms: percentile(sortedPolls, 95),
      targetP50Ms: 2000,
    };
    log(
      `  webhook received → agent started: p50 ${summary.p50Ms} ms, p95 ${summary.p95Ms} ms, max ${summary.maxMs} ms (target p50 < 2000 ms); the 202 itself: p50 ${summary.response202P50Ms.toFixed(1)} ms; received → targeted poll done: p50 ${summary.pollDoneP50Ms} ms, p95 ${summary.pollDoneP95Ms} ms (the rest is fetch, worktree and spawn)`,
    );
    return summary;
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}
