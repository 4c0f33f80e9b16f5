import { describe, expect, it } from 'vitest';
import type { Task } from '../core/types.js';
import { type Candidate, locksFor, SchedulerCore } from './scheduler.js';

function task(automationId: string, id: string): Task {
  const identity = { automationId, repo: 'acme/api', taskType: 'github-issues', id };
  return {
    identity,
    key: JSON.stringify([automationId, 'acme/api', 'github-issues', id]),
    fingerprint: `${automationId}-${id}`,
    item: { id, title: id, url: '', body: '', fields: {}, itemKey: `issue:${id}` },
  };
}

function candidate(
  automationId: string,
  id: string,
  options: Parameters<typeof locksFor>[1] = {},
): Candidate {
  const t = task(automationId, id);
  return { task: t, automationId, locks: locksFor(t, options) };
}

describe('SchedulerCore', () => {
  it('an unbounded candidate (a remediation) is queued past max_pending_tasks, and shares its lock with the item', () => {
    const core = new SchedulerCore({ maxActive: 1, maxPending: 1 });
    expect(core.offer(candidate('a', '1'))).toBe('queued');
    expect(core.offer(candidate('a', '2'))).toBe('full');
    const item = task('a', '1');
    const remediation: Candidate = {
      task: { ...item, key: 'remediation:run-1' },
      automationId: 'a',
      locks: locksFor(item, {}),
      priority: 'resume',
      unbounded: true,
    };
    expect(core.offer(remediation)).toBe('queued');
    expect(core.offer(remediation)).toBe('duplicate');
    // Ahead of new work; the item's normal run then waits for its lock.
    expect(core.next()?.task.key).toBe('remediation:run-1');
    core.setLimits({ maxActive: 2, maxPending: 1 });
    expect(core.next()).toBeUndefined();
    core.finish('remediation:run-1');
    expect(core.next()?.task.key).toBe(item.key);
  });

  it('replaces a queued task whose item changed, and says busy for one whose older version runs', () => {
    const core = new SchedulerCore({ maxActive: 1, maxPending: 10 });
    core.offer(candidate('a', '1'));
    core.offer(candidate('a', '2'));
    const edited = candidate('a', '2');
    const changed = { ...edited, task: { ...edited.task, fingerprint: 'a-2-edited' } };
    expect(core.offer(changed)).toBe('updated');
    expect(core.queuedCount).toBe(2);
    expect(core.next()?.task.item.id).toBe('1');
    const running1 = candidate('a', '1');
    expect(core.offer({ ...running1, task: { ...running1.task, fingerprint: 'a-1-edited' } })).toBe('busy');
    expect(core.offer(candidate('a', '1'))).toBe('duplicate');
    core.finish(task('a', '1').key);
    expect(core.next()?.task.fingerprint).toBe('a-2-edited');
  });

  it('never runs more than max_active_tasks at once', () => {
    const core = new SchedulerCore({ maxActive: 2, maxPending: 10 });
    for (const id of ['1', '2', '3', '4']) core.offer(candidate('a', id));
    expect(core.next()?.task.item.id).toBe('1');
    expect(core.next()?.task.item.id).toBe('2');
    expect(core.next()).toBeUndefined();
    core.finish(task('a', '1').key);
    expect(core.next()?.task.item.id).toBe('3');
    expect(core.activeCount).toBe(2);
  });

  it('refuses a task already queued or running, and a full queue', () => {
    const core = new SchedulerCore({ maxActive: 1, maxPending: 2 });
    expect(core.offer(candidate('a', '1'))).toBe('queued');
    expect(core.offer(candidate('a', '1'))).toBe('duplicate');
    core.next();
    expect(core.offer(candidate('a', '1'))).toBe('duplicate');
    expect(core.offer(candidate('a', '2'))).toBe('queued');
    expect(core.offer(candidate('a', '3'))).toBe('queued');
    expect(core.offer(candidate('a', '4'))).toBe('full');
  });

  it('never runs two tasks in one shared checkout, but lets other work pass', () => {
    const core = new SchedulerCore({ maxActive: 4, maxPending: 10 });
    core.offer(candidate('main-a', '1', { sharedCheckout: '/w/api' }));
    core.offer(candidate('main-b', '2', { sharedCheckout: '/w/api' }));
    core.offer(candidate('wt', '3'));
    expect(core.next()?.task.item.id).toBe('1');
    expect(core.next()?.task.item.id).toBe('3');
    expect(core.next()).toBeUndefined();
    core.finish(task('main-a', '1').key);
    expect(core.next()?.task.item.id).toBe('2');
  });

  it('keeps runs of a serial automation (cron) from overlapping', () => {
    const core = new SchedulerCore({ maxActive: 4, maxPending: 10 });
    core.offer(candidate('nightly', '100', { serialAutomation: true }));
    core.offer(candidate('nightly', '200', { serialAutomation: true }));
    expect(core.next()?.task.item.id).toBe('100');
    expect(core.next()).toBeUndefined();
  });

  it('puts resumed sessions ahead of new work, in their own order', () => {
    const core = new SchedulerCore({ maxActive: 1, maxPending: 10 });
    core.offer(candidate('a', 'new'));
    core.offer({ ...candidate('a', 'r1'), priority: 'resume' });
    core.offer({ ...candidate('a', 'r2'), priority: 'resume' });
    expect(core.snapshot().queued.map((c) => c.task.item.id)).toEqual(['r1', 'r2', 'new']);
  });

  it('lets retries and new items take turns, whatever order they were queued in', () => {
    const core = new SchedulerCore({ maxActive: 1, maxPending: 10 });
    for (const id of ['r1', 'r2', 'r3']) core.offer({ ...candidate('a', id), priority: 'retry' });
    core.offer(candidate('a', 'new1'));
    core.offer(candidate('a', 'new2'));
    const order: string[] = [];
    for (let next = core.next(); next; next = core.next()) {
      order.push(next.task.item.id);
      core.finish(next.task.key);
    }
    expect(order).toEqual(['r1', 'new1', 'r2', 'new2', 'r3']);
  });

  it('clears the queue selectively', () => {
    const core = new SchedulerCore({ maxActive: 1, maxPending: 10 });
    core.offer(candidate('a', '1'));
    core.offer(candidate('b', '2'));
    expect(core.clearQueue((c) => c.automationId === 'a').map((c) => c.task.item.id)).toEqual(['1']);
    expect(core.queuedCount).toBe(1);
  });
});
