/**
 * The contract of an agent provider: how to call its CLI headless, how to resume, and how to read
 * its output stream. One folder per provider implements `AgentDriver`; `registry.ts` maps names.
 */
import type { LimitPattern } from './limits.js';
import type { Profile, Provider } from './schemas.js';

export interface BuildInvocationInput<P extends Profile = Profile> {
  profile: P;
  /** The prompt text. Always passed so that a leading `-` stays prompt text. */
  prompt: string;
  /** The worktree (or shared checkout) the agent runs in; also its cwd. */
  worktree: string;
  /** Continue this saved session instead of starting a new one. */
  resumeSessionId?: string;
  /** For providers that take a session id from the caller (copilot): the id curupira chose and saved. */
  assignedSessionId?: string;
  /** The CLI's version as printed by `versionArgs`, when the driver declares them. */
  version?: string;
  /**
   * MCP servers over stdio to declare to the CLI for this run only (a review's findings tools),
   * in the way that CLI loads them. Only a driver with `declaresMcpServers` is given any.
   */
  mcpServers?: readonly McpServerSpec[];
  /**
   * The environment built for the agent before the driver's own variables are added, for a driver
   * that extends a variable the user set rather than replacing it (OpenCode's
   * `OPENCODE_CONFIG_CONTENT`).
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** One MCP server over stdio: the process the agent's CLI starts and talks to. */
export interface McpServerSpec {
  /** The server's name in the CLI's configuration (letters, digits, `_` and `-`). */
  name: string;
  /** An absolute path: the CLI starts it without a shell. */
  command: string;
  args: readonly string[];
  /** Variables set for the server, beyond what the CLI passes on. */
  env: Readonly<Record<string, string>>;
}

export interface AgentInvocation {
  /** Arguments after the executable, in the exact order the provider expects. */
  args: string[];
  /** Variables this provider needs set for the run (e.g. `OPENCODE_DB`), added to the built env. */
  env: Record<string, string>;
}

/**
 * What a provider's stream means, normalised across providers for display and accounting.
 *
 * - `session`: each distinct session id once, as soon as the stream names it (save it then).
 * - `tool_call` / `tool_result`: `input` and `output` are display text (JSON for structured
 *   payloads); `id` pairs a result with its call when the provider gives one.
 * - `usage`: an increment; a run's usage is the sum of its usage events. `inputTokens` counts every
 *   prompt token, cached ones included; `cachedInputTokens` is the part read from a cache.
 * - `done`: the provider said the task is over (`result` is its final answer, when it gives one).
 *   A stream may end without it (crash, kill); the process exit is the authority.
 */
export type AgentEvent =
  | { kind: 'session'; sessionId: string }
  | { kind: 'assistant'; text: string }
  | { kind: 'thinking'; text: string }
  | { kind: 'tool_call'; id?: string; name: string; input: string }
  | { kind: 'tool_result'; id?: string; name?: string; output: string; isError: boolean }
  | { kind: 'usage'; inputTokens: number; outputTokens: number; cachedInputTokens: number; costUsd?: number }
  | { kind: 'error'; message: string }
  | { kind: 'done'; isError: boolean; result?: string };

/**
 * Stateful per run: some providers spread one message over several lines. Lines that are not the
 * provider's JSON (banners, blank lines, garbage) yield no events and never throw.
 */
export interface AgentStreamParser {
  parseLine(line: string): AgentEvent[];
  /** Called once after the last line: whatever was held back (a message still streaming). */
  end(): AgentEvent[];
}

/** What a provider needs inside a sandbox (declared by its driver, `AgentDriver.sandbox`). */
export interface DriverSandbox {
  /** Files and folders under the home the CLI reads (its config and credentials), copied into the private home. */
  readonly homePaths: readonly string[];
  /** Hosts (`host` or `host:port`, port 443 when absent) the CLI must reach: its model API. */
  readonly hosts: readonly string[];
  /**
   * Keys the key proxy keeps outside: the agent gets a placeholder in `keyEnv` and a base URL in
   * `baseUrlEnv` pointing at the proxy, which swaps the placeholder for the real key on the way
   * to `baseUrlEnv`'s real value (or `defaultBaseUrl`).
   */
  readonly keys?: readonly KeyRoute[];
  /**
   * Variables naming a file the CLI keeps outside its worktree (OpenCode's `OPENCODE_DB`): outside
   * a sandbox the run keeps them; inside, nothing but the worktree and the private home outlives
   * the run, so they name a file of that name in the private home (which a task's runs share).
   */
  readonly homeFileEnv?: readonly string[];
  /**
   * For a CLI that reads MCP servers from a settings file only (Gemini CLI): inside a sandbox, the
   * run's servers are merged into that file of the private home (`path`, under the home), over the
   * copy of the user's own, so that neither the user's file nor the repository's is written.
   */
  readonly mcpSettingsFile?: McpSettingsFile;
}

/** See `DriverSandbox.mcpSettingsFile`. */
export interface McpSettingsFile {
  /** The file under the home (`.gemini/settings.json`). */
  readonly path: string;
  /** The file's content with `servers` declared, from its current content (`{}` when there is none). */
  merge(existing: Record<string, unknown>, servers: readonly McpServerSpec[]): Record<string, unknown>;
  /**
   * Outside a sandbox: the variable that moves the CLI's own folder (`path`'s first part) to
   * another home without moving `HOME` (Gemini CLI's `GEMINI_CLI_HOME`). The run's servers are then
   * declared as inside, in a home of curupira's per task (the driver's `homePaths` copied there,
   * sessions kept there for a resume), and the agent's commands keep the operator's `HOME`.
   */
  readonly outsideHomeEnv?: string;
}

export interface KeyRoute {
  readonly keyEnv: readonly string[];
  readonly baseUrlEnv: string;
  readonly defaultBaseUrl: string;
  /**
   * For a CLI that takes its base URL from its configuration rather than from `baseUrlEnv`: the
   * arguments, put before the CLI's own, that point it at `url` (the key proxy). `baseUrlEnv`
   * still names where the real base URL comes from.
   */
  baseUrlArgs?(url: string): readonly string[];
}

/** See `AgentDriver.unattended`. */
export interface UnattendedHook<P extends Profile = Profile> {
  /**
   * How the CLI finds a login without asking: variables holding a key or token (in curupira's
   * environment or the profile's `env`) and files its own login writes under the home folder. With
   * none of them, a run may stop at an interactive login. Absent: not checked.
   */
  readonly login?: { env: readonly string[]; homeFiles: readonly string[] };
  /**
   * When the profile leaves the CLI asking for approval of tool calls, which an unattended run
   * cannot give: the profile key to set and what to set it to; undefined when it does not ask.
   */
  approval?(profile: P): { key: string; advice: string } | undefined;
}

export interface AgentDriver<P extends Profile = Profile> {
  readonly provider: Provider;
  readonly displayName: string;
  /** Default executable name, looked up on PATH unless the profile sets `executable`. */
  readonly executable: string;
  readonly installUrl: string;
  /** True when curupira picks the session id and passes it in (copilot). */
  readonly assignsSessionId: boolean;
  /**
   * Environment variables this provider needs to work, beyond the base set: exact names, or prefixes
   * ending in `*` (e.g. `ANTHROPIC_*`).
   */
  readonly envAllowlist: readonly string[];
  /** Arguments that print the CLI's version, when `buildInvocation` depends on it. */
  readonly versionArgs?: readonly string[];
  /**
   * The messages this provider's CLI prints when the account hit a usage or rate limit (see
   * limits.ts): a failed run matching one is parked until the reset instead of failing.
   */
  readonly limits?: readonly LimitPattern[];
  /**
   * What the CLI prints (on stderr or as its reported error) when asked to resume a conversation it
   * does not have (its session store was emptied, or the run moved into or out of a sandbox's
   * private home): such a session is dropped at once instead of after `max_resume_failures`.
   */
  readonly missingSession?: readonly RegExp[];
  /** What a sandbox must let through for this CLI (docs/sandbox.md); nothing when absent. */
  readonly sandbox?: DriverSandbox;
  /** True when `buildInvocation` declares `mcpServers` to the CLI (absent: they are not offered). */
  readonly declaresMcpServers?: boolean;
  /** What would stop this CLI at a login or an approval prompt in an unattended run (`curupira doctor`). */
  readonly unattended?: UnattendedHook<P>;
  buildInvocation(input: BuildInvocationInput<P>): AgentInvocation;
  createParser(): AgentStreamParser;
  /**
   * A one-shot call that only answers in text: no tools, nothing written, no MCP server, no
   * project configuration, no saved session (the screening classifier `classifier_agent`; see
   * docs/screening.md). The stream format is the usual one (`createParser` reads it). Absent for a
   * provider whose CLI offers no such mode that we checked against its `--help`.
   */
  classifierInvocation?(profile: P, prompt: string): AgentInvocation;
}
