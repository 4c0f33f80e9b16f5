/**
 * Discovery benchmark: what finding work costs, in time and in GitHub rate-limit points, measured
 * against the local simulator with the real client and the real github-issues trigger.
 *
 * GitHub search serves at most 1,000 results per query, so "10,000 matching issues" is measured the
 * way a deployment meets it:
 *   A. one repository with 10,000 open `agent-ready` issues, polled with batch_size = 1000; between
 *      polls the agents close what the poll found (as the seed recommends), so 10 polls see all 10,000;
 *   B. ten repositories × 1,000 issues, ten automations, one poll each.
 * Idle: a poll that matches nothing (points per poll, and per hour at the default 30 s → 300 s backoff).
 * Idle hour: an event feed polled for one hour of an injected clock while nothing changes, before
 * (every poll searches) and after the change probe (a conditional GET; a 304 is free), with the
 * default max_staleness_seconds = 600 and with 0 (only a change searches).
 *
 * Times are reported as ratios against baselines measured in the same run, on the same simulator:
 *   - round trip: a bare `fetch` of `query { viewer { login } }` (HTTP + the simulator's GraphQL pipeline);
 *   - bare fetch replay: the exact requests the trigger made (same variables and cursors), sent again
 *     with a bare `fetch`, so the ratio is curupira's own overhead (client, trigger, item building).
 * A raw 100-issue search page is printed for context, as are all absolute milliseconds.
 * Busy: what the watch loop asks GitHub per poll while tasks run and wait (discovery-busy.mjs).
 *
 *   node bench/discovery.mjs [--dist DIR] [--json FILE]     (DIR defaults to ../dist, or $CURUPIRA_DIST)
 *   node bench/discovery.mjs --only busy [--dist DIR]      (the busy part alone)
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { busy } from './discovery-busy.mjs';

export const name = 'discovery';

const TOKEN = 'bench-token';
const BATCH = 1000;
const TOTAL = 10_000;
const HOUR_S = 3600;

function sum(values) {
  return values.reduce((x, y) => x + y, 0);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function timeIt(times, fn) {
  const samples = [];
  for (let i = 0; i < times; i += 1) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples;
}

async function loadModules(dist) {
  const base = pathToFileURL(`${resolve(dist)}/`).href;
  const load = (path) => import(new URL(path, base).href);
  const modules = await Promise.all(
    [
      'simulator/index.js',
      'github/client.js',
      'github/token.js',
      'github/operations.js',
      'triggers/github-issues/index.js',
      'triggers/github-issues/schema.js',
      'config/load.js',
      'engine/backoff.js',
      'engine/feed.js',
      'core/clock.js',
      'log.js',
    ].map(load),
  );
  return Object.assign({}, ...modules);
}

/** Polls at the default backoff, nothing ever found: how many polls in the first hour, and per hour after. */
function idlePollsPerHour(Backoff, pollIntervalSeconds) {
  const backoff = new Backoff(pollIntervalSeconds);
  let t = 0;
  let polls = 0;
  while (t < HOUR_S * 1000) {
    polls += 1;
    t += backoff.next(false);
  }
  const steady = backoff.next(false);
  return { firstHour: polls, steadyPerHour: (HOUR_S * 1000) / steady, steadyIntervalS: steady / 1000 };
}

export async function run(options = {}) {
  const dist = options.dist ?? process.env.CURUPIRA_DIST ?? new URL('../dist/', import.meta.url).pathname;
  const out = options.log ?? console.log;
  if (options.only === 'busy') return { busy: await busy({ dist, log: out }) };
  const m = await loadModules(dist);

  const world = new m.SimWorld();
  world.addToken(TOKEN, 'bench');
  world.addRepo('acme/api');
  for (let i = 1; i <= TOTAL; i += 1) {
    world.addIssue('acme/api', {
      title: `Issue ${i}`,
      body: `Body of issue ${i}: steps to reproduce, expected and actual behaviour.`,
      labels: ['agent-ready', i % 3 === 0 ? 'bug' : 'enhancement'],
      assignees: i % 2 === 0 ? ['bench'] : [],
    });
  }
  for (let r = 1; r <= 10; r += 1) {
    world.addRepo(`acme/svc-${r}`);
    for (let i = 1; i <= BATCH; i += 1) {
      world.addIssue(`acme/svc-${r}`, { title: `Service ${r} issue ${i}`, labels: ['agent-ready'] });
    }
  }
  world.addRepo('acme/quiet');
  for (let i = 1; i <= 200; i += 1) world.addIssue('acme/quiet', { title: `Not for agents ${i}` });

  const sim = await m.startSimulator({ world, rateLimits: { graphql: 1_000_000 } });
  try {
    const client = m.createGitHubClient({ apiUrl: sim.url, tokens: m.staticTokenSource(TOKEN) });
    const post = (body) =>
      fetch(`${sim.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `bearer ${TOKEN}`, 'content-type': 'application/json' },
        body,
      }).then((r) => r.json());
    const automation = (repo, polling = '') => {
      const text = `[settings.github]
api_url = "${sim.url}"
[settings.polling]
batch_size = ${BATCH}
${polling}
[repositories.r]
remote = "https://github.com/${repo}.git"
[automations.work]
repository = "r"
repo = "${repo}"
labels = "agent-ready"
prompt = "Fix \${issue_number}"
`;
      return m.loadSettingsFromText(text, '/tmp/curupira-bench/settings.toml').settings;
    };
    const sourceFor = (repo) => {
      const settings = automation(repo);
      return {
        settings,
        source: m.createGitHubIssuesSource(settings.automations[0], {
          github: () => client,
          clock: m.systemClock,
          log: m.silentLogger(),
        }),
      };
    };
    const pointsSince = (from) => sum(sim.requests.slice(from).map((r) => r.cost));
    /** Sends the requests logged since `from` again with a bare `fetch`; returns the time they took. */
    const replay = async (from) => {
      const bodies = sim.requests
        .slice(from)
        .map((r) => JSON.stringify({ query: r.query, variables: r.variables }));
      const start = performance.now();
      for (const body of bodies) await post(body);
      return performance.now() - start;
    };

    // Warm up: schema build, JIT, connection pool.
    const warm = sourceFor('acme/quiet').source;
    for (let i = 0; i < 20; i += 1) await warm.discover({ limit: 100 });

    // Baseline 1: the raw round trip of a minimal query.
    const viewer = JSON.stringify({ query: 'query { viewer { login } }' });
    await timeIt(30, () => post(viewer));
    const roundTrip = median(await timeIt(200, () => post(viewer)));

    // Baseline 2: the raw search page curupira asks for, first 100, no client and no trigger.
    const { settings: pageSettings } = sourceFor('acme/api');
    const query = m.issueSearchQuery(pageSettings.automations[0].config);
    const page = JSON.stringify({ query: m.SEARCH_ISSUES, variables: { query, first: 100, after: null } });
    await timeIt(5, () => post(page));
    const rawPage = median(await timeIt(30, () => post(page)));

    // A. one repository, 10 polls of batch_size 1000, agents close each poll's issues.
    const a = sourceFor('acme/api');
    const polls = [];
    const aReplay = [];
    let aRequests = 0;
    let aPoints = 0;
    let found = 0;
    for (let poll = 0; poll < TOTAL / BATCH; poll += 1) {
      const from = sim.requests.length;
      const start = performance.now();
      const items = await a.source.discover({ limit: a.settings.execution.polling.batch_size });
      polls.push(performance.now() - start);
      aRequests += sim.requests.length - from;
      aPoints += pointsSince(from);
      aReplay.push(await replay(from));
      found += items.length;
      for (const item of items) world.closeIssue('acme/api', Number(item.id));
    }
    const aTime = sum(polls);
    const aRaw = sum(aReplay);
    const drained = await a.source.discover({ limit: BATCH });

    // B. ten repositories × 1,000 issues, one automation each, one poll each.
    let bTime = 0;
    let bRaw = 0;
    let bRequests = 0;
    let bPoints = 0;
    let bFound = 0;
    for (let r = 1; r <= 10; r += 1) {
      const { source } = sourceFor(`acme/svc-${r}`);
      const from = sim.requests.length;
      const start = performance.now();
      bFound += (await source.discover({ limit: BATCH })).length;
      bTime += performance.now() - start;
      bRequests += sim.requests.length - from;
      bPoints += pointsSince(from);
      bRaw += await replay(from);
    }

    // Idle: nothing matches.
    const idle = sourceFor('acme/quiet');
    const idleFrom = sim.requests.length;
    const idleSamples = await timeIt(50, () =>
      idle.source.discover({ limit: idle.settings.execution.polling.batch_size }),
    );
    const idleRequests = (sim.requests.length - idleFrom) / 50;
    const idlePoints = pointsSince(idleFrom) / 50;
    const idleTime = median(idleSamples);
    const schedule = idlePollsPerHour(m.Backoff, idle.settings.execution.polling.poll_interval_seconds);

    // Idle hour: an event feed on an injected clock, one hour after a search, nothing changing.
    const idleHour = async (probe, polling = '') => {
      const clock = new m.FakeClock(Date.UTC(2026, 0, 1));
      const settings = automation('acme/quiet', polling);
      const work = settings.automations[0];
      const github = m.createGitHubClient({ apiUrl: sim.url, tokens: m.staticTokenSource(TOKEN), clock });
      const source = m.createGitHubIssuesSource(work, { github: () => github, clock, log: m.silentLogger() });
      const { poll_interval_seconds: interval, max_staleness_seconds: staleness } =
        settings.execution.polling;
      const feed = probe
        ? new m.EventFeed(work, source, interval, staleness * 1000)
        : new m.EventFeed(work, { discover: (request) => source.discover(request) }, interval);
      const context = { store: {}, clock, log: m.silentLogger(), limit: BATCH, preview: false };
      await feed.poll(context);
      const from = sim.requests.length;
      const end = clock.now() + HOUR_S * 1000;
      let polls = 0;
      while (feed.nextPollAt <= end) {
        await clock.advance(Math.max(0, feed.nextPollAt - clock.now()));
        await feed.poll(context);
        polls += 1;
      }
      const requests = sim.requests.slice(from);
      return {
        polls,
        requests: requests.length,
        searches: requests.filter((r) => r.path === '/graphql').length,
        notModified: requests.filter((r) => r.status === 304).length,
        points: sum(requests.map((r) => r.cost + r.coreCost)),
      };
    };
    const idleBefore = await idleHour(false);
    const idleAfter = await idleHour(true);
    const idleAfterNoStaleness = await idleHour(true, 'max_staleness_seconds = 0');

    const result = {
      machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
      baseline: { roundTripMs: roundTrip, rawPageMs: rawPage },
      oneRepo: {
        found,
        polls: polls.length,
        requests: aRequests,
        points: aPoints,
        timeMs: aTime,
        perPollMs: median(polls),
        afterDrainFound: drained.length,
        rawReplayMs: aRaw,
        ratioToRawReplay: aTime / aRaw,
        ratioToRoundTrip: aTime / roundTrip,
      },
      tenRepos: {
        found: bFound,
        requests: bRequests,
        points: bPoints,
        timeMs: bTime,
        rawReplayMs: bRaw,
        ratioToRawReplay: bTime / bRaw,
        ratioToRoundTrip: bTime / roundTrip,
      },
      idle: {
        requestsPerPoll: idleRequests,
        pointsPerPoll: idlePoints,
        pollMs: idleTime,
        ratioToRoundTrip: idleTime / roundTrip,
        pollsFirstHour: schedule.firstHour,
        pollsPerHourSteady: schedule.steadyPerHour,
        pointsFirstHour: schedule.firstHour * idlePoints,
        pointsPerHourSteady: schedule.steadyPerHour * idlePoints,
        shareOfHourlyBudget: (schedule.steadyPerHour * idlePoints) / 5000,
      },
      idleHour: { before: idleBefore, after: idleAfter, afterMaxStaleness0: idleAfterNoStaleness },
    };

    const f = (n, digits = 1) => n.toFixed(digits);
    out(`discovery (${result.machine.cpus} CPUs, Node ${result.machine.node})`);
    out(`  baseline  round trip ${f(roundTrip, 2)} ms · raw 100-issue search page ${f(rawPage, 2)} ms`);
    out(
      `  A  1 repo, ${polls.length} polls × batch_size ${BATCH}: ${found} issues, ${aRequests} requests, ${aPoints} points, ` +
        `${f(aTime, 0)} ms = ${f(result.oneRepo.ratioToRoundTrip, 0)}× round trip; ` +
        `${f(result.oneRepo.ratioToRawReplay, 2)}× the same requests by bare fetch; next poll finds ${drained.length}`,
    );
    out(
      `  B  10 repos × ${BATCH}: ${bFound} issues, ${bRequests} requests, ${bPoints} points, ` +
        `${f(bTime, 0)} ms = ${f(result.tenRepos.ratioToRoundTrip, 0)}× round trip; ` +
        `${f(result.tenRepos.ratioToRawReplay, 2)}× the same requests by bare fetch`,
    );
    out(
      `  idle poll: ${idleRequests} request, ${idlePoints} points, ${f(idleTime, 2)} ms = ${f(result.idle.ratioToRoundTrip, 2)}× round trip; ` +
        `${schedule.firstHour} polls (${result.idle.pointsFirstHour} points) in the first hour, then ` +
        `${schedule.steadyPerHour} polls/h (every ${schedule.steadyIntervalS} s) = ${result.idle.pointsPerHourSteady} points/h ` +
        `(${f(result.idle.shareOfHourlyBudget * 100, 2)}% of 5,000)`,
    );
    const hour = (label, h) =>
      out(
        `  idle hour ${label}: ${h.polls} polls, ${h.requests} requests (${h.searches} searches, ${h.notModified} × 304), ${h.points} points`,
      );
    hour('before (every poll searches)', idleBefore);
    hour('after (change probe, max_staleness_seconds = 600)', idleAfter);
    hour('after (change probe, max_staleness_seconds = 0)', idleAfterNoStaleness);
    result.busy = await busy({ dist, log: out });
    return result;
  } finally {
    await sim.close();
  }
}

function argValue(flag) {
  const index = process.argv.indexOf(flag);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const result = await run({ dist: argValue('--dist'), only: argValue('--only') });
  const json = argValue('--json');
  if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
}
