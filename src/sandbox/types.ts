/**
 * The sandbox contract. A backend is one folder (`bubblewrap/`, `none/`) exporting a
 * `SandboxBackend`; `registry.ts` lists them. A backend answers two questions: can it start here
 * (`probe`, cached by the caller), and how does a command run inside it (`wrap`: the argv that
 * starts the agent contained, given a `SandboxSpec` that says what the agent may reach). A
 * container or microVM backend is one more folder implementing the same two methods: it gets the
 * same spec (paths, the egress proxy's socket, limits) and must keep the same promises (see
 * docs/sandbox.md): only the listed paths, no network but the proxy socket, no other process
 * visible, the limits applied or reported.
 */
import type { Duplex } from 'node:stream';

/** The `sandbox` key: which backend, and what happens when none can start. */
export type SandboxMode = 'none' | 'auto' | 'required' | 'bubblewrap';
export const SANDBOX_MODES: readonly SandboxMode[] = ['none', 'auto', 'required', 'bubblewrap'];

export type { DriverSandbox, KeyRoute } from '../agents/types.js';

export interface SandboxLimits {
  /** Memory of the whole sandbox (a cgroup), else of each process (RLIMIT_AS), in MiB. */
  memoryMb: number;
  /** Processes and threads the sandbox may hold at once. */
  maxProcesses: number;
}

/** Everything a backend needs to contain one agent run. */
export interface SandboxSpec {
  /** The agent's working directory (writable), at the same path inside. */
  cwd: string;
  /** Writable paths besides `cwd` (the git directories a commit needs, the profile's paths). */
  writable: readonly string[];
  /** Read-only paths besides the system's (the agent CLI's install, the profile's paths). */
  readOnly: readonly string[];
  /**
   * Read-only inside writable ones, mounted last: what git outside the sandbox would execute or
   * obey later (hooks, config, the worktree's `.git` pointer), so that nothing the agent writes
   * runs outside it.
   */
  protectedPaths: readonly string[];
  /** The private home on the host, mounted at `homeInside`. */
  home: string;
  homeInside: string;
  /** A folder of the run's own, holding the proxy socket and the in-sandbox starter. */
  runDir: string;
  /** The unix socket of the egress proxy, inside `runDir`. */
  proxySocket: string;
  /** The in-sandbox starter script, inside `runDir`. */
  starter: string;
  /** A folder the backend may keep things in across runs (a copy of /etc's listed files). */
  cacheDir: string;
  /** The TCP port the starter listens on inside the sandbox's own loopback. */
  proxyPort: number;
  limits: SandboxLimits;
  /**
   * False for a short command that needs no network (the CLI's `--version`): no forwarder starts
   * and nothing is placed in a control group (the limits fall back to prlimit), so the command runs
   * as a plain child process.
   */
  network?: boolean;
}

export interface WrappedCommand {
  executable: string;
  args: string[];
  /** Limits that could not be applied here, each with the reason (shown on the run). */
  unenforced: string[];
  /**
   * Called with the started process's id while it waits at its start line (cgroup placement);
   * the command goes on once it resolves.
   */
  place?(pid: number): Promise<void>;
  /** Talks with the started process on its fd 4 (the starter waits there for its forwarder). */
  channel?(socket: Duplex): void;
  /** Every process the command starts ends with it (a PID namespace torn down as it exits). */
  endsWithLeader?: boolean;
  /** Removes what `wrap` created (a cgroup). */
  dispose(): Promise<void>;
}

/**
 * A sandbox started before its agent is known (`SandboxBackend.wrapLate`): its starter waits on
 * fd 4 (`channel`); `ready` resolves once it can take the agent, and after `launchFile` is
 * written (`launchFileContent` of src/sandbox/starter.ts), `go()` starts the agent it names. It
 * starts at once (no gate on fd 3): `place`, when there is one, is called with its pid as it
 * starts, and `go()` must wait for it, so that the agent starts inside the limits.
 */
export interface LateCommand extends WrappedCommand {
  channel(socket: Duplex): void;
  ready: Promise<void>;
  go(): void;
  /** Resolves once the starter has read the launch file, which is then removed. */
  launched: Promise<void>;
  launchFile: string;
}

export interface SandboxProbe {
  ok: boolean;
  /** Why not, in words a user can act on (what to install or enable). */
  reason?: string;
}

export interface SandboxBackend {
  readonly name: Exclude<SandboxMode, 'none' | 'auto' | 'required'> | 'none';
  probe(): Promise<SandboxProbe>;
  /** The argv that runs `executable args` contained; `executable` is an absolute path. */
  wrap(spec: SandboxSpec, executable: string, args: readonly string[]): Promise<WrappedCommand>;
  /**
   * Optional: the sandbox of `spec` started before its agent is chosen, so that its start overlaps
   * the filling of the worktree; undefined where this backend cannot do it here (a run then
   * starts with `wrap`).
   */
  wrapLate?(spec: SandboxSpec): Promise<LateCommand | undefined>;
}

/** The effective sandbox of a run, as `validate --explain`, `run --dry-run` and the run show it. */
export interface SandboxPolicy {
  backend: string;
  /** `none: …why` when there is no sandbox. */
  summary: string;
  writable: string[];
  hosts: string[];
  limits: string[];
}
