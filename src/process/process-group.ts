/**
 * Process-group signalling. An agent is started as the leader of its own group, so everything it
 * starts (shells, test runners, dev servers) can be found and stopped together.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const POLL_MS = 25;
/**
 * The first looks come sooner: a group usually ends within a few milliseconds of its leader (a
 * sandbox's processes die as its namespace goes, just after bubblewrap has exited).
 */
const FIRST_POLLS_MS = [1, 2, 4, 8, 16];

/** Sends `signal` to every process in the group; false when the group no longer exists. */
/** `signal` 0 only checks that the group exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  // kill(-1) signals every process this user may signal, and kill(0) our own group: a group id
  // read as 0 or 1 (a process seen across PID namespaces, a parse gone wrong) is never signalled.
  if (!Number.isInteger(pgid) || pgid < 2) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True while a process with this pid exists on this machine (one we may not signal counts too). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Pids of the group's members that are still running. Zombies are not counted: they have already
 * exited and only wait for a parent to reap them (some container inits never do). Linux only;
 * elsewhere undefined.
 */
export function listGroupMembers(pgid: number): number[] | undefined {
  const pids = procPids();
  if (!pids) return undefined;
  return pids.filter((pid) => {
    const stat = procStat(pid);
    return stat !== undefined && stat.pgid === pgid && stat.state !== 'Z';
  });
}

/** Every pid in /proc, or undefined where there is no /proc. */
function procPids(): number[] | undefined {
  try {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number);
  } catch {
    return undefined;
  }
}

/** State letter and process group of `pid` from /proc/<pid>/stat, or undefined when it is gone. */
function procStat(pid: number): { state: string; pgid: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp …": comm may contain spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', pgid: Number(fields[2]) };
}

/** True while any process of the group is still running. */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const members = listGroupMembers(pgid);
  return members === undefined ? true : members.length > 0;
}

async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (let look = 0; ; look += 1) {
    if (!groupAlive(pgid)) return true;
    if (performance.now() >= deadline) return false;
    await delay(Math.min(FIRST_POLLS_MS[look] ?? POLL_MS, Math.max(1, deadline - performance.now())));
  }
}

/**
 * Stops the whole group: SIGTERM, then SIGKILL for whatever is still running after `graceMs`.
 * Resolves once nothing of the group runs any more (or shortly after SIGKILL if the system keeps
 * reporting it).
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, 2_000);
}

/**
 * True when `pid` still runs with its working directory inside `folder`: how a restart recognises
 * an agent left behind by a curupira process that died, without trusting a pid that the system may
 * have handed to an unrelated program since. Linux only (reads /proc); false elsewhere.
 */
export function processWorksIn(pid: number, folder: string): boolean {
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    const base = realpathSync(folder);
    return cwd === base || cwd.startsWith(`${base}/`);
  } catch {
    return false;
  }
}

/** The variable every agent gets with its run id: how a restart finds an agent whose pid was never saved. */
export const RUN_ID_ENV = 'CURUPIRA_RUN_ID';

/**
 * Process groups whose members carry `CURUPIRA_RUN_ID=<runId>` in their environment: agents of that
 * run still alive after the curupira that started them died (even before it could save their pid).
 * Linux only (reads /proc); empty elsewhere.
 */
export function groupsOfRun(runId: string): number[] {
  const wanted = `${RUN_ID_ENV}=${runId}`;
  const groups = new Set<number>();
  for (const pid of procPids() ?? []) {
    if (pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!environ.split('\0').includes(wanted)) continue;
    const stat = procStat(pid);
    if (stat && stat.state !== 'Z' && stat.pgid > 1) groups.add(stat.pgid);
  }
  return [...groups];
}

/**
 * Removes the folders in `dir` whose name (`<prefix><pid>-…`) names a process that is gone: what a
 * curupira killed before its exit hook left behind. One whose process is alive, or that this user
 * cannot remove, is left alone.
 */
export function sweepDeadOwners(dir: string, prefix: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const owner = /^(\d+)-/.exec(name.slice(prefix.length))?.[1];
    if (owner === undefined || Number(owner) === process.pid || processAlive(Number(owner))) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
    } catch {
      // another user's, or going already
    }
  }
}
