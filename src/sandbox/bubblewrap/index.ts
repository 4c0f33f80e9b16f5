/**
 * The bubblewrap backend (Debian's `bubblewrap` package): new user, PID, network, IPC and UTS
 * namespaces; a root of its own on a tmpfs holding the system folders read-only, a few files of
 * /etc, a fresh /proc, /dev and /tmp, the private home, the agent CLI's install read-only, and
 * writable exactly the worktree and the git directories its commits need. The only way out of
 * its network namespace is the egress proxy's unix socket.
 */
import { lstatSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { runCommand } from '../../process/command.js';
import { findExecutable } from '../../process/env.js';
import { processAlive } from '../../process/process-group.js';
import { type ControlGroup, childrenOf, createControlGroup, primeSettled } from '../limits.js';
import {
  answerStarter,
  LATE_STARTER,
  LAUNCH_FILE,
  lateStarterChannel,
  PERL_LATE_STARTER,
  SHELL_STARTER,
  STARTER_SOURCE,
} from '../starter.js';
import type { LateCommand, SandboxBackend, SandboxProbe, SandboxSpec, WrappedCommand } from '../types.js';
import { etcLayout } from './etc.js';

/** Folders of the system, read-only (a symlink such as /bin → usr/bin stays a symlink). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt', '/nix/store'];
/** Whether this process could make a control group for its last sandbox (undefined: none made yet). */
let groupsWork: boolean | undefined;

/** Programs found on a PATH, looked up again after a few seconds (each look is a stat per folder). */
const found = new Map<string, { path: string | undefined; at: number }>();
const FOUND_FOR_MS = 5_000;

function installed(name: string, path: string): string | undefined {
  const key = `${name}\0${path}`;
  const now = performance.now();
  const known = found.get(key);
  if (known && now - known.at < FOUND_FOR_MS) return known.path;
  const resolved = findExecutable(name, path);
  found.set(key, { path: resolved, at: now });
  return resolved;
}

/** Where the run's folder appears inside. */
export const INSIDE_RUN_DIR = '/run/curupira';

function kind(path: string): 'dir' | 'file' | 'link' | 'socket' | undefined {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return 'link';
    if (stat.isDirectory()) return 'dir';
    if (stat.isSocket()) return 'socket';
    return 'file';
  } catch {
    return undefined;
  }
}

/**
 * The starter of a sandbox started early: one Perl process where Perl is installed (Debian's
 * `perl-base`, always there), else bash with socat and `env`; undefined where neither can (the run's
 * sandbox then starts after its worktree, with the agent's argv). `prefer` picks one (tests).
 */
function lateStarterCommand(spec: SandboxSpec, prefer: LateStarterKind | undefined): string[] | undefined {
  const port = String(spec.proxyPort);
  const socket = `${INSIDE_RUN_DIR}/egress.sock`;
  const launch = `${INSIDE_RUN_DIR}/${LAUNCH_FILE}`;
  const perl = installed('perl', '/usr/bin:/bin');
  if (perl && prefer !== 'bash') return [perl, '-e', PERL_LATE_STARTER, port, socket, launch];
  if (prefer === 'perl') return undefined;
  const socat = installed('socat', '/usr/bin:/bin');
  const bash = installed('bash', '/usr/bin:/bin');
  const envBinary = installed('env', '/usr/bin:/bin');
  if (!socat || !bash || !envBinary) return undefined;
  return [bash, '-c', LATE_STARTER, 'bash', port, socket, launch, envBinary];
}

/** Which starter a sandbox started early runs (`lateStarterCommand`). */
export type LateStarterKind = 'perl' | 'bash';

export function createBubblewrapBackend(
  options: { path?: string | undefined; env?: NodeJS.ProcessEnv; lateStarter?: LateStarterKind } = {},
): SandboxBackend {
  const env = options.env ?? process.env;
  const binary = (): string | undefined => installed('bwrap', options.path ?? env.PATH ?? '');
  let probed: Promise<SandboxProbe> | undefined;
  return {
    name: 'bubblewrap',
    probe() {
      probed ??= probe(binary());
      return probed;
    },
    async wrap(spec: SandboxSpec, executable: string, args: readonly string[]): Promise<WrappedCommand> {
      const network = spec.network !== false;
      const socat = installed('socat', '/usr/bin:/bin');
      const sh = installed('sh', '/usr/bin:/bin');
      const shellStarter = network && Boolean(socat && sh);
      const command: string[] = [];
      if (!network) {
        command.push(executable, ...args);
      } else if (shellStarter) {
        command.push(sh!, '-c', SHELL_STARTER, 'sh', String(spec.proxyPort));
        command.push(`${INSIDE_RUN_DIR}/egress.sock`, executable, ...args);
      } else {
        writeFileSync(spec.starter, STARTER_SOURCE, { mode: 0o444 });
        command.push(process.execPath, `${INSIDE_RUN_DIR}/starter.cjs`, String(spec.proxyPort));
        command.push(`${INSIDE_RUN_DIR}/egress.sock`, executable, ...args);
      }
      const wrapped = await contained(spec, command);
      return { ...wrapped, ...(shellStarter ? { channel: answerStarter } : {}) };
    },
    async wrapLate(spec: SandboxSpec): Promise<LateCommand | undefined> {
      if (spec.network === false) return undefined;
      const command = lateStarterCommand(spec, options.lateStarter);
      if (!command) return undefined;
      const starter = lateStarterChannel();
      const wrapped = await contained(spec, command, { late: true });
      return {
        ...wrapped,
        channel: starter.channel,
        ready: starter.ready,
        go: starter.go,
        launched: starter.launched,
        launchFile: join(spec.runDir, LAUNCH_FILE),
      };
    },
  };

  /** bubblewrap's argv around `command`, its control group and how it ends. */
  async function contained(
    spec: SandboxSpec,
    command: readonly string[],
    options: { late?: boolean } = {},
  ): Promise<WrappedCommand> {
    const bwrap = binary();
    if (!bwrap) throw new Error('bwrap is not installed');
    const argv: string[] = ['--unshare-all', '--die-with-parent'];
    const network = spec.network !== false;
    const groupName = `curupira-${spec.runDir.split('/').pop() ?? 'run'}`;
    // Where this process has made groups before, a sandbox started early (`late`) starts at once
    // and makes its group while bubblewrap mounts and its starter readies the forwarder: the group
    // waits for the prime's grace period then, not the sandbox's start.
    const deferred = network && options.late === true && groupsWork === true;
    let group: ControlGroup | undefined;
    if (network && !deferred) {
      await primeSettled();
      group = createControlGroup(groupName, spec.limits);
      groupsWork = group !== undefined;
    }
    // A sandbox started early is not held at its start: its starter only prepares the forwarder,
    // and the agent starts on `go`, which follows the placement (see `startSandboxEarly`).
    if (group && !options.late) argv.push('--block-fd', '3');
    for (const dir of SYSTEM_DIRS) {
      const what = kind(dir);
      if (what === 'link') argv.push('--symlink', readlinkSync(dir), dir);
      else if (what === 'dir') argv.push('--ro-bind', dir, dir);
    }
    const etc = etcLayout(spec.cacheDir);
    argv.push('--ro-bind', etc.dir, '/etc');
    argv.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
    argv.push('--bind', spec.home, spec.homeInside);
    for (const path of spec.readOnly) if (kind(path)) argv.push('--ro-bind', path, path);
    argv.push('--bind', spec.cwd, spec.cwd);
    for (const path of spec.writable) if (kind(path)) argv.push('--bind', path, path);
    // -try: a file git outside may be replacing this instant (the rename then wins; see gitLayout).
    for (const path of spec.protectedPaths) if (kind(path)) argv.push('--ro-bind-try', path, path);
    // The run's folder (the proxy's socket, the Node.js starter, the tools' relay and socket) as
    // one read-only mount: a socket on a read-only mount still accepts connections.
    argv.push('--ro-bind', spec.runDir, INSIDE_RUN_DIR);
    argv.push('--chdir', spec.cwd, '--');
    const unenforced: string[] = [...(group?.unenforced ?? [])];
    if (!group && !deferred) {
      const prlimit = findExecutable('prlimit', env.PATH ?? '/usr/bin:/bin');
      if (prlimit) {
        argv.push(prlimit, `--as=${spec.limits.memoryMb * 1024 * 1024}`);
        argv.push(`--nproc=${spec.limits.maxProcesses}`, '--');
        unenforced.push('memory: bounds each process (RLIMIT_AS), not the sandbox: no cgroup here');
        if (process.getuid?.() === 0)
          unenforced.push('process count: root is exempt from RLIMIT_NPROC and no cgroup is available');
      } else {
        unenforced.push('memory and process count: neither a cgroup nor prlimit (util-linux) is available');
      }
    }
    argv.push(...command);
    let placing: Promise<void> | undefined;
    const place = (pid: number): Promise<void> => {
      placing = placeIn(pid);
      return placing;
    };
    const placeIn = async (pid: number): Promise<void> => {
      if (deferred) {
        await primeSettled();
        group = createControlGroup(groupName, spec.limits);
        // None after all: the sandbox runs without limits, and says so.
        if (!group) unenforced.push('memory and process count: the control group could not be made');
        else unenforced.push(...group.unenforced);
      }
      if (group) await placeSandbox(group, pid);
    };
    return {
      executable: bwrap,
      args: argv,
      unenforced,
      ...(group || deferred ? { place } : {}),
      // --die-with-parent and --unshare-pid: once bwrap exits, its PID namespace's init gets
      // SIGKILL, and with it every process inside.
      endsWithLeader: true,
      // The control group goes once the kernel has freed it, a moment after its last process:
      // the run does not wait for that.
      dispose: async () => {
        await placing?.catch(() => {});
        void group?.dispose().catch(() => {});
      },
    };
  }
}

/**
 * Puts the sandbox in its control group: bubblewrap clones the sandbox's init, which waits at
 * --block-fd before it starts anything; that init is moved (bubblewrap itself only waits for it,
 * and each move costs the kernel a grace period). Should the init not show within a few seconds,
 * bubblewrap is moved as a whole.
 */
async function placeSandbox(group: ControlGroup, pid: number): Promise<void> {
  const deadline = performance.now() + 5_000;
  for (let look = 0; performance.now() < deadline; look += 1) {
    const [init] = childrenOf(pid);
    if (init !== undefined) return group.place(init);
    if (!processAlive(pid)) return;
    await delay(look < 20 ? 1 : 10);
  }
  return group.place(pid);
}

async function probe(bwrap: string | undefined): Promise<SandboxProbe> {
  if (!bwrap)
    return {
      ok: false,
      reason: 'bwrap is not installed: install the bubblewrap package (apt-get install bubblewrap)',
    };
  try {
    const result = await runCommand(
      bwrap,
      ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--', 'true'],
      { env: { PATH: '/usr/bin:/bin' }, timeoutMs: 10_000 },
    );
    if (result.exitCode === 0) return { ok: true };
    const detail = (result.stderr.trim() || result.stdout.trim()).split('\n')[0] ?? '';
    return {
      ok: false,
      reason: `bwrap cannot start a sandbox here (${detail || `exit ${result.exitCode}`}): allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or run in a container that permits them`,
    };
  } catch (error) {
    return { ok: false, reason: `bwrap cannot start: ${(error as Error).message}` };
  }
}
