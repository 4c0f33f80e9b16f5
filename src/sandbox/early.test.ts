/**
 * A sandbox started before its agent is known (`startSandboxEarly`): the agent launched in it later
 * gets exactly its argv and environment (each value one argument, whatever it holds), its exit
 * code, and nothing of the real key; one never taken is stopped with what it made; one that is not
 * for the run's worktree gives way to the usual start.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
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
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AWKWARD_ARGS } from '../../test/helpers/awkward-argv.js';
import { spawnAgent } from '../process/agent.js';
import { findExecutable } from '../process/env.js';
import { processAlive } from '../process/process-group.js';
import { createBubblewrapBackend, type LateStarterKind } from './bubblewrap/index.js';
import {
  type EarlySandbox,
  type PreparedSandbox,
  prepareEarlySandbox,
  type SandboxRequest,
  startSandboxEarly,
  sweepRunDirs,
} from './index.js';
import { sandboxBackend } from './registry.js';
import { launchFileContent } from './starter.js';

const probe = await sandboxBackend('bubblewrap').probe();
/** The starters this machine can run: each gets the same tests (`lateStarterCommand`). */
const starters: LateStarterKind[] = probe.ok
  ? [
      ...(findExecutable('perl', '/usr/bin:/bin') ? (['perl'] as const) : []),
      ...(findExecutable('socat', '/usr/bin:/bin') && findExecutable('bash', '/usr/bin:/bin')
        ? (['bash'] as const)
        : []),
    ]
  : [];
let backend = createBubblewrapBackend();

const dirs: string[] = [];
const started: EarlySandbox[] = [];
afterEach(async () => {
  for (const early of started.splice(0)) await early.abandon();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const git = (args: string[], cwd: string) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@invalid', ...args], {
    cwd,
    encoding: 'utf8',
  });

/** A checkout with one commit and a linked worktree, as runs get them. */
function worktree(): { dir: string; cwd: string } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'sbx-early-')));
  dirs.push(dir);
  const checkout = join(dir, 'checkout');
  git(['init', '-q', '-b', 'main', checkout], dir);
  git(['commit', '-q', '--allow-empty', '-m', 'init'], checkout);
  const cwd = join(dir, 'wt');
  git(['worktree', 'add', '-q', '--detach', cwd], checkout);
  return { dir, cwd };
}

function request(dir: string, cwd: string, args: string[]): SandboxRequest {
  return {
    backend,
    choice: { mode: 'bubblewrap', source: 'the automation' },
    runId: 'r_early',
    homeKey: 'task\0main',
    cwd,
    env: { PATH: '/usr/bin:/bin', HOME: dir, SSH_AUTH_SOCK: '/x', ANTHROPIC_API_KEY: 'sk-real-canary' },
    executable: '/bin/sh',
    args,
    realHome: dir,
    stateDir: join(dir, 'state', 'sandbox'),
    driver: {
      hosts: ['api.anthropic.com'],
      homePaths: [],
      keys: [
        {
          keyEnv: ['ANTHROPIC_API_KEY'],
          baseUrlEnv: 'ANTHROPIC_BASE_URL',
          defaultBaseUrl: 'https://api.anthropic.com',
        },
      ],
    },
    profile: { readPaths: [], writePaths: [], hosts: [] },
    automationHosts: [],
    githubHosts: [],
    limits: { memoryMb: 1024, maxProcesses: 64 },
  };
}

/** Starts the agent of `prepared` as the engine does: launched in its early sandbox, else spawned. */
function run(prepared: PreparedSandbox, cwd: string, onStdoutLine: (line: string) => void) {
  return spawnAgent({
    executable: prepared.executable,
    args: prepared.args,
    cwd,
    env: prepared.env,
    maxOutputBytes: 65_536,
    onStdoutLine,
    ...(prepared.place ? { beforeStart: prepared.place } : {}),
    ...(prepared.channel ? { channel: prepared.channel } : {}),
    ...(prepared.prestarted ? { prestarted: prepared.prestarted } : {}),
    groupEndsWithLeader: true,
  });
}

async function early(dir: string, cwd: string): Promise<EarlySandbox> {
  const base = request(dir, cwd, []);
  const sandbox = await startSandboxEarly({
    ...base,
    startEnv: { PATH: '/usr/bin:/bin', CURUPIRA_RUN_ID: 'r_early' },
  });
  expect(sandbox).toBeDefined();
  started.push(sandbox!);
  return sandbox!;
}

describe('run folders left behind', () => {
  it('are removed when the curupira that made them is gone, and only then', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sbx-sweep-'));
    dirs.push(dir);
    const dead = spawnSync('/bin/true').pid!;
    const names = [
      `cur-sbx-${dead}-aaaaaa`,
      `cur-sbx-${process.pid}-bbbbbb`,
      'cur-sbx-1-cccccc',
      'cur-sbx-version-dd',
      'other',
    ];
    for (const name of names) {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, 'launch'), 'x');
    }
    sweepRunDirs(dir);
    expect(readdirSync(dir).sort()).toEqual(names.slice(1).sort());
  });
});

describe('the launch file', () => {
  it('holds the count, the entries, the executable and its arguments, each ended by NUL', () => {
    expect(launchFileContent({ A: '1', B: 'x y' }, '/bin/sh', ['-c', ''])).toBe(
      '2\0A=1\0B=x y\0/bin/sh\0-c\0\0',
    );
  });

  it('refuses what cannot pass through it', () => {
    expect(launchFileContent({ A: 'a\0b' }, '/bin/sh', [])).toBeUndefined();
    expect(launchFileContent({}, '/bin/sh', ['a\0'])).toBeUndefined();
    expect(launchFileContent({}, '/opt/a=b/agent', [])).toBeUndefined();
    expect(launchFileContent({}, 'sh', [])).toBeUndefined();
    expect(launchFileContent({ '': 'x' }, '/bin/sh', [])).toBeUndefined();
  });
});

describe.skipIf(starters.length === 0)('a sandbox started before its agent is known', () => {
  // Skipped where bubblewrap cannot start, or neither Perl nor bash with socat is installed.
  describe.each(starters)('with the %s starter', (starter) => {
    beforeAll(() => {
      backend = createBubblewrapBackend({ lateStarter: starter });
    });
    afterAll(() => {
      backend = createBubblewrapBackend();
    });

    it('launches the agent with exactly its argv and environment, its exit code, and no real key', async () => {
      const { dir, cwd } = worktree();
      const sandbox = await early(dir, cwd);
      expect(sandbox.late.args.some((arg) => arg.endsWith(`/${starter}`))).toBe(true);
      const args = [
        '-c',
        'sleep 0.3; printf "<%s>\\n" "$@"; printf "home=%s\\n" "$HOME"; printf "key=%s\\n" "$ANTHROPIC_API_KEY"; printf "ssh=%s\\n" "${SSH_AUTH_SOCK-unset}"; printf "pwd=%s\\n" "$PWD"; cat /proc/self/environ | tr "\\0" "\\n" | grep -c sk-real-canary; exit 7',
        'sh',
        ...AWKWARD_ARGS,
      ];
      const prepared = await prepareEarlySandbox(request(dir, cwd, args), sandbox);
      expect(prepared.prestarted).toBeDefined();
      const lines: string[] = [];
      const result = await run(prepared, cwd, (line) => lines.push(line));
      // The launch file (the agent's environment) went once the starter had read it.
      expect(existsSync(sandbox.late.launchFile)).toBe(false);
      await prepared.dispose();
      expect(result.pid).toBe(sandbox.process.pid);
      expect(result.exitCode, result.stderrTail).toBe(7);
      expect(lines.slice(0, 7)).toEqual([
        '<two words>',
        "<it's $HOME `id` \\>",
        '<line',
        'break>',
        '<>',
        '<x=y>',
        '<-i>',
      ]);
      expect(lines).toContain(`home=${dir}`);
      // The placeholder, which the transcript scrubs as it would the key.
      expect(prepared.env.ANTHROPIC_API_KEY).toMatch(/^curupira-placeholder-[0-9a-f]{24}$/);
      expect(lines).toContain('key=[redacted]');
      expect(lines).toContain('ssh=unset');
      expect(lines).toContain(`pwd=${cwd}`);
      expect(lines.at(-1)).toBe('0');
      expect(existsSync(sandbox.base.spec.runDir)).toBe(false);
    });

    it('a sandbox no run takes is stopped, and its folder and home files go', async () => {
      const { dir, cwd } = worktree();
      const sandbox = await early(dir, cwd);
      await sandbox.ready;
      expect(processAlive(sandbox.process.pid)).toBe(true);
      const runDir = sandbox.base.spec.runDir;
      expect(existsSync(runDir)).toBe(true);
      await sandbox.abandon();
      expect(processAlive(sandbox.process.pid)).toBe(false);
      expect(existsSync(runDir)).toBe(false);
    });

    it('one started for another worktree gives way: the run gets its own sandbox, and the early one stops', async () => {
      const { dir, cwd } = worktree();
      const other = worktree();
      const sandbox = await early(other.dir, other.cwd);
      const prepared = await prepareEarlySandbox(request(dir, cwd, ['-c', 'pwd']), sandbox);
      expect(prepared.prestarted).toBeUndefined();
      expect(processAlive(sandbox.process.pid)).toBe(false);
      const lines: string[] = [];
      const result = await run(prepared, cwd, (line) => lines.push(line));
      await prepared.dispose();
      expect(result.exitCode, result.stderrTail).toBe(0);
      expect(lines).toEqual([cwd]);
    });

    it('the agent writes in its worktree, whose files git wrote after the sandbox started', async () => {
      const { dir, cwd } = worktree();
      const sandbox = await early(dir, cwd);
      // Written after the sandbox's mounts were made: the agent sees it through the worktree's mount.
      git(['checkout', '-q', '-b', 'task'], cwd);
      const prepared = await prepareEarlySandbox(
        request(dir, cwd, ['-c', 'git rev-parse --abbrev-ref HEAD && echo made > made.txt']),
        sandbox,
      );
      const lines: string[] = [];
      const result = await run(prepared, cwd, (line) => lines.push(line));
      await prepared.dispose();
      expect(result.exitCode, result.stderrTail).toBe(0);
      expect(lines).toEqual(['task']);
      expect(readFileSync(join(cwd, 'made.txt'), 'utf8')).toBe('made\n');
    });

    it('the agent starts inside the control group, the second sandbox of a process as the first', async () => {
      const { dir, cwd } = worktree();
      for (let round = 0; round < 2; round += 1) {
        // The first sandbox of this process makes its group before it starts; later ones while it
        // starts (deferred): both must hold the agent in the group before it runs.
        const sandbox = await early(dir, cwd);
        const prepared = await prepareEarlySandbox(
          request(dir, cwd, ['-c', 'echo started; sleep 1']),
          sandbox,
        );
        const groups: string[] = [];
        const result = await run(prepared, cwd, () => {
          for (const pid of descendantsOf(sandbox.process.pid).slice(1))
            groups.push(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
        });
        await prepared.dispose();
        expect(result.exitCode, result.stderrTail).toBe(0);
        // A host without control groups says so on the policy, and has nothing to check here.
        if (prepared.policy.limits.some((line) => line.startsWith('not enforced: memory and process count')))
          continue;
        expect(groups.length).toBeGreaterThan(0);
        for (const lines of groups) expect(lines).toMatch(/curupira-cur-sbx-/);
      }
    });
  });
});

/** `pid` and every process below it (host pids). */
function descendantsOf(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i += 1) {
    try {
      const children = readFileSync(`/proc/${found[i]}/task/${found[i]}/children`, 'utf8').trim();
      for (const child of children.split(/\s+/)) if (child) found.push(Number(child));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
