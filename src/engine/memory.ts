/**
 * Item memory for event triggers (opt-in, from the automations seed): `once` remembers every
 * dispatched item key so it never fires again; `ignore_backlog` records what already matched at the
 * first poll as skipped. Both are tied to a baseline of the automation's filters: changing the
 * filters forgets the memory and takes a new baseline.
 */
import { createHash } from 'node:crypto';
import type { ResolvedAutomation } from '../config/types.js';
import type { Task } from '../core/types.js';
import type { Store } from '../store/types.js';
import { recordSkippedRun } from './task.js';

/** Keys that do not decide which items match. */
const NOT_FILTERS = new Set([
  'prompt',
  'prompt_syntax',
  'profile',
  'checkout',
  'worktree_from',
  'repository',
  'once',
  'ignore_backlog',
  'trigger_type',
  'enabled',
]);

export function filterHash(automation: ResolvedAutomation): string {
  const filters = Object.entries(automation.config)
    .filter(([key]) => !NOT_FILTERS.has(key))
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256')
    .update(JSON.stringify([automation.triggerType, filters]))
    .digest('hex')
    .slice(0, 16);
}

/**
 * The key an item is remembered by: its item key, or with `once = "head"` (pull requests) the item
 * key and its head commit (`pr:7@<sha>`), so new commits make a new key and a restart does not.
 */
export function memoryKey(automation: ResolvedAutomation, task: Task): string {
  const sha = task.item.fields.pull_request_head_sha;
  if (automation.config.once === 'head' && typeof sha === 'string' && sha !== '')
    return `${task.item.itemKey}@${sha}`;
  return task.item.itemKey;
}

export function usesMemory(automation: ResolvedAutomation): boolean {
  const { config } = automation;
  return Boolean(config.once || config.ignore_backlog);
}

export function baselineKey(automationId: string): string {
  return `baseline:${automationId}`;
}

function baselineAtKey(automationId: string): string {
  return `baseline_at:${automationId}`;
}

/** Whether the baseline of the current filters is taken, and when (null: before times were kept). */
export async function baselineInfo(
  store: Store,
  automation: ResolvedAutomation,
): Promise<{ set: boolean; at: string | null }> {
  if ((await baselineState(store, automation)) !== 'current') return { set: false, at: null };
  return { set: true, at: (await store.getMeta(baselineAtKey(automation.id))) ?? null };
}

/** 'current' when the stored baseline matches the filters; else 'missing' or 'changed'. */
export async function baselineState(
  store: Store,
  automation: ResolvedAutomation,
): Promise<'current' | 'missing' | 'changed'> {
  const stored = await store.getMeta(baselineKey(automation.id));
  if (stored === undefined) return 'missing';
  return stored === filterHash(automation) ? 'current' : 'changed';
}

/** Tasks whose items are not remembered for this automation. */
export async function unremembered(
  store: Store,
  automation: ResolvedAutomation,
  tasks: readonly Task[],
): Promise<Task[]> {
  const out: Task[] = [];
  for (const task of tasks) {
    if (!(await store.hasItemKey(automation.id, memoryKey(automation, task)))) out.push(task);
  }
  return out;
}

/**
 * Takes a new baseline: forgets old memory when the filters changed, and with `ignore_backlog`
 * records every current match as skipped, each with a visible run record.
 */
export async function takeBaseline(
  store: Store,
  automation: ResolvedAutomation,
  backlog: readonly Task[],
  now: string,
): Promise<number> {
  const state = await baselineState(store, automation);
  if (state === 'changed') await store.clearItemKeys(automation.id);
  let skipped = 0;
  if (automation.config.ignore_backlog) {
    for (const task of backlog) {
      const key = memoryKey(automation, task);
      if (await store.hasItemKey(automation.id, key)) continue;
      const runId = await recordSkippedRun(
        store,
        automation,
        task,
        'ignore_backlog: it already matched when this automation started watching',
        now,
      );
      await store.recordItemKeys(automation.id, [{ itemKey: key, runId, skipped: true }]);
      skipped += 1;
    }
  }
  await store.setMeta(baselineKey(automation.id), filterHash(automation));
  await store.setMeta(baselineAtKey(automation.id), now);
  return skipped;
}
