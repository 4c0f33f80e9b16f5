import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateError } from '../core/errors.js';
import { acquireStateLock, type StateLock } from './lock.js';

let dir: string;
let dbPath: string;
let lockPath: string;
let held: StateLock[];
let children: ChildProcess[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-lock-'));
  dbPath = join(dir, 'state.sqlite3');
  lockPath = `${dbPath}.lock`;
  held = [];
  children = [];
});

afterEach(async () => {
  for (const lock of held) await lock.release();
  for (const child of children) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

async function acquire(): Promise<StateLock> {
  const lock = await acquireStateLock(dbPath);
  held.push(lock);
  return lock;
}

async function refusal(): Promise<StateError> {
  const error = await acquire().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(StateError);
  expect((error as StateError).code).toBe('state_locked');
  return error as StateError;
}

function writeLock(content: object | string): void {
  writeFileSync(lockPath, typeof content === 'string' ? content : JSON.stringify(content));
}

function lockOwner(): { pid: number; hostname: string; startedAt: string } {
  return JSON.parse(readFileSync(lockPath, 'utf8'));
}

/** A process that is alive until the test ends. */
function sleeper(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

/** The pid of a process that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe('acquireStateLock', () => {
  it('writes who holds the state folder, refuses a second holder, and frees it on release', async () => {
    const lock = await acquire();
    expect(lock.path).toBe(lockPath);
    expect(lockOwner()).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(Date.parse(lockOwner().startedAt)).not.toBeNaN();

    const error = await refusal();
    expect(error.message).toBe(`another curupira process is already running (pid ${process.pid})`);

    await lock.release();
    expect(existsSync(lockPath)).toBe(false);
    await lock.release();
    await acquire();
    expect(existsSync(lockPath)).toBe(true);
  });

  it('creates the state folder when it does not exist yet', async () => {
    dbPath = join(dir, 'new', 'state.sqlite3');
    lockPath = `${dbPath}.lock`;
    await acquire();
    expect(existsSync(lockPath)).toBe(true);
  });

  it('refuses while the process named in the lock is alive', async () => {
    const child = sleeper();
    writeLock({ pid: child.pid, hostname: hostname(), startedAt: new Date().toISOString() });

    const error = await refusal();
    expect(error.message).toBe(`another curupira process is already running (pid ${child.pid})`);
    expect(lockOwner().pid).toBe(child.pid);
  });

  it('takes over a lock left by a process that died', async () => {
    const pid = await deadPid();
    writeLock({ pid, hostname: hostname(), startedAt: new Date().toISOString() });

    const lock = await acquire();
    expect(lockOwner().pid).toBe(process.pid);
    await lock.release();
    expect(existsSync(lockPath)).toBe(false);
  });

  it('takes over a lock written before the machine last booted, whatever now has that pid', async () => {
    writeLock({ pid: process.pid, hostname: hostname(), startedAt: '2001-01-01T00:00:00.000Z' });
    await acquire();
    expect(Date.parse(lockOwner().startedAt)).toBeGreaterThan(Date.parse('2020-01-01'));
  });

  it('lets exactly one of two simultaneous claimants win, for a free folder and for a stale lock', async () => {
    for (const setup of [
      () => {},
      async () =>
        writeLock({ pid: await deadPid(), hostname: hostname(), startedAt: new Date().toISOString() }),
    ]) {
      await setup();
      const results = await Promise.allSettled([acquireStateLock(dbPath), acquireStateLock(dbPath)]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'state_locked' });
      await (won[0] as PromiseFulfilledResult<StateLock>).value.release();
      expect(existsSync(lockPath)).toBe(false);
    }
  });

  it('refuses a lock held on another host, saying which and how to clear it', async () => {
    writeLock({ pid: 4242, hostname: 'build-box-7', startedAt: new Date().toISOString() });
    const error = await refusal();
    expect(error.message).toContain('(pid 4242 on host build-box-7;');
    expect(error.message).toContain(lockPath);
  });

  it('waits out an unreadable lock while it is fresh, then treats it as debris', async () => {
    writeLock('{"pid": 12');
    await refusal();

    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath, old, old);
    await acquire();
    expect(lockOwner().pid).toBe(process.pid);
  });

  it('does not remove a lock that another process has since taken over', async () => {
    const lock = await acquire();
    const child = sleeper();
    writeLock({ pid: child.pid, hostname: hostname(), startedAt: new Date().toISOString() });

    await lock.release();
    expect(lockOwner().pid).toBe(child.pid);
  });

  it('removes its lock when the process exits', async () => {
    const before = process.listeners('exit');
    await acquire();
    const added = process.listeners('exit').filter((listener) => !before.includes(listener));
    expect(added).toHaveLength(1);

    (added[0] as () => void)();
    expect(existsSync(lockPath)).toBe(false);
  });
});
