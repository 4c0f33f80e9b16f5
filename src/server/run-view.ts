/**
 * What the run page and `GET /api/v1/runs/{id}` add to a run (issue 30): where its item comes from,
 * for a source outside GitHub, and, for a task across repositories, each repository with its
 * worktree and pull request.
 */
import type { RunRecord } from '../core/types.js';
import { deliveryRunId, type RunRepository, runRepositories } from '../delivery/repositories.js';
import { runAutomation, runSource } from '../triggers/registry.js';
import type { ServerContext } from './server-context.js';

export interface RunSourceAndRepositories {
  source?: string;
  repositories: RunRepository[];
}

export async function runSourceAndRepositories(
  ctx: Pick<ServerContext, 'store' | 'engine'>,
  run: RunRecord,
): Promise<RunSourceAndRepositories> {
  const automations = ctx.engine.currentSettings().automations;
  const automation = runAutomation(run, automations);
  const source = runSource(run, automations);
  let repositories: RunRepository[] = [];
  if (automation?.additionalRepositories?.length) {
    const deliveries = (await ctx.store.listPullRequests({ taskKey: run.taskKey }).catch(() => [])).filter(
      (d) => deliveryRunId(d.runId) === run.id,
    );
    repositories = runRepositories(run, automation, deliveries);
  }
  return { ...(source ? { source } : {}), repositories };
}
