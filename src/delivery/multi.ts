/**
 * Delivery of a task across repositories (issue 30): after the primary repository's delivery
 * (deliver.ts, unchanged), each additional repository's worktree is delivered the same way under
 * its own record (`<run id>~<alias>`), so each step is recorded before it is taken and a restart
 * after a kill -9 finds, pushes to and adopts the same branch and pull request: one per repository.
 *
 * Once every repository that changed has its pull request, each body's linked section is rewritten
 * to list them all (read first, sent only when it differs, so a repeat changes nothing). None of
 * them closes the item: the follow-up closes it once, when the last one merged (follow.ts).
 */
import { errorMessage } from '../core/errors.js';
import { updatePullRequestBody } from '../github/direct-writes.js';
import { crashPoint } from '../process/crash-point.js';
import type { PullRequestRecord } from '../store/types.js';
import { finishWorktree } from '../workspace/index.js';
import { pathExists } from '../workspace/remove.js';
import { type DeliveryDeps, type DeliveryRequest, type DeliveryResult, deliverRun } from './deliver.js';
import { getPullRequest, linkedSection, withLinkedSection } from './pull-request.js';
import { additionalDeliveryKey, additionalWorktrees } from './repositories.js';

/** The GitHub repositories a multi-repository task delivers to (undefined for a single one). */
export function spansOf(request: Pick<DeliveryRequest, 'automation' | 'task'>): string[] | undefined {
  const { automation, task } = request;
  const additional = automation.additionalRepositories ?? [];
  if (additional.length === 0) return undefined;
  return [task.identity.repo, ...additional.map((r) => r.repo ?? r.alias)];
}

export interface AdditionalDelivery {
  alias: string;
  repo: string;
  result: DeliveryResult;
}

/** Delivers each additional repository's worktree (the primary's was delivered by the caller). */
export async function deliverAdditional(
  deps: DeliveryDeps,
  request: Omit<DeliveryRequest, 'cwd' | 'branch' | 'target'>,
): Promise<AdditionalDelivery[]> {
  const { automation, task, run } = request;
  const spans = spansOf(request);
  const out: AdditionalDelivery[] = [];
  for (const worktree of additionalWorktrees(automation, task.identity.taskType, task.identity.id)) {
    const { repository } = worktree;
    const key = additionalDeliveryKey(run.id, repository.alias);
    const repo = repository.repo ?? repository.alias;
    // No record and no worktree: nothing was made there (or it was cleaned up with nothing in it).
    if (!(await deps.store.getPullRequest(key)) && !(await pathExists(worktree.path))) {
      out.push({ alias: repository.alias, repo, result: { kind: 'no-changes' } });
      continue;
    }
    const result = await deliverRun(deps, {
      ...request,
      cwd: worktree.path,
      branch: worktree.branch,
      target: { key, repo, remote: repository.remote },
      ...(spans ? { spans } : {}),
    });
    out.push({ alias: repository.alias, repo, result });
  }
  if (automation.config.deliver === 'pr') await linkPullRequests(deps, run.id, out);
  return out;
}

/** Each open pull request of the task lists all of them (the primary's record is keyed by the run id). */
async function linkPullRequests(
  deps: DeliveryDeps,
  runId: string,
  additional: readonly AdditionalDelivery[],
): Promise<void> {
  const github = deps.github;
  if (!github) return;
  const records: PullRequestRecord[] = [];
  const primary = await deps.store.getPullRequest(runId);
  if (primary) records.push(primary);
  for (const { result } of additional) if (result.kind === 'delivered') records.push(result.record);
  const open = records.filter((r) => r.number !== null);
  if (open.length < 2) return;
  const section = linkedSection(open.map((r) => ({ repo: r.repo, url: r.url })));
  for (const record of open) {
    try {
      const pr = await getPullRequest(github, record.repo, record.number!);
      const body = withLinkedSection(pr.body ?? '', section);
      if (body === (pr.body ?? '')) continue;
      await updatePullRequestBody(github, record.repo, record.number!, body);
      crashPoint('delivery-linked');
    } catch (error) {
      deps.log.warn(
        { run: runId, repo: record.repo, number: record.number, error: errorMessage(error) },
        'Could not link the pull requests of a multi-repository task',
      );
    }
  }
}

/** The additional worktrees go (or stay, holding work found nowhere else) with the run's own. */
export async function finishAdditionalWorktrees(
  deps: Pick<DeliveryDeps, 'log'>,
  request: Pick<DeliveryRequest, 'automation' | 'task'>,
  pool: number,
): Promise<void> {
  const { automation, task } = request;
  for (const worktree of additionalWorktrees(automation, task.identity.taskType, task.identity.id)) {
    if (!(await pathExists(worktree.path))) continue;
    try {
      await finishWorktree({
        checkoutPath: worktree.repository.checkoutPath,
        path: worktree.path,
        branch: worktree.branch,
        log: deps.log,
        key: task.key,
        pool,
        keepAlways: automation.config.keep_worktree === 'always',
      });
    } catch (error) {
      deps.log.warn(
        { repository: worktree.repository.alias, path: worktree.path, error: errorMessage(error) },
        'Could not clean up worktree',
      );
    }
  }
}
