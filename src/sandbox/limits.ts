/**
 * The limits of a sandbox: a control group when this process may create one (cgroup v2 with the
 * `pids` and `memory` controllers delegated, or v1's `pids` and `memory` hierarchies writable),
 * which bounds the whole sandbox; otherwise resource limits set by `prlimit` at the sandbox's
 * start (memory then bounds each process's address space, and the process count holds only
 * where the agent's user is not root, which is exempt from RLIMIT_NPROC). What could not be
 * applied is reported, never silently skipped.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, write, writeFileSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { SandboxLimits } from './types.js';

const ROOT = '/sys/fs/cgroup';

export interface ControlGroup {
  /** What it bounds, for the policy. */
  applied: string[];
  unenforced: string[];
  /** Moves `pid` and its descendants into the group. */
  place(pid: number): Promise<void>;
  dispose(): Promise<void>;
}

function ownPaths(selfCgroup = '/proc/self/cgroup'): Map<string, string> {
  const paths = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync(selfCgroup, 'utf8');
  } catch {
    return paths;
  }
  for (const line of text.split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const controllers = match[1] ?? '';
    if (controllers === '') paths.set('unified', match[2] ?? '/');
    for (const name of controllers.split(',')) if (name) paths.set(name, match[2] ?? '/');
  }
  return paths;
}

function tryWrite(path: string, value: string): boolean {
  try {
    writeFileSync(path, value);
    return true;
  } catch {
    return false;
  }
}

function tryMkdir(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Children of `pid` (of its main thread). */
export function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

/** Every descendant of `pid` (threads' children included), `pid` first. */
function descendants(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i += 1) {
    const current = found[i]!;
    try {
      const children = readFileSync(`/proc/${current}/task/${current}/children`, 'utf8');
      for (const child of children.trim().split(/\s+/)) if (child) found.push(Number(child));
    } catch {
      // gone, or no children file on this kernel
    }
  }
  return found;
}

/**
 * Removes the groups' folders once the kernel lets it, through the thread pool: a removal waits for
 * the lock a move holds (a prime's or another sandbox's, a grace period long), which must not stop
 * the event loop.
 */
async function removeDirs(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      try {
        await rmdir(dir);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') break;
        // why: the kernel frees a cgroup a moment after its last process is reaped.
        await delay(25);
      }
    }
  }
}

/** The own group's `cgroup.procs` files found to list curupira (its fd, open for writing), or null. */
const primeTargets = new Map<string, number | null>();
let priming: Promise<boolean> | undefined;

/** The `cgroup.procs` of the group curupira is in, in the hierarchy its sandboxes' groups use. */
function ownProcsFile(root: string, selfCgroup: string): string | undefined {
  const own = ownPaths(selfCgroup);
  const unified = own.get('unified');
  if (unified !== undefined && existsSync(join(root, 'cgroup.controllers')))
    return join(root, unified, 'cgroup.procs');
  for (const name of ['pids', 'memory']) {
    const path = own.get(name);
    if (path !== undefined) return join(root, name, path, 'cgroup.procs');
  }
  return undefined;
}

/** Opens `file` for writing when it lists this process; null when it does not or cannot be. */
function openIfListed(file: string): number | null {
  try {
    const listed = readFileSync(file, 'utf8').split('\n').includes(String(process.pid));
    return listed ? openSync(file, 'w') : null;
  } catch {
    return null;
  }
}

/**
 * Readies the kernel for a sandbox's move into its control group a few milliseconds from now (a
 * contained run calls this when its workspace preparation starts, and again when its group is made).
 * A move waits for the lock every fork and exit takes; after a quiet spell taking it first waits
 * for an RCU grace period (5–30 ms on a loaded machine), while a move within about a grace period of
 * the one before does not. So curupira moves itself into the group it is already in (nothing changes
 * place): the wait then falls on this write, in the thread pool, while the run prepares, not on the
 * sandbox's start. The write goes only to a `cgroup.procs` that lists curupira's pid (checked once
 * per group; the group is read again from /proc/self/cgroup each time, should curupira be moved by
 * someone else). One prime at a time; resolves to whether it wrote.
 */
export function primeControlGroupMoves(
  options: { root?: string; selfCgroup?: string } = {},
): Promise<boolean> {
  if (priming) return priming;
  const file = ownProcsFile(options.root ?? ROOT, options.selfCgroup ?? '/proc/self/cgroup');
  if (file === undefined) return Promise.resolve(false);
  let fd = primeTargets.get(file);
  if (fd === undefined) {
    fd = openIfListed(file);
    primeTargets.set(file, fd);
  }
  if (fd === null) return Promise.resolve(false);
  const target = fd;
  const done = new Promise<boolean>((resolve) => {
    write(target, String(process.pid), (error) => resolve(!error));
  });
  priming = done.finally(() => {
    priming = undefined;
  });
  return priming;
}

/**
 * Settles once no prime is under way: making a group waits for the lock a prime holds, and is
 * synchronous (the caller awaits this first, so that the wait is not the event loop's).
 */
export function primeSettled(): Promise<void> {
  return priming ? priming.then(() => {}) : Promise.resolve();
}

/** A control group per sandbox, or undefined when this host gives us none. */
export function createControlGroup(name: string, limits: SandboxLimits): ControlGroup | undefined {
  const own = ownPaths();
  const memoryBytes = String(limits.memoryMb * 1024 * 1024);
  const unified = own.get('unified');
  if (unified !== undefined && existsSync(join(ROOT, 'cgroup.controllers'))) {
    const dir = join(ROOT, unified, name);
    if (tryMkdir(dir)) {
      const pids = tryWrite(join(dir, 'pids.max'), String(limits.maxProcesses));
      const memory = tryWrite(join(dir, 'memory.max'), memoryBytes);
      if (pids || memory) return group([dir], pids, memory, limits);
      void removeDirs([dir]);
    }
  }
  const pidsPath = own.get('pids');
  const memoryPath = own.get('memory');
  const dirs: string[] = [];
  let pids = false;
  let memory = false;
  if (pidsPath !== undefined) {
    const dir = join(ROOT, 'pids', pidsPath, name);
    if (tryMkdir(dir)) {
      dirs.push(dir);
      pids = tryWrite(join(dir, 'pids.max'), String(limits.maxProcesses));
    }
  }
  if (memoryPath !== undefined) {
    const dir = join(ROOT, 'memory', memoryPath, name);
    if (tryMkdir(dir)) {
      dirs.push(dir);
      memory = tryWrite(join(dir, 'memory.limit_in_bytes'), memoryBytes);
    }
  }
  if (!pids && !memory) {
    void removeDirs(dirs);
    return undefined;
  }
  return group(dirs, pids, memory, limits);
}

/** Opens a group's `cgroup.procs` for writing, or undefined when it cannot be. */
function openProcs(dir: string): number | undefined {
  try {
    return openSync(join(dir, 'cgroup.procs'), 'w');
  } catch {
    return undefined;
  }
}

/** One write on an open descriptor: a single trip to the thread pool (no open and close around it). */
function writeTo(fd: number, text: string): Promise<void> {
  return new Promise((resolve) => {
    write(fd, text, () => resolve());
  });
}

function group(dirs: string[], pids: boolean, memory: boolean, limits: SandboxLimits): ControlGroup {
  // The sandbox moves in a few milliseconds from now (src/sandbox/bubblewrap/index.ts).
  void primeControlGroupMoves();
  const applied: string[] = [];
  const unenforced: string[] = [];
  if (pids) applied.push(`at most ${limits.maxProcesses} processes (cgroup)`);
  else unenforced.push('process count: the pids cgroup controller is not available to curupira');
  if (memory) applied.push(`at most ${limits.memoryMb} MiB of memory (cgroup)`);
  else unenforced.push('memory: the memory cgroup controller is not available to curupira');
  // Opened now, with the group: a move is then one write per hierarchy, not an open, a write and a
  // close, each a trip to the thread pool and back through the event loop, which a busy engine delays.
  let procs: (number | undefined)[] | undefined = dirs.map(openProcs);
  // Closed only once no write is in flight (a closed number may be reused by another file).
  let placing: Promise<void> = Promise.resolve();
  const close = async (): Promise<void> => {
    await placing;
    for (const fd of procs ?? []) if (fd !== undefined) closeSync(fd);
    procs = undefined;
  };
  const place = async (pid: number): Promise<void> => {
    // A fork in flight while its parent moves leaves the child behind: once a move is written,
    // such a fork has finished, so the next look finds it. Stop when a look finds nothing new.
    // Each move waits for the kernel (cgroup v1 takes an RCU grace period, milliseconds on a
    // busy machine): written asynchronously, so that the engine's other runs go on meanwhile,
    // and to both hierarchies at once (the second move then seldom waits for a grace period of
    // its own).
    const placed = new Set<number>();
    for (let round = 0; round < 10; round += 1) {
      const fresh = descendants(pid).filter((member) => !placed.has(member));
      if (fresh.length === 0 || !procs) break;
      for (const member of fresh) {
        placed.add(member);
        const fds = procs;
        await Promise.all(
          dirs.map((dir, i) => {
            const fd = fds[i];
            return fd === undefined
              ? Promise.resolve(tryWrite(join(dir, 'cgroup.procs'), String(member))).then(() => {})
              : writeTo(fd, String(member));
          }),
        );
      }
    }
  };
  return {
    applied,
    unenforced,
    place(pid) {
      const done = placing.then(() => place(pid));
      placing = done.catch(() => {});
      return done;
    },
    dispose: async () => {
      await close();
      await removeDirs(dirs);
    },
  };
}
