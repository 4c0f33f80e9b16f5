/**
 * What the run page, `GET /api/v1/runs/{id}` and `curupira runs show ID --json` add to a run
 * (issue 30): where its item comes from, for a source outside GitHub, and, for a task across
 * repositories, each repository with its worktree and pull request.
 */
import type { ResolvedAutomation } from '../config/types.js';
import type { RunRecord } from '../core/types.js';
import { deliveryRunId, type RunRepository, runRepositories } from '../delivery/repositories.js';
import type { Store } from '../store/types.js';
import { runAutomation, runSource } from '../triggers/registry.js';

export interface RunSourceAndRepositories {
  source?: string;
  repositories: RunRepository[];
}

export async function runSourceAndRepositories(
  store: Pick<Store, 'listPullRequests'>,
  automations: readonly ResolvedAutomation[],
  run: RunRecord,
): Promise<RunSourceAndRepositories> {
  const automation = runAutomation(run, automations);
  const source = runSource(run, automations);
  let repositories: RunRepository[] = [];
  if (automation?.additionalRepositories?.length) {
    const deliveries = (await store.listPullRequests({ taskKey: run.taskKey }).catch(() => [])).filter(
      (d) => deliveryRunId(d.runId) === run.id,
    );
    repositories = runRepositories(run, automation, deliveries);
  }
  return { ...(source ? { source } : {}), repositories };
}
