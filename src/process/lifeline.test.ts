import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startLifeline } from './lifeline.js';
import { groupAlive, signalGroup } from './process-group.js';

const groups: number[] = [];
afterEach(() => {
  for (const pgid of groups.splice(0)) signalGroup(pgid, 'SIGKILL');
});

/** A sleeping process leading its own group, as an agent does. */
function sleeper(): number {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  child.unref();
  groups.push(child.pid!);
  return child.pid!;
}

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

describe.runIf(process.platform === 'linux')('lifeline', () => {
  it('stops the groups still listed when its parent goes away, and leaves forgotten ones', async () => {
    const watched = sleeper();
    const forgotten = sleeper();
    const lifeline = startLifeline(1000);
    lifeline.watch(watched);
    lifeline.watch(forgotten);
    lifeline.forget(forgotten);
    // Nothing happens while the parent lives.
    // why: this shows an absence (no group stopped while the pipe is open); the lifeline reports
    // nothing it could be waited on for, so a stretch of time is the only witness.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(groupAlive(watched)).toBe(true);
    // The pipe closes (what the parent's death does, even by SIGKILL).
    lifeline.close();
    expect(await until(() => !groupAlive(watched))).toBe(true);
    expect(groupAlive(forgotten)).toBe(true);
  });

  it('SIGKILLs a group that ignores SIGTERM after the grace', async () => {
    const child = spawn('sh', ['-c', 'trap "" TERM; sleep 60 & wait'], { detached: true, stdio: 'ignore' });
    child.unref();
    groups.push(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const lifeline = startLifeline(300);
    lifeline.watch(child.pid!);
    const closedAt = Date.now();
    lifeline.close();
    expect(await until(() => !groupAlive(child.pid!))).toBe(true);
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(250);
  });
});
