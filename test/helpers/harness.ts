/**
 * An end-to-end world for engine tests: a local GitHub simulator, a bare git "origin" with a
 * commit, the fake agent CLIs on PATH, and a settings file wired to all three, in a temp folder.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installFakeAgents } from '../../src/agents/fake/install.js';
import type { Provider } from '../../src/agents/schemas.js';
import { loadSettings } from '../../src/config/load.js';
import type { Settings } from '../../src/config/types.js';
import { systemClock } from '../../src/core/clock.js';
import type { RunRecord } from '../../src/core/types.js';
import { transcriptsDir } from '../../src/engine/paths.js';
import { type EngineOptions, type EngineResult, runEngine } from '../../src/features.js';
import { createGitHubClient } from '../../src/github/client.js';
import { staticTokenSource } from '../../src/github/token.js';
import { WRITE_BACKOFF_MS } from '../../src/github/write-queue.js';
import { silentLogger } from '../../src/log.js';
import type { NotificationEvent, Notifier } from '../../src/notify/index.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { SimWorld } from '../../src/simulator/world.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { git } from '../../src/workspace/git.js';
import { deliveryBranchName } from '../../src/workspace/paths.js';
import {
  commitFiles,
  createOrigin,
  isolateGitForTests,
  type OriginRepo,
  type SeedFile,
} from '../../src/workspace/testing.js';

export const TOKEN = 'ghp_harnessTokenForTests0000000000000001';
export const ROOT = join(import.meta.dirname, '../..');
export const CLI = join(ROOT, 'dist/cli/main.js');

export interface Harness {
  dir: string;
  sim: Simulator;
  world: SimWorld;
  origin: OriginRepo;
  binDir: string;
  logDir: string;
  settingsFile: string;
  env: NodeJS.ProcessEnv;
  writeSettings(text: string): void;
  /** Rewrites the settings file from the standard template with other pieces (unset ones keep theirs). */
  configure(options: SettingsPieces): void;
  settings(): Settings;
  /** One engine pass in this process (drain unless told otherwise). */
  run(options?: HarnessRunOptions): Promise<EngineResult>;
  /** What `run` hands the engine, over an open store (to build an `Engine` and steer it). */
  engineOptions(store: Store, options?: HarnessRunOptions): EngineOptions;
  openStore(): Promise<Store>;
  /** Every invocation the fake agents recorded, per provider (`--version` probes included). */
  invocations(provider: Provider): FakeInvocation[];
  /** Only the agent runs (no `--version` probes). */
  agentRuns(provider: Provider): FakeInvocation[];
  /** Pids of the stubborn grandchildren `[[fake:spawn-child]]` started. */
  childPids(): number[];
  cleanup(): Promise<void>;
}

export interface HarnessRunOptions {
  mode?: 'drain' | 'watch';
  size?: number;
  killGraceMs?: number;
  stop?: AbortSignal;
  drain?: AbortSignal;
  onRun?: EngineOptions['onRun'];
  onStatus?: EngineOptions['onStatus'];
  reload?: EngineOptions['reload'];
  reloadIntervalMs?: number;
  log?: EngineOptions['log'];
  classifierFactory?: EngineOptions['classifierFactory'];
}

export interface FakeInvocation {
  provider: string;
  kind: 'run' | 'version';
  argv: string[];
  prompt?: string;
  cwd: string;
  /** Names, the values of FAKE_* and a few path variables, and a SHA-256 of every value. */
  env: { keys: string[]; values: Record<string, string>; hashes: Record<string, string> };
  pid: number;
  resumeOf: string | null;
  sessionId: string | null;
  /** ISO time the invocation started. */
  time: string;
}

export interface SettingsPieces {
  provider?: Provider;
  /** Lines appended to `[agents.profiles.main]`. */
  profileExtra?: string;
  /** More entries of the profile's `env` table (FAKE_AGENT_LOG is always set). */
  agentEnv?: Record<string, string>;
  /** Lines appended to `[settings]`. */
  settingsExtra?: string;
  /** `task_timeout_minutes` (default 5). */
  timeoutMinutes?: number;
  /** Tables appended at the end (repositories' extra lines go in `repositoryExtra`). */
  automation?: string;
  /** Lines appended to `[repositories.api]`. */
  repositoryExtra?: string;
  /**
   * The body of `[settings.screening]`. Default `required = false`: these worlds have no classifier,
   * and a required one that is missing blocks every event-triggered run.
   */
  screening?: string;
}

export interface HarnessOptions extends SettingsPieces {
  issues?: { title: string; body?: string; labels?: string[] }[];
  /** Files of origin's first commit besides README.md. */
  originFiles?: Record<string, string | SeedFile>;
  /** The simulator's clock (its `date` headers: GitHub's time); default the real one. */
  simulatorNow?: () => number;
  /**
   * The pause between two GitHub writes of the in-process engines (default the queue's, 1 s). The
   * simulator has no secondary limits: 0 where a file's tests do not depend on the order of writes
   * and polls that pause gives.
   */
  writePaceMs?: number;
}

/** Every file below `dir`, at any depth (for scans of everything a test world holds). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return [];
    return stat.isDirectory() ? filesUnder(path) : stat.isFile() ? [path] : [];
  });
}

/**
 * A prompt with each fenced block (notice, BEGIN line, text, END line) replaced by its text, for
 * tests about which item ran rather than about fencing (every title is fenced since issue 11).
 */
export function unfenced(prompt: string): string {
  return prompt.replace(
    /The block below is untrusted data from [^\n]*\n----- BEGIN UNTRUSTED DATA (\w+) -----\n([\s\S]*?)\n?----- END UNTRUSTED DATA \1 -----/g,
    (_block, _nonce: string, text: string) => text,
  );
}

export function defaultAutomation(prompt = 'Fix issue ${issue_number}: ${issue_title}'): string {
  return `[automations.fix]
trigger_type = "plugins-py/github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = ${JSON.stringify(prompt)}
`;
}

/** An `[automations.<id>]` table on `acme/api` issues in repository `api` (unless `extra` says otherwise). */
export function issueAutomation(
  id: string,
  options: { prompt: string; labels?: string[]; repository?: string; extra?: string },
): string {
  return `[automations.${id}]
trigger_type = "github-issues"
repository = "${options.repository ?? 'api'}"
repo = "acme/api"
labels = ${JSON.stringify(options.labels ?? ['agent-ready'])}
prompt = ${JSON.stringify(options.prompt)}
${options.extra ?? ''}
`;
}

function tomlInlineTable(values: Record<string, string>): string {
  return `{ ${Object.entries(values)
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join(', ')} }`;
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  isolateGitForTests();
  const origin = await createOrigin({
    files: { 'README.md': '# sample\n', ...(options.originFiles ?? {}) },
  });
  const dir = origin.dir;
  const world = new SimWorld();
  world.addRepo('acme/api', { gitDir: origin.url });
  world.addUser('octocat');
  world.addToken(TOKEN, 'octocat');
  world.addLabel('acme/api', 'agent-ready');
  for (const issue of options.issues ?? [
    { title: 'First issue', body: 'Please fix.', labels: ['agent-ready'] },
  ]) {
    world.addIssue('acme/api', {
      title: issue.title,
      body: issue.body ?? '',
      labels: issue.labels ?? ['agent-ready'],
      author: 'octocat',
    });
  }
  const sim = await startSimulator({ world, ...(options.simulatorNow ? { now: options.simulatorNow } : {}) });
  const binDir = join(dir, 'bin');
  const logDir = join(dir, 'agent-log');
  mkdirSync(logDir, { recursive: true });
  installFakeAgents(binDir, { logDir });
  const settingsFile = join(dir, 'settings.toml');
  let pieces: SettingsPieces = { ...options };
  const render = (p: SettingsPieces): string => `[settings]
workspace_dir = "${join(dir, 'workspaces')}"
state_db_path = "${join(dir, 'state', 'state.sqlite3')}"
task_timeout_minutes = ${p.timeoutMinutes ?? 5}
${p.settingsExtra ?? ''}

[settings.github]
api_url = "${sim.url}"

[settings.screening]
${p.screening ?? 'required = false'}

[repositories.api]
remote = "file://${origin.url}"
${p.repositoryExtra ?? ''}

[agents.defaults]
profile = "main"

[agents.profiles.main]
provider = "${p.provider ?? 'claude'}"
env = ${tomlInlineTable({ FAKE_AGENT_LOG: logDir, ...(p.agentEnv ?? {}) })}
sandbox_write_paths = ${JSON.stringify([logDir])}
${p.profileExtra ?? ''}

${p.automation ?? defaultAutomation()}
`;
  const harness: Harness = {
    dir,
    sim,
    world,
    origin,
    binDir,
    logDir,
    settingsFile,
    env: {
      PATH: `${binDir}:${process.env.PATH ?? ''}`,
      HOME: dir,
      LANG: 'C.UTF-8',
      GH_TOKEN: TOKEN,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
    writeSettings(text: string) {
      writeFileSync(settingsFile, text);
    },
    configure(next: SettingsPieces) {
      pieces = { ...pieces, ...next };
      writeFileSync(settingsFile, render(pieces));
    },
    settings() {
      return loadSettings(settingsFile).settings;
    },
    engineOptions(store, runOptions = {}) {
      const settings = harness.settings();
      const tokens = staticTokenSource(TOKEN);
      return {
        settings,
        mode: runOptions.mode ?? 'drain',
        ...(runOptions.size === undefined ? {} : { size: runOptions.size }),
        ...(runOptions.onRun ? { onRun: runOptions.onRun } : {}),
        ...(runOptions.onStatus ? { onStatus: runOptions.onStatus } : {}),
        ...(runOptions.reload ? { reload: runOptions.reload } : {}),
        ...(runOptions.reloadIntervalMs === undefined
          ? {}
          : { reloadIntervalMs: runOptions.reloadIntervalMs }),
        tokens,
        store,
        ...(runOptions.classifierFactory ? { classifierFactory: runOptions.classifierFactory } : {}),
        clock: systemClock,
        log: runOptions.log ?? silentLogger(),
        env: harness.env,
        github: () => createGitHubClient({ apiUrl: settings.execution.github.api_url, tokens }),
        transcriptsDir: transcriptsDir(settings),
        // As `curupira run` does: the built CLI with this settings file (a review run's findings server).
        selfCommand: { command: process.execPath, args: [CLI, '--config', settingsFile] },
        stopSignal: runOptions.stop ?? new AbortController().signal,
        ...(runOptions.drain ? { drainSignal: runOptions.drain } : {}),
        killGraceMs: runOptions.killGraceMs ?? 2000,
        // A write that failed once is retried after 0.2 s, not 2 s; later retries keep their waits,
        // so a write failing for good still takes minutes to give up.
        writeQueue: {
          backoffMs: [200, ...WRITE_BACKOFF_MS.slice(1)],
          ...(options.writePaceMs === undefined ? {} : { paceMs: options.writePaceMs }),
        },
      };
    },
    async run(runOptions = {}) {
      const store = await openStore(harness.settings().execution.state_db_path);
      try {
        return await runEngine(harness.engineOptions(store, runOptions));
      } finally {
        await store.close();
      }
    },
    async openStore() {
      return openStore(harness.settings().execution.state_db_path);
    },
    invocations(p: Provider) {
      const file = join(logDir, `${p}.jsonl`);
      if (!existsSync(file)) return [];
      // An agent may be appending its line right now: a last line without its newline is not whole yet.
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.pop();
      return lines.filter(Boolean).map((line) => JSON.parse(line) as FakeInvocation);
    },
    agentRuns(p: Provider) {
      return harness.invocations(p).filter((call) => call.kind === 'run');
    },
    childPids() {
      const file = join(logDir, 'children.pids');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
    },
    async cleanup() {
      await sim.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
  harness.configure({});
  return harness;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI as a child process (`cli`: another copy's `main.js`). */
export function runBuiltCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; cli?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.cli ?? CLI, ...args], {
      env: options.env ?? process.env,
      cwd: options.cwd ?? ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The branch a delivery of `run` pushes to GitHub (its readable name; the local branch differs). */
export function deliveredBranch(run: Pick<RunRecord, 'automationId' | 'itemId' | 'itemTitle'>): string {
  return deliveryBranchName(run.automationId, run.itemId, run.itemTitle);
}

export function onlyRun(runs: readonly RunRecord[]): RunRecord {
  if (runs.length !== 1)
    throw new Error(
      `expected exactly one run, got ${runs.length}: ${JSON.stringify(runs.map((r) => r.status))}`,
    );
  return runs[0]!;
}

export interface StartedCli {
  child: ChildProcess;
  /** Resolves when the process has exited (whatever the reason). */
  done: Promise<CliResult>;
}

/** Starts the built CLI as a child process without waiting for it (for kill tests). */
export function startBuiltCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): StartedCli {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: options.env ?? process.env,
    cwd: options.cwd ?? ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/**
 * True while `pid` is a running process. A zombie (exited, waiting for a parent that may never
 * reap it, as some container inits do) counts as gone.
 */
/**
 * Whether a process a fake agent recorded is still alive, whichever PID namespace it recorded its
 * pid in (a sandboxed agent sees its own, issue 26): a live process whose command line holds
 * `marker` and whose pid, as seen from its own namespace (the last `NSpid` entry), is `pid`.
 */
export function fakeProcessAlive(pid: number, marker: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const nspid = /^NSpid:\s+(.+)$/m
        .exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/);
      if (Number(nspid?.at(-1)) !== pid) continue;
      if (!readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(marker)) continue;
      if (isRunning(Number(entry))) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

/** A running fake agent as `/proc` shows it. */
export interface FakeAgentProcess {
  hostPid: number;
  /** Its pid in its own PID namespace (the last `NSpid` entry): what a sandboxed agent records. */
  innerPid: number;
  cwd: string;
  /** When it started (epoch ms, to about 10 ms). */
  startedAt: number;
}

/** Clock ticks per second of /proc's times (the kernel's USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/** When the process started (epoch ms), from its `/proc/<pid>/stat` and the uptime read now. */
function processStart(stat: string, uptimeSeconds: number, now: number): number {
  // Field 22 (starttime, in ticks since boot); the fields after the command's closing parenthesis start at 3.
  const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  return now - (uptimeSeconds - ticks / USER_HZ) * 1000;
}

/**
 * Every running fake agent, from one pass over `/proc`. The command line is read first, so any
 * other process costs one small read: a check of many invocations scans `/proc` once, not once
 * per invocation (60 invocations on a machine of 500 processes were 30,000 reads a tick).
 */
export function fakeAgentProcesses(): FakeAgentProcess[] {
  const found: FakeAgentProcess[] = [];
  const now = Date.now();
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes('fake-agent')) continue;
      const inner = /^NSpid:\s+(.+)$/m
        .exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/)
        .at(-1);
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const startedAt = processStart(readFileSync(`/proc/${entry}/stat`, 'utf8'), uptime, now);
      if (isRunning(Number(entry)))
        found.push({ hostPid: Number(entry), innerPid: Number(inner), cwd, startedAt });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * The host pid of a fake agent's invocation while it runs, else undefined. A sandboxed agent
 * records its pid inside its own PID namespace (where it is a small number that every sandbox
 * shares), so the process is found by that inner pid together with its working folder. `running`
 * is a scan already made (`fakeAgentProcesses()`), for checking many invocations at one instant.
 */
export function agentHostPid(
  call: Pick<FakeInvocation, 'pid' | 'cwd'> & Partial<Pick<FakeInvocation, 'time'>>,
  running: readonly FakeAgentProcess[] = fakeAgentProcesses(),
): number | undefined {
  // A process that started after the invocation was logged is a later one: a sandboxed agent's pid
  // is a small number every sandbox shares, and a resume works in the same folder (and pids wrap).
  const loggedAt = call.time === undefined ? Number.POSITIVE_INFINITY : Date.parse(call.time);
  return running.find(
    (agent) =>
      agent.innerPid === call.pid &&
      (agent.cwd === call.cwd || agent.cwd.startsWith(`${call.cwd} `)) &&
      agent.startedAt <= loggedAt + START_SLACK_MS,
  )?.hostPid;
}

/** How much earlier than its start a process may seem to log (the two clocks' resolutions: 10 ms and 1 ms). */
const START_SLACK_MS = 50;

/** True while the fake agent of this invocation runs (sandboxed or not). */
export function agentRunning(
  call: Pick<FakeInvocation, 'pid' | 'cwd'> & Partial<Pick<FakeInvocation, 'time'>>,
  running?: readonly FakeAgentProcess[],
): boolean {
  return agentHostPid(call, running) !== undefined;
}

/** What the stubborn grandchild of `[[fake:spawn-child]]` has on its command line. */
export const STUBBORN_CHILD = "process.on('SIGTERM'";

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Requests to the simulator that could write: anything but GETs and GraphQL queries (no mutation). */
export function writeRequests(harness: Harness): Harness['sim']['requests'] {
  return harness.sim.requests.filter(
    (r) =>
      !(
        r.method === 'GET' ||
        (r.method === 'POST' && r.path.endsWith('/graphql') && !/^\s*mutation\b/.test(r.query ?? ''))
      ),
  );
}

/** Polls `check` until it returns a truthy value (returned), or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The most intervals open at one instant; an interval ending when another starts does not overlap it. */
export function peakOverlap(intervals: readonly { start: number; end: number }[]): number {
  const events = intervals.flatMap((i) => [
    { at: i.start, delta: 1 },
    { at: i.end, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let peak = 0;
  for (const event of events) {
    open += event.delta;
    peak = Math.max(peak, open);
  }
  return peak;
}

/** A run's agent time, from its record. */
export function runInterval(run: RunRecord): { start: number; end: number } {
  if (!run.startedAt || !run.finishedAt) throw new Error(`run ${run.id} has no start or end time`);
  return { start: Date.parse(run.startedAt), end: Date.parse(run.finishedAt) };
}

/** A `Notifier` stand-in that records what the engine notifies (for `EngineOptions.notifier`). */
export function recordingNotifier(events: NotificationEvent[]): Notifier {
  const double = {
    notify: async (event: NotificationEvent) => {
      events.push(event);
      return [];
    },
    run: async () => undefined,
    drain: async () => undefined,
  };
  return double as unknown as Notifier;
}

/** Commits `files` in a clone of the harness's origin and pushes it to main, as a contributor would. */
export async function pushToMain(
  harness: Harness,
  files: Record<string, string>,
  message: string,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'curupira-contrib-'));
  try {
    await git(['clone', '-q', harness.origin.url, dir], { cwd: tmpdir() });
    const sha = await commitFiles(dir, files, message);
    await git(['push', '-q', 'origin', `${sha}:refs/heads/main`], { cwd: dir });
    return sha;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
