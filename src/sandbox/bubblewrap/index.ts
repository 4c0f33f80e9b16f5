/**
 * The bubblewrap backend (Debian's `bubblewrap` package): new user, PID, network, IPC and UTS
 * namespaces; a root of its own on a tmpfs holding the system folders read-only, a few files of
 * /etc, a fresh /proc, /dev and /tmp, the private home, the agent CLI's install read-only, and
 * writable exactly the worktree and the git directories its commits need. The only way out of
 * its network namespace is the egress proxy's unix socket.
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { runCommand } from '../../process/command.js';
import { findExecutable } from '../../process/env.js';
import { createControlGroup } from '../limits.js';
import { procNetPort, SHELL_STARTER } from '../starter.js';
import type { SandboxBackend, SandboxProbe, SandboxSpec, WrappedCommand } from '../types.js';

/** Folders of the system, read-only (a symlink such as /bin → usr/bin stays a symlink). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt', '/nix/store'];
/** The files of /etc programs need to resolve names, users, certificates and time; not the rest. */
const ETC_ENTRIES = [
  '/etc/alternatives',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/crypto-policies',
  '/etc/gitconfig',
  '/etc/group',
  '/etc/host.conf',
  '/etc/hosts',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/mime.types',
  '/etc/nsswitch.conf',
  '/etc/os-release',
  '/etc/passwd',
  '/etc/pki',
  '/etc/resolv.conf',
  '/etc/ssl',
  '/etc/timezone',
];

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

export function createBubblewrapBackend(
  options: { path?: string | undefined; env?: NodeJS.ProcessEnv } = {},
): SandboxBackend {
  const env = options.env ?? process.env;
  const binary = (): string | undefined => findExecutable('bwrap', options.path ?? env.PATH ?? '');
  let probed: Promise<SandboxProbe> | undefined;
  return {
    name: 'bubblewrap',
    probe() {
      probed ??= probe(binary());
      return probed;
    },
    async wrap(spec: SandboxSpec, executable: string, args: readonly string[]): Promise<WrappedCommand> {
      const bwrap = binary();
      if (!bwrap) throw new Error('bwrap is not installed');
      const argv: string[] = ['--unshare-all', '--die-with-parent'];
      const group = createControlGroup(`curupira-${spec.runDir.split('/').pop() ?? 'run'}`, spec.limits);
      if (group) argv.push('--block-fd', '3');
      for (const dir of SYSTEM_DIRS) {
        const what = kind(dir);
        if (what === 'link') argv.push('--symlink', readlinkSync(dir), dir);
        else if (what === 'dir') argv.push('--ro-bind', dir, dir);
      }
      for (const entry of ETC_ENTRIES) if (kind(entry)) argv.push('--ro-bind', entry, entry);
      argv.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
      argv.push('--bind', spec.home, spec.homeInside);
      for (const path of spec.readOnly) if (kind(path)) argv.push('--ro-bind', path, path);
      argv.push('--bind', spec.cwd, spec.cwd);
      for (const path of spec.writable) if (kind(path)) argv.push('--bind', path, path);
      // -try: git (another run's, in the shared checkout) may be replacing a config file this instant.
      for (const path of spec.protectedPaths) if (kind(path)) argv.push('--ro-bind-try', path, path);
      argv.push('--ro-bind', spec.starter, `${INSIDE_RUN_DIR}/starter.cjs`);
      argv.push('--bind', spec.proxySocket, `${INSIDE_RUN_DIR}/egress.sock`);
      argv.push('--chdir', spec.cwd, '--');
      const unenforced: string[] = [...(group?.unenforced ?? [])];
      if (!group) {
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
      const socat = findExecutable('socat', '/usr/bin:/bin');
      const sh = findExecutable('sh', '/usr/bin:/bin');
      if (socat && sh) {
        argv.push(sh, '-c', SHELL_STARTER, 'sh', procNetPort(spec.proxyPort), String(spec.proxyPort));
        argv.push(`${INSIDE_RUN_DIR}/egress.sock`, executable, ...args);
      } else {
        argv.push(process.execPath, `${INSIDE_RUN_DIR}/starter.cjs`, String(spec.proxyPort));
        argv.push(`${INSIDE_RUN_DIR}/egress.sock`, executable, ...args);
      }
      return {
        executable: bwrap,
        args: argv,
        unenforced,
        ...(group ? { place: async (pid: number) => group.place(pid) } : {}),
        dispose: async () => {
          await group?.dispose();
        },
      };
    },
  };
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
