/** The `after` trigger's definition: a chain fed by the run ledger of its upstream automation. */
import type { RunRecord } from '../../core/types.js';
import { defaultTimezone } from '../hooks.js';
import type { TriggerDefinition } from '../types.js';
import { chainOf } from './item.js';
import { type AfterResolved, afterTable } from './schema.js';

function lastRunText(run: RunRecord | undefined): string {
  if (!run) return 'no runs yet';
  return `last run ${run.status} at ${(run.finishedAt ?? run.createdAt).slice(0, 16).replace('T', ' ')} UTC`;
}

export const afterTrigger: TriggerDefinition<AfterResolved> = {
  ...afterTable,
  impliedBy: 'after',
  upstreamKey: 'after',
  serialRuns: false,
  createFeed(automation, context) {
    return context.feeds.chain(automation, chainOf(automation));
  },
  doctor: {
    needs: 'state',
    async check(automation, context) {
      const upstream = automation.config.after;
      const kind = context.automations.find((a) => a.id === upstream)?.triggerType ?? 'unknown';
      const last = context.store
        ? (await context.store.listRuns({ automationId: upstream, limit: 1 }))[0]
        : undefined;
      const runs = context.storeReadable
        ? lastRunText(last)
        : 'its runs are unknown: the state file cannot be read';
      return { ok: true, detail: `runs after '${upstream}' (${kind}; ${runs})` };
    },
  },
  screening: { unscreened: 'a chained run follows one of your own runs' },
  itemName: (run) => `after run ${run.itemId}`,
  describeField: (task, field) =>
    field === 'upstream_summary'
      ? `the outcome of run ${task.item.id} of automation '${String(task.item.fields.upstream_automation)}' (it quotes that agent and its task)`
      : undefined,
  // A chain's task is the upstream run it follows (its item id is that run's id).
  upstreamRunId: (task) => task.item.id,
  // The prompt may point the agent at the upstream run's kept worktree and transcript.
  sandboxReadPaths: (task) =>
    [task.item.fields.upstream_worktree, task.item.fields.upstream_transcript].filter(
      (path): path is string => typeof path === 'string' && path !== '',
    ),
  resolveTimezone: defaultTimezone,
};
