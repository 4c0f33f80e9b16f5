/**
 * One dispatching process per state folder: `<state_db_path>.lock` holds the owner's pid, host and
 * start time. A lock whose process is gone (kill -9, reboot) is stale and is taken over.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { hostname, uptime } from 'node:os';
import { dirname, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { StateError } from '../core/errors.js';

export interface StateLock {
  /** The lock file. */
  readonly path: string;
  /** Removes the lock file if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
  /** Tells two locks of one process apart, so we only ever remove our own. */
  token: string;
}

const ATTEMPTS = 3;
/** A lock file we cannot parse is a writer caught mid-write for this long, then debris. */
const UNREADABLE_GRACE_MS = 5000;
/** Wait before confirming a takeover, so that a racing process's rename lands first. */
const TAKEOVER_SETTLE_MS = 25;

function parseOwner(raw: string): LockOwner | undefined {
  try {
    const value = JSON.parse(raw) as Partial<LockOwner> | null;
    if (
      !value ||
      typeof value.pid !== 'number' ||
      !Number.isInteger(value.pid) ||
      value.pid <= 0 ||
      typeof value.hostname !== 'string' ||
      typeof value.startedAt !== 'string'
    ) {
      return undefined;
    }
    return {
      pid: value.pid,
      hostname: value.hostname,
      startedAt: value.startedAt,
      token: typeof value.token === 'string' ? value.token : '',
    };
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Creates `path` with `text` only if it does not exist yet; false when it does. */
async function writeExclusive(path: string, text: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(path, { force: true });
    throw error;
  }
  await handle.close();
  return true;
}

function lockedError(owner: LockOwner | undefined, lockPath: string): StateError {
  let detail = ` (lock file ${lockPath} is being written)`;
  if (owner) {
    detail =
      owner.hostname === hostname()
        ? ` (pid ${owner.pid})`
        : ` (pid ${owner.pid} on host ${owner.hostname}; if it is not, delete ${lockPath})`;
  }
  return new StateError(`another curupira process is already running${detail}`, { code: 'state_locked' });
}

/** True when the lock's owner may still be running; false when the lock is debris. */
async function ownerMayLive(owner: LockOwner | undefined, lockPath: string): Promise<boolean> {
  if (!owner) {
    const stats = await stat(lockPath).catch(() => undefined);
    return stats !== undefined && Date.now() - stats.mtimeMs < UNREADABLE_GRACE_MS;
  }
  // Another host's pid cannot be checked from here: assume it lives.
  if (owner.hostname !== hostname()) return true;
  const bootedAt = Date.now() - uptime() * 1000;
  const startedAt = Date.parse(owner.startedAt);
  // Written before this machine last booted: whatever has that pid now is someone else.
  if (Number.isFinite(startedAt) && startedAt < bootedAt - 1000) return false;
  return pidAlive(owner.pid);
}

/** Replaces the stale lock `staleRaw` with ours; true once the file is confirmed to be ours. */
async function takeOver(lockPath: string, staleRaw: string, text: string, token: string): Promise<boolean> {
  const temp = `${lockPath}.${process.pid}.${token.slice(0, 8)}.tmp`;
  try {
    if (!(await writeExclusive(temp, text))) return false;
    if ((await readIfExists(lockPath)) !== staleRaw) return false;
    await rename(temp, lockPath);
  } finally {
    await rm(temp, { force: true });
  }
  await delay(TAKEOVER_SETTLE_MS);
  const now = await readIfExists(lockPath);
  return now !== undefined && parseOwner(now)?.token === token;
}

function hold(lockPath: string, token: string): StateLock {
  let released = false;
  function ours(raw: string | undefined): boolean {
    return raw !== undefined && parseOwner(raw)?.token === token;
  }
  function onExit(): void {
    try {
      if (ours(readFileSync(lockPath, 'utf8'))) unlinkSync(lockPath);
    } catch {
      // Best effort: a stale lock is taken over by the next process anyway.
    }
  }
  process.on('exit', onExit);
  return {
    path: lockPath,
    async release() {
      if (released) return;
      released = true;
      process.off('exit', onExit);
      if (ours(await readIfExists(lockPath))) await rm(lockPath, { force: true });
    },
  };
}

/**
 * Claims the state folder of `stateDbPath` for this process, or throws `StateError` with code
 * `state_locked` when another live curupira process holds it.
 */
export async function acquireStateLock(stateDbPath: string): Promise<StateLock> {
  const lockPath = `${resolve(stateDbPath)}.lock`;
  const token = randomUUID();
  const owner: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
    token,
  };
  const text = `${JSON.stringify(owner)}\n`;
  try {
    await mkdir(dirname(lockPath), { recursive: true, mode: 0o700 });
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (await writeExclusive(lockPath, text)) return hold(lockPath, token);
      const raw = await readIfExists(lockPath);
      if (raw === undefined) continue;
      const holder = parseOwner(raw);
      if (await ownerMayLive(holder, lockPath)) throw lockedError(holder, lockPath);
      if (await takeOver(lockPath, raw, text, token)) return hold(lockPath, token);
    }
  } catch (error) {
    if (error instanceof StateError) throw error;
    throw new StateError(`could not lock the state folder with ${lockPath}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const raw = await readIfExists(lockPath).catch(() => undefined);
  throw lockedError(raw === undefined ? undefined : parseOwner(raw), lockPath);
}
