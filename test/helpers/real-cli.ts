/**
 * Running a real agent CLI (installed outside the repository, named by a `CURUPIRA_REAL_*`
 * variable) the way curupira runs it: arguments from the provider's driver, started through
 * `spawnAgent`, plainly or inside the bubblewrap sandbox prepared by `prepareSandbox` (private
 * home, egress and key proxy), its stream read by the driver's parser. The model API is a local
 * stand-in (`test/helpers/model-stand-in/`).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Profile } from '../../src/agents/schemas.js';
import type { AgentDriver, AgentEvent } from '../../src/agents/types.js';
import type { ScreeningFinding } from '../../src/core/types.js';
import { spawnAgent } from '../../src/process/agent.js';
import {
  prepareEarlySandbox,
  prepareSandbox,
  type SandboxRequest,
  startSandboxEarly,
} from '../../src/sandbox/index.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_GLOBAL: '/dev/null', HOME: cwd },
  });
}

/** A checkout with one commit and a linked worktree on a task branch, as curupira makes them. */
export function makeWorktree(prefix: string): { root: string; checkout: string; worktree: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const checkout = join(root, 'api');
  const worktree = join(root, 'api.worktrees', 'fix', 'issue-1');
  git(root, 'init', '-q', '-b', 'main', checkout);
  git(
    checkout,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.invalid',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'root',
  );
  git(checkout, 'worktree', 'add', '-q', '-b', 'curupira/fix/issue-1', worktree);
  return { root, checkout, worktree };
}

/** A shell command that appends to work.txt and commits it with `subject`. */
export function commitCommand(subject: string): string {
  return `echo ${subject} >> work.txt && git add work.txt && git -c user.name=t -c user.email=t@example.invalid commit -q -m ${subject}`;
}

export function lastSubject(worktree: string): string {
  return git(worktree, 'log', '--format=%s', '-1').trim();
}

export interface RealRun {
  exitCode: number | null;
  signal: string | null;
  stdout: string[];
  stderr: string[];
  events: AgentEvent[];
  sessionId: string | undefined;
  /** The sandbox's findings (its policy, blocked connections); empty for a plain run. */
  findings: ScreeningFinding[];
  /** The environment the agent was started with (the sandboxed one: placeholders, proxy). */
  env: Record<string, string>;
}

export interface RealRunOptions {
  driver: AgentDriver;
  executable: string;
  args: readonly string[];
  cwd: string;
  /** The environment as curupira builds it for an unsandboxed run. */
  env: Record<string, string>;
  /** Run inside the bubblewrap sandbox with this state folder (private homes) and real home. */
  sandbox?: { stateDir: string; realHome: string; homeKey: string; hosts?: readonly string[] };
  timeoutMs?: number;
  /** Called with every parsed event; `kill()` ends the agent's whole group with SIGKILL. */
  onEvent?(event: AgentEvent, kill: () => void): void;
}

export async function runReal(options: RealRunOptions): Promise<RealRun> {
  const parser = options.driver.createParser();
  const run: RealRun = {
    exitCode: null,
    signal: null,
    stdout: [],
    stderr: [],
    events: [],
    sessionId: undefined,
    findings: [],
    env: options.env,
  };
  let executable = options.executable;
  let args = [...options.args];
  let env = options.env;
  // As curupira starts a contained run: the sandbox first, while the worktree would be filled
  // (`startSandboxEarly`), then the agent launched in it.
  const request: SandboxRequest | undefined = options.sandbox
    ? {
        choice: { mode: 'bubblewrap', source: 'test' },
        runId: `real-${Date.now()}`,
        homeKey: options.sandbox.homeKey,
        cwd: options.cwd,
        env: options.env,
        executable: options.executable,
        args: options.args,
        realHome: options.sandbox.realHome,
        stateDir: options.sandbox.stateDir,
        driver: options.driver.sandbox,
        profile: { readPaths: [], writePaths: [], hosts: [...(options.sandbox.hosts ?? [])] },
        automationHosts: [],
        githubHosts: [],
        limits: { memoryMb: 8192, maxProcesses: 1024 },
      }
    : undefined;
  const early = request
    ? await startSandboxEarly({
        ...request,
        startEnv: { PATH: '/usr/bin:/bin', CURUPIRA_RUN_ID: request.runId },
      })
    : undefined;
  const prepared = request
    ? early
      ? await prepareEarlySandbox(request, early)
      : await prepareSandbox(request)
    : undefined;
  if (request) expect(prepared?.prestarted, 'the sandbox started before the agent was known').toBeDefined();
  if (prepared) {
    executable = prepared.executable;
    args = prepared.args;
    env = prepared.env;
    run.env = prepared.env;
  }
  let pid = 0;
  const kill = (): void => {
    if (pid > 0) process.kill(-pid, 'SIGKILL');
  };
  const take = (events: AgentEvent[]): void => {
    for (const event of events) {
      run.events.push(event);
      if (event.kind === 'session') run.sessionId ??= event.sessionId;
      options.onEvent?.(event, kill);
    }
  };
  try {
    const result = await spawnAgent({
      executable,
      args,
      cwd: options.cwd,
      env,
      timeoutMs: options.timeoutMs ?? 120_000,
      killGraceMs: 2_000,
      maxOutputBytes: 1_000_000,
      onSpawn: (started) => {
        pid = started;
      },
      onStdoutLine: (line) => {
        run.stdout.push(line);
        take(parser.parseLine(line));
      },
      onStderrLine: (line) => {
        run.stderr.push(line);
      },
      ...(prepared?.place ? { beforeStart: prepared.place } : {}),
      ...(prepared?.channel ? { channel: prepared.channel } : {}),
      ...(prepared?.endsWithLeader ? { groupEndsWithLeader: true } : {}),
      ...(prepared?.prestarted ? { prestarted: prepared.prestarted } : {}),
    });
    take(parser.end());
    run.exitCode = result.exitCode;
    run.signal = result.signal;
  } finally {
    if (prepared) {
      run.findings = prepared.findings();
      await prepared.dispose();
    }
  }
  return run;
}

/** A failed run's output, for an assertion's message. */
export function explain(run: RealRun): string {
  return [
    `exit ${run.exitCode} signal ${run.signal}`,
    ...run.findings.map((f) => `finding: ${f.excerpt}`),
    ...run.stdout.slice(-15).map((line) => `stdout: ${line.slice(0, 600)}`),
    ...run.stderr.slice(-15).map((line) => `stderr: ${line.slice(0, 600)}`),
  ].join('\n');
}

/**
 * A shell command that looks for `canary` everywhere the agent can: its environment, every
 * process's environment and command line, its home and /tmp; what it finds goes to seen.txt (staged
 * with the commit that follows). The pattern is written to a file by a shell builtin, so that no
 * command line holds it.
 */
export function huntCommand(canary: string): string {
  const [head, tail] = [canary.slice(0, 8), canary.slice(8, 24)];
  return `printf '%s%s\\n' ${head} ${tail} > hunt.pat; { env | sed 's/^/env: /'; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f | sed "s|^|$f: |"; done; grep -rs --exclude=hunt.pat -f hunt.pat "$HOME" /tmp; } 2>/dev/null | grep -f hunt.pat | cut -c1-160 > seen.txt; rm hunt.pat; git add seen.txt`;
}

export interface RealCliCase<P extends Profile> {
  /** `OpenCode` */
  label: string;
  /** The variable naming the executable (`CURUPIRA_REAL_OPENCODE`). */
  variable: string;
  driver: AgentDriver<P>;
  profile: P;
  /** The model key the operator holds: `canary-<something>`, at least 24 characters. */
  canary: string;
  /** The variable the key is in (the hunt must find it there outside the sandbox). */
  keyEnv: string;
  /** Writes the CLI's own configuration into the operator's home. */
  prepareHome?(home: string): void;
  /** The environment curupira would build outside a sandbox, for the stand-in at `baseUrl`. */
  env(home: string, baseUrl: string): Record<string, string>;
  /** The model stand-in (started once for the suite). */
  startModel(): Promise<ModelStandIn>;
  /** Set when the CLI cannot resume a session: why (the resume test is then skipped). */
  noResume?: string;
  /**
   * Whether the CLI has saved the turn that ran the tool (its call and result) in one of `files`
   * (the files of the sandbox's private homes that the killed run made): the resume test kills the
   * agent only then, since a CLI that prints the tool's result before saving it resumes without
   * the turn. Absent: killed at once.
   */
  turnSaved?(files: readonly string[]): boolean;
}

/** Files under `dir` whose name ends with `suffix`, at any depth. */
export function filesEndingWith(dir: string, suffix: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith(suffix))
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

/** What the real-CLI suites need of a model stand-in. */
export interface ModelStandIn {
  baseUrl: string;
  requests: {
    authorization: string | undefined;
    messages: number;
    lastRole: string | undefined;
    /** The tools the request offered, where the stand-in records them. */
    tools?: string[];
  }[];
  pending: string | undefined;
  hold: ((request: { lastRole: string | undefined }) => boolean) | undefined;
  close(): Promise<void>;
}

/**
 * The three checks of a real agent CLI: a committing run in a plain worktree (the stand-in gets
 * the key, the agent holds it), the same inside the bubblewrap sandbox (the stand-in gets the key
 * through the key proxy, the agent holds it nowhere), and a resume inside the sandbox after the
 * first run was killed with SIGKILL mid-session.
 */
export function describeRealCli<P extends Profile>(c: RealCliCase<P>): void {
  const executable = process.env[c.variable];
  describe.skipIf(!executable)(`the real ${c.label} CLI (${c.variable})`, () => {
    let model: ModelStandIn;
    let layout: ReturnType<typeof makeWorktree>;
    let home: string;
    let version: string | undefined;
    let sandboxOk = false;
    let sandboxWhy = '';

    beforeAll(async () => {
      const probe = await sandboxBackend('bubblewrap').probe();
      sandboxOk = probe.ok;
      sandboxWhy = probe.reason ?? '';
      model = await c.startModel();
      layout = makeWorktree(`curupira-real-${c.driver.provider}-`);
      home = join(layout.root, 'home');
      mkdirSync(home, { recursive: true });
      c.prepareHome?.(home);
      if (c.driver.versionArgs)
        version = execFileSync(executable!, [...c.driver.versionArgs], {
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '', HOME: home },
        });
    });
    afterAll(async () => {
      await model?.close();
      if (layout) rmSync(layout.root, { recursive: true, force: true });
    });

    const invoke = (prompt: string, resumeSessionId?: string) =>
      c.driver.buildInvocation({
        profile: c.profile,
        prompt,
        worktree: layout.worktree,
        ...(version ? { version } : {}),
        ...(resumeSessionId ? { resumeSessionId } : {}),
        ...(c.driver.assignsSessionId ? { assignedSessionId: randomUUID() } : {}),
      });
    const start = (
      invocation: { args: string[]; env: Record<string, string> },
      sandboxed: boolean,
      more = {},
    ) =>
      runReal({
        driver: c.driver as AgentDriver,
        executable: executable!,
        args: invocation.args,
        cwd: layout.worktree,
        env: { ...c.env(home, model.baseUrl), ...invocation.env },
        ...(sandboxed
          ? {
              sandbox: {
                stateDir: join(layout.root, 'state'),
                realHome: home,
                homeKey: `${c.driver.provider}-task`,
              },
            }
          : {}),
        ...more,
      });
    const seen = (): string => readFileSync(join(layout.worktree, 'seen.txt'), 'utf8');

    it('commits in a plain worktree through the stand-in, which receives the key the agent holds', async () => {
      model.pending = `${huntCommand(c.canary)}; ${commitCommand('plain')}`;
      const run = await start(invoke('commit'), false);
      expect(run.exitCode, explain(run)).toBe(0);
      expect(lastSubject(layout.worktree), explain(run)).toBe('plain');
      expect(model.requests.some((r) => r.authorization?.includes(c.canary))).toBe(true);
      // Unsandboxed, the agent holds the key: the hunt finds it (so the sandboxed check can fail).
      // Not always in its shell's own environment (Copilot CLI strips its provider key there), but
      // in its process's.
      expect(seen()).toContain(`${c.keyEnv}=${c.canary}`);
      // What the hunt found leaves the worktree, so that no later copy of it (Copilot CLI backs up
      // files of the worktree in its session) is taken for a key the sandboxed agent holds.
      writeFileSync(join(layout.worktree, 'seen.txt'), '');
      git(layout.worktree, 'add', 'seen.txt');
      git(
        layout.worktree,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@example.invalid',
        'commit',
        '-q',
        '-m',
        'clean',
      );
    }, 240_000);

    it('commits inside the sandbox; the stand-in receives the key through the key proxy and the agent never holds it', async (context) => {
      if (!sandboxOk) context.skip(`no sandbox starts here: ${sandboxWhy}`);
      model.requests.length = 0;
      model.pending = `${huntCommand(c.canary)}; ${commitCommand('sandboxed')}`;
      const run = await start(invoke('commit'), true);
      expect(run.exitCode, explain(run)).toBe(0);
      expect(lastSubject(layout.worktree), explain(run)).toBe('sandboxed');
      expect(model.requests.length).toBeGreaterThan(0);
      expect(model.requests.every((r) => r.authorization?.includes(c.canary))).toBe(true);
      expect(Object.values(run.env).join('\n')).not.toContain(c.canary);
      expect(seen()).toBe('');
    }, 240_000);

    it('resumes its session inside the sandbox after kill -9 and commits again', async (context) => {
      if (!sandboxOk) context.skip(`no sandbox starts here: ${sandboxWhy}`);
      if (c.noResume) context.skip(c.noResume);
      model.requests.length = 0;
      model.pending = commitCommand('before-kill');
      // The turn after the tool's result never answers: the agent is mid-session when killed.
      model.hold = (request) => request.lastRole === 'tool';
      const first = invoke('commit');
      const homes = join(layout.root, 'state', 'homes');
      const earlier = new Set(filesEndingWith(homes, ''));
      const made = () => filesEndingWith(homes, '').filter((file) => !earlier.has(file));
      const killed = await start(first, true, {
        onEvent: (event: AgentEvent, kill: () => void) => {
          if (event.kind !== 'tool_result') return;
          if (!c.turnSaved) return kill();
          // Killed once the CLI has saved the turn (at most 10 s later; the model holds the next
          // answer meanwhile, so the agent is still mid-session).
          const deadline = Date.now() + 10_000;
          const look = (): void => {
            if (c.turnSaved!(made()) || Date.now() > deadline) kill();
            else setTimeout(look, 20);
          };
          look();
        },
      });
      expect(killed.signal, explain(killed)).toBe('SIGKILL');
      expect(lastSubject(layout.worktree)).toBe('before-kill');
      const session = c.driver.assignsSessionId
        ? /--session-id=([^\s]+)/.exec(first.args.join(' '))?.[1]
        : killed.sessionId;
      expect(session).toBeDefined();

      model.hold = undefined;
      model.pending = commitCommand('resumed');
      const resumed = await start(invoke('go on', session), true);
      expect(resumed.exitCode, explain(resumed)).toBe(0);
      expect(lastSubject(layout.worktree)).toBe('resumed');
      // The resumed request carries the killed run's history (its tool call and result). Of the
      // requests that offer tools where the stand-in records them: a CLI's side request after the
      // turn (Kilo's session title) carries only its own prompt.
      const last = model.requests.filter((r) => r.tools === undefined || r.tools.length > 0).at(-1);
      expect(last?.messages ?? 0, JSON.stringify(model.requests)).toBeGreaterThan(3);
    }, 300_000);
  });
}
