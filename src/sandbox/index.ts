/**
 * The sandbox step of a run: decides the effective sandbox (the `sandbox` key, what can start
 * here), and for a contained run prepares everything the backend needs: a private home holding
 * only the provider's declared files, a folder of the run's own with the in-sandbox starter and
 * the egress proxy's socket (and, for a run offered curupira's tools, the relay script and the
 * socket the run's tools are served on: src/sandbox/relay.ts), the agent's environment rewritten for the inside (no SSH agent, the
 * private home, the proxy, placeholders where the model keys were), and the argv that starts it.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { Duplex } from 'node:stream';
import { gitWriteDirs } from '../agents/git-dirs.js';
import type { DriverSandbox, McpServerSpec, McpSettingsFile } from '../agents/types.js';
import type { ScreeningFinding } from '../core/types.js';
import { type PrestartedProcess, prestartProcess } from '../process/agent.js';
import { runCommand } from '../process/command.js';
import { sweepDeadOwners } from '../process/process-group.js';
import { registerSecret } from '../security/redact.js';
import { INSIDE_RUN_DIR } from './bubblewrap/index.js';
import { primeControlGroupMoves } from './limits.js';
import { createNoSandbox } from './none/index.js';
import { type KeyForward, startEgressProxy } from './proxy.js';
import { sandboxBackend } from './registry.js';
import { RELAY_FILE, RELAY_SOURCE, relayCommand, TOOLS_SOCKET } from './relay.js';
import { launchFileContent } from './starter.js';
import type {
  LateCommand,
  SandboxBackend,
  SandboxLimits,
  SandboxMode,
  SandboxPolicy,
  SandboxSpec,
  WrappedCommand,
} from './types.js';

export type { SandboxMode, SandboxPolicy } from './types.js';
export { SANDBOX_MODES } from './types.js';

/** The port the in-sandbox forwarder listens on (the sandbox's own loopback: no clash with the host). */
export const INSIDE_PROXY_PORT = 3128;

/** Where files a driver keeps outside its worktree (`homeFileEnv`) go in the private home. */
const HOME_FILES = join('.local', 'state', 'curupira');

/** Files every provider's agent gets in its private home: git's identity and settings. */
const COMMON_HOME_PATHS = ['.gitconfig', '.config/git/config', '.config/git/ignore'];

/** Variables never passed into a sandbox: they point at what the sandbox hides. */
const DROPPED_ENV = [
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'XDG_RUNTIME_DIR',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_STATE_HOME',
  'DBUS_SESSION_BUS_ADDRESS',
  'GNUPGHOME',
  'GH_CONFIG_DIR',
];

export interface SandboxChoice {
  mode: SandboxMode;
  /** Where the mode came from: `automation`, `profile`, `settings`, or the default's reason. */
  source: string;
}

export interface SandboxRequest {
  choice: SandboxChoice;
  runId: string;
  /** Names the private home: runs of one task share it (a resumed session finds its files). */
  homeKey: string;
  cwd: string;
  /** The agent's environment, as built for an unsandboxed run. */
  env: Readonly<Record<string, string>>;
  /** The agent CLI, resolved to an absolute path. */
  executable: string;
  args: readonly string[];
  /** curupira's own HOME (where the provider's files are copied from). */
  realHome: string | undefined;
  /** Where private homes are kept (`<state folder>/sandbox`). */
  stateDir: string;
  driver: DriverSandbox | undefined;
  profile: { readPaths: readonly string[]; writePaths: readonly string[]; hosts: readonly string[] };
  /** Hosts the automation names (package registries). */
  automationHosts: readonly string[];
  /** GitHub's hosts, when the profile is given the token. */
  githubHosts: readonly string[];
  limits: SandboxLimits;
  /** The backend to use (tests); default the registry's bubblewrap. */
  backend?: SandboxBackend;
  /**
   * Serves the run's curupira tools on a unix socket at the given path (src/mcp/socket.ts): the
   * relay the agent's CLI starts inside (`toolsRelay`) reaches them there.
   */
  tools?: (socketPath: string) => Promise<{ close(): Promise<void> }>;
  /**
   * The run's MCP servers, for a CLI that reads them from a settings file only
   * (`driver.mcpSettingsFile`): written into the private home's copy of that file.
   */
  mcpServers?: readonly McpServerSpec[];
}

/** Whether a run with this choice will be contained (a required sandbox that cannot start fails the run). */
export async function willContain(choice: SandboxChoice, backend?: SandboxBackend): Promise<boolean> {
  if (choice.mode === 'none') return false;
  return (await (backend ?? sandboxBackend('bubblewrap')).probe()).ok;
}

/**
 * Called when a run with this choice starts preparing its workspace: where its sandbox will start
 * with a control group, the kernel is readied for the move meanwhile (`primeControlGroupMoves`).
 */
export function primeSandbox(choice: SandboxChoice, backend?: SandboxBackend): void {
  if (choice.mode === 'none') return;
  void willContain(choice, backend)
    .then((contained) => contained && primeControlGroupMoves())
    .catch(() => false);
}

/**
 * The command a sandboxed agent's CLI starts as the run's curupira MCP server: the relay script in
 * the run's folder, run by the Node.js binary the sandbox binds (src/sandbox/relay.ts).
 */
export function toolsRelay(runId: string): { command: string; args: string[] } {
  return relayCommand(process.execPath, INSIDE_RUN_DIR, runId);
}

export interface PreparedSandbox {
  policy: SandboxPolicy;
  executable: string;
  args: string[];
  env: Record<string, string>;
  place?(pid: number): Promise<void>;
  channel?(socket: Duplex): void;
  endsWithLeader?: boolean;
  /** The sandbox started early (`startSandboxEarly`): the agent is launched in it, not spawned. */
  prestarted?: { process: PrestartedProcess; launch(): Promise<void> };
  /** Findings for the run: the policy and every blocked connection. */
  findings(): ScreeningFinding[];
  dispose(): Promise<void>;
}

/** A run that must not start: no sandbox could, and the automation requires one. */
export class SandboxUnavailableError extends Error {
  readonly code = 'sandbox_unavailable';
}

/** Expands `~/` against `home`; keeps absolute paths; refuses relative ones. */
export function expandPath(path: string, home: string | undefined): string | undefined {
  if (path === '~' || path.startsWith('~/')) return home ? join(home, path.slice(1)) : undefined;
  return isAbsolute(path) ? resolve(path) : undefined;
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The agent CLI's install: its folder, and the node_modules folder behind a symlinked npm bin. */
export function installDirs(executable: string): string[] {
  const dirs = new Set<string>([dirname(executable)]);
  const real = canonical(executable);
  dirs.add(dirname(real));
  const marker = `${sep}node_modules${sep}`;
  const at = real.lastIndexOf(marker);
  if (at >= 0) {
    // The whole node_modules folder that holds the package: a CLI may run a binary from a sibling
    // package (Codex's `@openai/codex-linux-x64`).
    dirs.add(real.slice(0, at + marker.length - 1));
  }
  const node = dirname(dirname(process.execPath));
  if (!node.startsWith('/usr')) dirs.add(node);
  return [...dirs];
}

function policyLimits(limits: SandboxLimits, unenforced: readonly string[]): string[] {
  const lines = [`memory ${limits.memoryMb} MiB`, `processes ${limits.maxProcesses}`];
  return [...lines, ...unenforced.map((line) => `not enforced: ${line}`)];
}

/** Whether a git config file may turn `extensions.worktreeConfig` on (read loosely: when in doubt, yes). */
function worktreeConfigOn(configFile: string): boolean {
  try {
    return /worktreeconfig/i.test(readFileSync(configFile, 'utf8'));
  } catch {
    return false;
  }
}

/** How the git directories of a run's worktree are mounted. */
export interface GitLayout {
  readOnly: string[];
  writable: string[];
  /** Files mounted read-only last, over writable folders. */
  protectedPaths: string[];
}

/**
 * The git directories of the worktree at `cwd` as the sandbox sees them. What git run by curupira
 * outside the sandbox (status, push, worktree removal) would execute or obey must stay out of the
 * agent's reach: the shared `config` (`core.hooksPath`, `core.fsmonitor`, filters), the hooks,
 * `info`, the worktree's `.git` pointer and its git directory's `commondir` and `gitdir` (which
 * could name another repository, with a config of the agent's).
 *
 * For a linked worktree the common directory is mounted read-only as a whole, with exactly what a
 * commit writes bound writable over it (`objects`, `refs`, `logs`, and the worktree's own git
 * directory): no file of it is a mount point, so git outside replacing its `config` (a rename)
 * cannot undo the protection. A checkout used in place (`checkout = "main"`) writes `HEAD` and
 * `index` at the top of its `.git`, which stays writable; its `config`, `hooks` and `info` are then
 * mounted read-only one by one (a rename of `config` by git outside during the run would replace
 * that mount: docs/sandbox.md).
 */
export function gitLayout(cwd: string, gitDirs: readonly string[]): GitLayout {
  const pointer = join(cwd, '.git');
  const linked = existsSync(pointer) && !statSync(pointer).isDirectory();
  const [common, own] = gitDirs;
  if (linked && common && own && own !== common) {
    const logs = join(common, 'logs');
    if (!existsSync(logs)) mkdirSync(logs, { recursive: true });
    // Git reads the worktree's own `config.worktree` only with `extensions.worktreeConfig` on in
    // the (read-only) shared config. Where it is on, the file is made (empty) and mounted
    // read-only; elsewhere it is left alone (its presence keeps a worktree out of the pool).
    const worktreeConfig = join(own, 'config.worktree');
    if (worktreeConfigOn(join(common, 'config')) && !existsSync(worktreeConfig))
      writeFileSync(worktreeConfig, '');
    return {
      readOnly: [common],
      writable: [join(common, 'objects'), join(common, 'refs'), logs, own],
      protectedPaths: [join(own, 'commondir'), join(own, 'gitdir'), worktreeConfig, pointer].filter((path) =>
        existsSync(path),
      ),
    };
  }
  const protectedPaths: string[] = [];
  for (const dir of gitDirs) {
    const hooks = join(dir, 'hooks');
    // Created empty when missing, so that none can be added.
    if (!existsSync(hooks)) mkdirSync(hooks, { recursive: true });
    protectedPaths.push(hooks, join(dir, 'info'), join(dir, 'config'), join(dir, 'config.worktree'));
  }
  if (linked) protectedPaths.push(pointer);
  return {
    readOnly: [],
    writable: [...gitDirs],
    protectedPaths: protectedPaths.filter((path) => existsSync(path)),
  };
}

/** The effective sandbox without starting it (for `validate --explain` and `run --dry-run`). */
export async function describeSandbox(
  choice: SandboxChoice,
  hosts: readonly string[],
  limits: SandboxLimits,
): Promise<SandboxPolicy> {
  if (choice.mode === 'none')
    return {
      backend: 'none',
      summary: `none: sandbox = "none" (${choice.source})`,
      writable: [],
      hosts: [],
      limits: [],
    };
  const probe = await sandboxBackend('bubblewrap').probe();
  if (!probe.ok) {
    const summary =
      choice.mode === 'auto'
        ? `none: ${probe.reason} (sandbox = "auto", ${choice.source}: the agent runs unsandboxed)`
        : `unavailable: ${probe.reason} (sandbox = "${choice.mode}", ${choice.source}: runs fail)`;
    return { backend: 'none', summary, writable: [], hosts: [], limits: [] };
  }
  return {
    backend: 'bubblewrap',
    summary: `bubblewrap (sandbox = "${choice.mode}", ${choice.source})`,
    writable: ['the worktree', 'its git directories', 'a private home', 'a private /tmp'],
    hosts: [...new Set(hosts)],
    limits: policyLimits(limits, []),
  };
}

function finding(rule: string, severity: ScreeningFinding['severity'], excerpt: string): ScreeningFinding {
  return { scanner: 'sandbox', rule, severity, field: 'sandbox', offset: 0, excerpt };
}

function copyHomeFiles(realHome: string | undefined, home: string, paths: readonly string[]): void {
  if (!realHome) return;
  for (const relative of paths) {
    if (relative.includes('..') || isAbsolute(relative)) continue;
    const source = join(realHome, relative);
    if (!existsSync(source)) continue;
    const target = join(home, relative);
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    cpSync(source, target, { recursive: true, dereference: true, force: true });
  }
}

/**
 * JSON with comments (`//` and `/* … *\/` outside strings) and trailing commas, as the settings
 * files of agent CLIs allow; undefined when it is not that.
 */
export function parseJsonWithComments(text: string): unknown {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
      out += ' ';
    } else if (c === ',' && /^\s*[}\]]/.test(text.slice(i + 1, i + 200))) {
      // a trailing comma: left out
    } else out += c;
  }
  try {
    return JSON.parse(out);
  } catch {
    return undefined;
  }
}

/**
 * The run's MCP servers declared in the private home's settings file of a CLI that reads them
 * there only (Gemini CLI), merged over that file as copied from the user's home. A file that is not
 * JSON (with comments) fails the run with the reason rather than losing the user's settings.
 */
function declareMcpServers(home: string, file: McpSettingsFile, servers: readonly McpServerSpec[]): void {
  if (file.path.includes('..') || isAbsolute(file.path)) throw new Error(`bad settings path ${file.path}`);
  const path = join(home, file.path);
  let existing: Record<string, unknown> = {};
  if (existsSync(path)) {
    const parsed = parseJsonWithComments(readFileSync(path, 'utf8'));
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new Error(
        `~/${file.path} is not a JSON object, so the run's tools cannot be declared in the sandbox's copy of it; fix the file (or remove it)`,
      );
    existing = parsed as Record<string, unknown>;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(file.merge(existing, servers), null, 2)}\n`, { mode: 0o600 });
}

/** A task's home under `<stateDir>/<folder>`, named by a hash of its key (a task's runs share it). */
function taskHome(stateDir: string, folder: string, homeKey: string): string {
  return join(stateDir, folder, createHash('sha256').update(homeKey).digest('hex').slice(0, 24));
}

/**
 * Outside a sandbox, the run's MCP servers for a CLI that reads them from a settings file only and
 * whose own folder a variable can move (`DriverSandbox.mcpSettingsFile`, `outsideHomeEnv`: Gemini
 * CLI's `GEMINI_CLI_HOME`): a home of curupira's per task (`<stateDir>/cli-homes/<hash of the
 * task>`) gets the driver's `homePaths` copied from the operator's home and the servers declared in
 * its settings file, as a sandbox's private home does; the variable names it. The agent keeps the
 * operator's `HOME`; the user's own file is not written. Undefined when there is nothing to declare.
 */
export function declareMcpServersOutside(request: {
  driver: DriverSandbox | undefined;
  servers: readonly McpServerSpec[];
  env: Readonly<Record<string, string>>;
  stateDir: string;
  homeKey: string;
  realHome: string | undefined;
}): Record<string, string> | undefined {
  const file = request.driver?.mcpSettingsFile;
  const variable = file?.outsideHomeEnv;
  if (!file || !variable || request.servers.length === 0) return undefined;
  const home = taskHome(request.stateDir, 'cli-homes', request.homeKey);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  linkCliFolder(request.realHome, home, file.path, request.driver?.homePaths ?? []);
  copyHomeFiles(request.realHome, home, [file.path]);
  declareMcpServers(home, file, request.servers);
  return { ...request.env, [variable]: home };
}

/**
 * Outside a sandbox, the CLI's own folder in a task's home (`.gemini` for `.gemini/settings.json`)
 * shows what the operator's holds, each entry linked to the real one (their global `GEMINI.md`,
 * commands, extensions, login, sessions), the settings file aside: that one is curupira's merged
 * copy. The agent reaches the operator's home anyway; nothing is copied that could go stale. An
 * entry the task's home already holds as its own (a folder the CLI made there) is left as it is,
 * except a copy of a driver's file that an earlier run made, now a link.
 */
function linkCliFolder(
  realHome: string | undefined,
  home: string,
  settingsPath: string,
  copied: readonly string[],
): void {
  const folder = dirname(settingsPath);
  if (!realHome || folder === '.' || folder.includes('..') || isAbsolute(folder)) return;
  const source = join(realHome, folder);
  let names: string[];
  try {
    if (!statSync(source).isDirectory()) return;
    names = readdirSync(source);
  } catch {
    return;
  }
  const target = join(home, folder);
  mkdirSync(target, { recursive: true, mode: 0o700 });
  for (const name of names) {
    if (name === basename(settingsPath)) continue;
    const link = join(target, name);
    const present = lstatOrUndefined(link);
    if (present?.isSymbolicLink()) rmSync(link);
    else if (present?.isFile() && copied.includes(join(folder, name))) rmSync(link);
    else if (present) continue;
    symlinkSync(join(source, name), link);
  }
}

function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** The sandbox of one run, ready to start; throws SandboxUnavailableError when it must not run. */
export async function prepareSandbox(request: SandboxRequest): Promise<PreparedSandbox> {
  const { choice } = request;
  const none = async (summary: string, warning?: string): Promise<PreparedSandbox> => {
    const wrapped = await createNoSandbox().wrap(undefined as never, request.executable, request.args);
    const policy: SandboxPolicy = { backend: 'none', summary, writable: [], hosts: [], limits: [] };
    const declared = declareMcpServersOutside({
      driver: request.driver,
      servers: request.mcpServers ?? [],
      env: request.env,
      stateDir: request.stateDir,
      homeKey: request.homeKey,
      realHome: request.realHome,
    });
    return {
      policy,
      executable: wrapped.executable,
      args: wrapped.args,
      env: declared ?? { ...request.env },
      findings: () => [finding('policy', warning ? 'medium' : 'low', summary)],
      dispose: wrapped.dispose,
    };
  };
  if (choice.mode === 'none') return none(`none: sandbox = "none" (${choice.source})`);
  const backend = request.backend ?? sandboxBackend('bubblewrap');
  const probe = await backend.probe();
  if (!probe.ok) {
    if (choice.mode === 'auto')
      return none(`none: ${probe.reason} (sandbox = "auto": the agent ran unsandboxed)`, 'warning');
    throw new SandboxUnavailableError(
      `no sandbox can start here and sandbox = "${choice.mode}" (${choice.source}): ${probe.reason}`,
    );
  }

  return containLate(request, backend, makeBase(request), undefined);
}

/** A run's folder in the temporary folder: `cur-sbx-<pid of the curupira that made it>-XXXXXX`. */
const RUN_DIR_PREFIX = 'cur-sbx-';
let swept = false;

/**
 * Removes the run folders in `dir` that a curupira now gone left behind (killed before its runs
 * ended: a sandbox started early may have left its launch file, which holds the agent's
 * environment). A folder whose curupira is alive, or that this user cannot remove, is left alone.
 */
export function sweepRunDirs(dir: string): void {
  sweepDeadOwners(dir, RUN_DIR_PREFIX);
}

/** What a contained run's sandbox is made of before its agent's argv and environment are known. */
interface SandboxBase {
  spec: SandboxSpec;
  home: string;
  homeInside: string;
}

/** The private home, the run's folder with its starter, and the mounts the sandbox will have. */
function makeBase(
  request: Pick<
    SandboxRequest,
    'realHome' | 'stateDir' | 'homeKey' | 'driver' | 'cwd' | 'executable' | 'limits'
  > & {
    profile: { readPaths: readonly string[]; writePaths: readonly string[] };
  },
): SandboxBase {
  const homeInside = request.realHome && isAbsolute(request.realHome) ? request.realHome : '/home/agent';
  const home = taskHome(request.stateDir, 'homes', request.homeKey);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  copyHomeFiles(request.realHome, home, [...COMMON_HOME_PATHS, ...(request.driver?.homePaths ?? [])]);

  if (!swept) {
    // Once per process, before its first run folder.
    swept = true;
    sweepRunDirs(tmpdir());
  }
  const runDir = mkdtempSync(join(tmpdir(), `${RUN_DIR_PREFIX}${process.pid}-`));
  // Written there by the backend only when it runs the Node.js starter.
  const starter = join(runDir, 'starter.cjs');
  const paths = (list: readonly string[]): string[] =>
    list.flatMap((path) => {
      const full = expandPath(path, request.realHome);
      return full && existsSync(full) ? [full] : [];
    });
  const git = gitLayout(request.cwd, gitWriteDirs(request.cwd));
  const writable = [...git.writable, ...paths(request.profile.writePaths)];
  const readOnly = [...installDirs(request.executable), ...git.readOnly, ...paths(request.profile.readPaths)];
  const spec: SandboxSpec = {
    cwd: request.cwd,
    writable,
    readOnly,
    protectedPaths: git.protectedPaths,
    home,
    homeInside,
    runDir,
    proxySocket: join(runDir, 'egress.sock'),
    starter,
    cacheDir: request.stateDir,
    proxyPort: INSIDE_PROXY_PORT,
    limits: request.limits,
  };
  return { spec, home, homeInside };
}

/**
 * The rest of a contained run's sandbox, once its agent is known: the environment inside (the
 * private home, the proxy, placeholders for the keys), the egress proxy, the run's tools, and the
 * sandbox itself: wrapped now, or, for a sandbox started early, the launch of the agent in it.
 */
async function containLate(
  request: SandboxRequest,
  backend: SandboxBackend,
  base: SandboxBase,
  early: EarlySandbox | undefined,
): Promise<PreparedSandbox> {
  const { choice } = request;
  const { spec, home, homeInside } = base;
  const { runDir } = spec;
  if (request.tools) writeFileSync(join(runDir, RELAY_FILE), RELAY_SOURCE, { mode: 0o444 });
  const settingsFile = request.driver?.mcpSettingsFile;
  if (settingsFile && request.mcpServers && request.mcpServers.length > 0)
    declareMcpServers(home, settingsFile, request.mcpServers);

  // The environment inside: the private home, the proxy, and placeholders for the keys.
  const env: Record<string, string> = { ...request.env };
  for (const name of DROPPED_ENV) delete env[name];
  env.HOME = homeInside;
  env.TMPDIR = '/tmp';
  const proxyUrl = `http://127.0.0.1:${INSIDE_PROXY_PORT}`;
  for (const name of ['HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy', 'ALL_PROXY', 'all_proxy'])
    env[name] = proxyUrl;
  env.NO_PROXY = '127.0.0.1,localhost';
  env.no_proxy = env.NO_PROXY;
  for (const name of request.driver?.homeFileEnv ?? []) {
    const value = env[name];
    if (!value) continue;
    mkdirSync(join(home, HOME_FILES), { recursive: true, mode: 0o700 });
    env[name] = join(homeInside, HOME_FILES, basename(value));
  }
  const keys: KeyForward[] = [];
  const keyArgs: string[] = [];
  for (const route of request.driver?.keys ?? []) {
    const swaps: { placeholder: string; key: string }[] = [];
    for (const name of route.keyEnv) {
      const value = env[name];
      if (!value) continue;
      const placeholder = `curupira-placeholder-${randomBytes(12).toString('hex')}`;
      swaps.push({ placeholder, key: value });
      // Whatever the agent prints of its placeholder is scrubbed as its key would have been.
      registerSecret(placeholder);
      env[name] = placeholder;
    }
    if (swaps.length === 0) continue;
    keys.push({ baseUrl: request.env[route.baseUrlEnv] || route.defaultBaseUrl, swaps });
    const keyUrl = `${proxyUrl}/_key/${keys.length - 1}`;
    env[route.baseUrlEnv] = keyUrl;
    if (route.baseUrlArgs) keyArgs.push(...route.baseUrlArgs(keyUrl));
  }
  const args = [...keyArgs, ...request.args];
  const launch = early ? launchFileContent(env, request.executable, args) : undefined;
  if (early && launch === undefined) {
    // What the launch file cannot carry (a NUL byte, say): the early sandbox goes, and the run's
    // own starts as usual.
    await early.abandon();
    return containLate(request, backend, makeBase(request), undefined);
  }
  // Written now, while the sandbox may still be starting; read by its starter only after `go`.
  if (early && launch !== undefined) writeFileSync(early.late.launchFile, launch, { mode: 0o400 });

  const hosts = [
    ...(request.driver?.hosts ?? []),
    ...request.profile.hosts,
    ...request.automationHosts,
    ...request.githubHosts,
  ];
  const blocked: string[] = [];
  const proxy = await startEgressProxy({
    socketPath: spec.proxySocket,
    allow: hosts,
    keys,
    selfPort: INSIDE_PROXY_PORT,
    onBlocked: (target) => {
      if (blocked.length < 100 && !blocked.includes(target)) blocked.push(target);
    },
  });

  let tools: { close(): Promise<void> } | undefined;
  try {
    tools = await request.tools?.(join(runDir, TOOLS_SOCKET));
  } catch (error) {
    await proxy.close();
    if (early) await early.abandon();
    else rmSync(runDir, { recursive: true, force: true });
    throw error;
  }

  let wrapped: WrappedCommand;
  try {
    wrapped = early ? early.late : await backend.wrap(spec, request.executable, args);
  } catch (error) {
    await proxy.close();
    await tools?.close();
    rmSync(runDir, { recursive: true, force: true });
    throw error;
  }
  const policy: SandboxPolicy = {
    backend: backend.name,
    summary: `${backend.name} (sandbox = "${choice.mode}", ${choice.source})`,
    writable: [request.cwd, ...spec.writable, `${homeInside} (private)`, '/tmp (private)'],
    hosts: [...new Set(hosts)],
    limits: policyLimits(request.limits, wrapped.unenforced),
  };
  let launched = false;
  const policyLine = `${policy.summary}; writable: ${policy.writable.join(', ')}; hosts: ${policy.hosts.join(', ') || 'none'}${keys.length ? '; model keys held by the key proxy' : ''}; limits: ${policy.limits.join(', ')}`;
  return {
    policy,
    executable: wrapped.executable,
    args: wrapped.args,
    env,
    ...(wrapped.place && !early ? { place: wrapped.place } : {}),
    ...(wrapped.channel && !early ? { channel: wrapped.channel } : {}),
    ...(wrapped.endsWithLeader ? { endsWithLeader: true } : {}),
    ...(early && launch !== undefined
      ? {
          prestarted: {
            process: early.process,
            launch: async () => {
              launched = true;
              await early.ready;
              early.late.go();
              // It holds the agent's environment: gone as soon as the starter has read it.
              void early.late.launched
                .then(() => rmSync(early.late.launchFile, { force: true }))
                .catch(() => {});
            },
          },
        }
      : {}),
    findings: () => [
      finding('policy', 'low', policyLine),
      ...blocked.map((target) => finding('blocked-connection', 'high', `blocked connection to ${target}`)),
    ],
    dispose: async () => {
      // An early sandbox whose agent was never launched (the run failed before) is stopped here.
      if (early && !launched) await early.process.abandon();
      await proxy.close();
      await tools?.close();
      await wrapped.dispose();
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}

/** What a sandbox started early needs: everything of `SandboxRequest` but the agent's argv and environment. */
export type EarlySandboxRequest = Omit<
  SandboxRequest,
  'env' | 'args' | 'tools' | 'automationHosts' | 'githubHosts' | 'profile'
> & {
  profile: { readPaths: readonly string[]; writePaths: readonly string[] };
  /** The environment of the sandbox's own processes until the agent starts (its run id). */
  startEnv: Readonly<Record<string, string>>;
};

/** A sandbox started while its run's worktree was being filled (`startSandboxEarly`). */
export interface EarlySandbox {
  cwd: string;
  executable: string;
  homeKey: string;
  base: SandboxBase;
  late: LateCommand;
  /** Resolves once the sandbox can take its agent: its forwarder listens, and it is in its control group. */
  ready: Promise<void>;
  process: PrestartedProcess;
  /** Stops it and removes what it made; for a sandbox its run did not take. */
  abandon(): Promise<void>;
}

/**
 * Starts a contained run's sandbox before its agent is known: bubblewrap, its mounts, its control
 * group and the proxy forwarder start while the worktree (already at its path, with its git
 * directories) is still being filled, and `prepareSandbox` given it then only launches the agent.
 * Undefined where it cannot (no sandbox for this run, a backend without `wrapLate`, no bash or
 * socat): the run's sandbox then starts as usual.
 */
export async function startSandboxEarly(request: EarlySandboxRequest): Promise<EarlySandbox | undefined> {
  if (request.choice.mode === 'none') return undefined;
  const backend = request.backend ?? sandboxBackend('bubblewrap');
  if (!backend.wrapLate || !(await backend.probe()).ok) return undefined;
  const base = makeBase(request);
  const removeRunDir = () => rmSync(base.spec.runDir, { recursive: true, force: true });
  let late: LateCommand | undefined;
  try {
    late = await backend.wrapLate(base.spec);
    if (!late) {
      removeRunDir();
      return undefined;
    }
    const command = late;
    const process = await prestartProcess(command.executable, {
      args: command.args,
      cwd: request.cwd,
      env: request.startEnv,
      channel: command.channel,
    });
    // Placed in its control group while its starter readies the forwarder; ready once both are done.
    const placed = command.place ? command.place(process.pid) : Promise.resolve();
    const ready = Promise.all([command.ready, placed]).then(() => {});
    ready.catch(() => {});
    let abandoned: Promise<void> | undefined;
    return {
      cwd: request.cwd,
      executable: request.executable,
      homeKey: request.homeKey,
      base,
      late: command,
      ready,
      process,
      abandon() {
        abandoned ??= (async () => {
          await process.abandon();
          await command.dispose();
          removeRunDir();
        })();
        return abandoned;
      },
    };
  } catch {
    await late?.dispose();
    removeRunDir();
    return undefined;
  }
}

/**
 * The sandbox of one run, ready to start, on a sandbox started early when `early` is one for this
 * very worktree and agent (else that one is stopped and the run's own starts as usual).
 */
export async function prepareEarlySandbox(
  request: SandboxRequest,
  early: EarlySandbox,
): Promise<PreparedSandbox> {
  const backend = request.backend ?? sandboxBackend('bubblewrap');
  const same =
    request.choice.mode !== 'none' &&
    early.cwd === request.cwd &&
    early.executable === request.executable &&
    early.homeKey === request.homeKey;
  if (!same) {
    await early.abandon();
    return prepareSandbox(request);
  }
  // The rest (environment, proxy, tools) is made while the sandbox finishes starting.
  const [started, prepared] = await Promise.all([
    early.ready.then(
      () => true,
      () => false,
    ),
    containLate(request, backend, early.base, early),
  ]);
  if (started || !prepared.prestarted) return prepared;
  // It did not start after all (its forwarder failed): the run's own sandbox starts as usual.
  await prepared.dispose();
  return prepareSandbox(request);
}

/**
 * Runs the agent CLI's version probe (`claude --version`) inside a sandbox of its own when the
 * run's sandbox can start: the CLI's install and the system read-only, an empty private home and
 * working folder, no network, the run's environment without the model keys. Undefined when the run
 * has no sandbox (the caller then runs the probe as before) or the probe fails.
 */
export async function versionInSandbox(options: {
  choice: SandboxChoice;
  executable: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  stateDir: string;
  limits: SandboxLimits;
  /** The provider's key variables (left out). */
  keyEnv?: readonly string[];
  backend?: SandboxBackend;
}): Promise<{ sandboxed: boolean; stdout?: string }> {
  if (options.choice.mode === 'none') return { sandboxed: false };
  const backend = options.backend ?? sandboxBackend('bubblewrap');
  if (!(await backend.probe()).ok) return { sandboxed: false };
  const scratch = mkdtempSync(join(tmpdir(), 'cur-sbx-version-'));
  try {
    const [cwd, home, runDir] = ['work', 'home', 'run'].map((name) => join(scratch, name)) as [
      string,
      string,
      string,
    ];
    for (const dir of [cwd, home, runDir]) mkdirSync(dir, { mode: 0o700 });
    const wrapped = await backend.wrap(
      {
        cwd,
        writable: [],
        readOnly: installDirs(options.executable),
        protectedPaths: [],
        home,
        homeInside: '/home/agent',
        runDir,
        proxySocket: join(runDir, 'egress.sock'),
        starter: join(runDir, 'starter.cjs'),
        cacheDir: options.stateDir,
        proxyPort: INSIDE_PROXY_PORT,
        limits: options.limits,
        network: false,
      },
      options.executable,
      options.args,
    );
    // The run's environment as the agent would get it inside, without the model keys at all.
    const env: Record<string, string> = { ...options.env, HOME: '/home/agent', TMPDIR: '/tmp' };
    for (const name of [...DROPPED_ENV, ...(options.keyEnv ?? [])]) delete env[name];
    try {
      const result = await runCommand(wrapped.executable, wrapped.args, { env, timeoutMs: 30_000 });
      return result.exitCode === 0 ? { sandboxed: true, stdout: result.stdout } : { sandboxed: true };
    } finally {
      await wrapped.dispose();
    }
  } catch {
    return { sandboxed: true };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** True when `path` is a folder (for the profile's paths in `validate`). */
export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
