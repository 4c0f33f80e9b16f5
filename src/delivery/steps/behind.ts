/**
 * A moving base. The base branch has commits the head lacks, without a conflict:
 *
 * - `update_branch = true` and the head's checks green → `PUT pulls/{n}/update-branch` with the
 *   head sha curupira saw (GitHub refuses when the branch moved since): GitHub merges the base into
 *   the head, a merge commit, never a rebase or a force-push. Once per (head, base) pair.
 * - otherwise the gate is `behind`, with why.
 *
 * GitHub updates the branch in the background; `ownUpdateStep` (placed before the steps that count
 * remediation rounds) recognizes the merge commit it made for curupira once the head moved, and
 * records `ownHeadMark(sha)`, so that curupira's own update never passes for a person's push.
 */
import { GitHubRequestError } from '../../core/errors.js';
import { updatePullRequestBranch } from '../../github/direct-writes.js';
import { getPull } from '../../github/rest.js';
import type { FollowContext, FollowStep } from '../follow.js';
import { ownHeadMark } from '../remediation-types.js';
import { actionRefusal, compareRefs, mergeFields, refusalMessage } from './merge-state.js';
import { type ChecksReader, greenForActing, restChecks } from './readiness.js';

export const UPDATE_MARKS = {
  /** JSON `{ head, base }`: an update was requested from this head; cleared once the head moved. */
  pending: 'update-branch:pending',
  requested: (pair: string) => `update-branch:${pair}`,
} as const;

interface Pending {
  head: string;
  base: string;
}

function parsePending(value: string | undefined): Pending | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value) as Partial<Pending>;
    return typeof parsed.head === 'string' && typeof parsed.base === 'string'
      ? { head: parsed.head, base: parsed.base }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When an update of the branch was requested and the head moved: the merge commit GitHub made on
 * top of the old head (first parent the old head, two parents) is curupira's own.
 */
async function recordOwnUpdate(context: FollowContext, head: string): Promise<void> {
  const { store, github } = context.deps;
  const { runId, repo } = context.record;
  const pending = parsePending((await store.getPullRequestMark(runId, UPDATE_MARKS.pending))?.value);
  if (!pending || pending.head === head) return;
  const comparison = await compareRefs(github, repo, pending.head, head);
  const own = comparison.commits.find((c) => c.parents.length === 2 && c.parents[0]?.sha === pending.head);
  if (own && comparison.behind_by === 0) {
    await store.setPullRequestMark(runId, ownHeadMark(own.sha), 'update-branch');
    context.deps.log.info({ run: runId, sha: own.sha }, 'The branch was updated with its base');
  }
  await store.deletePullRequestMark(runId, UPDATE_MARKS.pending);
}

/** Records curupira's own update of the branch as its own head (no gate, no action). */
export function ownUpdateStep(): FollowStep {
  return async (context) => {
    await recordOwnUpdate(context, context.pr.head.sha);
    return undefined;
  };
}

export function behindStep(options: { checks?: ChecksReader } = {}): FollowStep {
  const checks = options.checks ?? restChecks;
  return async (context) => {
    const { deps, record, pr } = context;
    if (mergeFields(pr).mergeable === false) return undefined;
    const base = pr.base.ref;
    const comparison = await compareRefs(deps.github, record.repo, base, pr.head.sha);
    if (comparison.behind_by === 0) return undefined;
    const baseSha = comparison.base_commit.sha;
    const behind = `behind ${base} by ${comparison.behind_by} commit${comparison.behind_by === 1 ? '' : 's'}`;
    if (deps.config?.(record.automationId)?.update_branch !== true)
      return { gate: 'behind', detail: `${behind} (update_branch is off)` };
    const { green, why } = await greenForActing(context, await checks(context));
    if (!green) return { gate: 'behind', detail: `${behind}; updating once checks are green (${why})` };
    const refused = actionRefusal(context);
    if (refused) return { gate: 'behind', detail: `${behind}; ${refused}` };
    const pair = `${pr.head.sha}..${baseSha}`;
    const requested = await deps.store.getPullRequestMark(record.runId, UPDATE_MARKS.requested(pair));
    if (requested) return { gate: 'behind', detail: `${behind}; update requested at ${requested.at}` };
    await deps.store.setPullRequestMark(
      record.runId,
      UPDATE_MARKS.pending,
      JSON.stringify({ head: pr.head.sha, base: baseSha } satisfies Pending),
    );
    try {
      await updatePullRequestBranch(deps.github, record.repo, pr.number, pr.head.sha);
    } catch (error) {
      const message = refusalMessage(error);
      if (!(error instanceof GitHubRequestError) || message === undefined) throw error;
      await deps.store.deletePullRequestMark(record.runId, UPDATE_MARKS.pending);
      return { gate: 'behind', detail: `${behind}; GitHub did not update the branch: ${message}` };
    }
    // After the request (a kill -9 before it asks again; GitHub refuses a repeat harmlessly).
    await deps.store.setPullRequestMark(record.runId, UPDATE_MARKS.requested(pair), 'requested');
    deps.log.info({ run: record.runId, number: pr.number, base }, 'Asked GitHub to update the branch');
    // GitHub may have updated it already (the simulator does at once).
    const now = await getPull(deps.github, record.repo, pr.number);
    await recordOwnUpdate(context, now.head.sha);
    return {
      gate: 'behind',
      detail: `${behind}; updating: GitHub merges ${base} into the branch`,
      acted: true,
    };
  };
}
