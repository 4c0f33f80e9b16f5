/**
 * The merge step (last in FOLLOW_STEPS): is the pull request ready, and with `merge = "auto"`,
 * merge it.
 *
 * Ready means: approved (src/delivery/steps/readiness.ts says by whom), the head's checks green,
 * GitHub able to merge it. Then:
 *
 * - `merge = "off"` (default): the gate is `ready`; a person merges.
 * - a draft is never merged by curupira (the gate says so);
 * - a changed file matching `human_merge_paths` → never merged by curupira: gate `ready`, "a person
 *   merges: touches X";
 * - otherwise `PUT pulls/{n}/merge` with `merge_method` (default squash) and `sha` = the head
 *   curupira checked, so a push in between makes GitHub refuse (409) rather than merge unchecked
 *   code. Once per head. The follower reads the pull request again and ends the delivery at once.
 */
import { GitHubRequestError } from '../../core/errors.js';
import { mergePullRequest } from '../../github/direct-writes.js';
import type { FollowStep } from '../follow.js';
import {
  actionRefusal,
  firstMatch,
  mergeFields,
  plain,
  pullRequestFiles,
  refusalMessage,
} from './merge-state.js';
import { greenForActing, type ReadinessReader, restReadiness } from './readiness.js';

export const MERGE_MARKS = {
  /** `merged <sha>` or `refused: <why>`: the merge of that head was asked once. */
  attempt: (head: string) => `merge:${head}`,
} as const;

export function mergeStep(options: { readiness?: ReadinessReader } = {}): FollowStep {
  const readiness = options.readiness ?? restReadiness;
  return async (context) => {
    const { deps, record, pr } = context;
    const fields = mergeFields(pr);
    if (fields.mergeable === false) return undefined;
    const config = deps.config?.(record.automationId);
    const auto = config?.merge === 'auto';
    const ready = await readiness(context);
    const { green, why } = await greenForActing(context, ready);
    if (ready.review === 'changes_requested')
      return { gate: 'changes_requested', detail: `changes requested by ${ready.requesters.join(', ')}` };
    if (ready.checks === 'failure') return { gate: 'ci_failing', detail: why };
    if (ready.review === 'review_required')
      return { gate: 'awaiting_review', detail: `no approval yet; ${why}` };
    if (!green) return { gate: 'open', detail: `approved; ${why}` };
    const approved = `approved by ${ready.approvers.join(', ')}, ${why}`;
    if (fields.draft)
      return {
        gate: 'ready',
        detail: `${approved}, but a draft: curupira does not merge a draft (mark it ready for review)`,
      };
    if (!auto) return { gate: 'ready', detail: `${approved}; a person merges (merge is off)` };
    if (fields.mergeable === null)
      return { gate: 'ready', detail: `${approved}; waiting for GitHub to compute mergeability` };
    if (fields.mergeableState === 'behind')
      return {
        gate: 'behind',
        detail: `${approved}; GitHub requires the branch to be up to date with its base`,
      };
    if (fields.mergeableState === 'blocked')
      return { gate: 'ready', detail: `${approved}; GitHub says the merge is blocked (branch protection)` };
    const globs = config?.human_merge_paths ?? [];
    if (globs.length > 0) {
      const hit = firstMatch(await pullRequestFiles(deps.github, record.repo, pr.number), globs);
      if (hit)
        return {
          gate: 'ready',
          detail: `a person merges: touches ${plain(hit.file)} (human_merge_paths ${hit.glob})`,
        };
    }
    const refused = actionRefusal(context);
    if (refused) return { gate: 'ready', detail: `${approved}; ${refused}` };
    const key = MERGE_MARKS.attempt(pr.head.sha);
    const attempt = await deps.store.getPullRequestMark(record.runId, key);
    if (attempt) return { gate: 'ready', detail: `${approved}; merge ${attempt.value} (${attempt.at})` };
    const method = config?.merge_method ?? 'squash';
    // The outcome is marked after the request: killed before it, the next sweep asks again (and
    // after it, sees the pull request merged).
    try {
      const merged = await mergePullRequest(deps.github, record.repo, pr.number, {
        method,
        sha: pr.head.sha,
      });
      await deps.store.setPullRequestMark(record.runId, key, `merged ${merged.sha}`);
      deps.log.info(
        { run: record.runId, number: pr.number, method, sha: merged.sha },
        'Merged the pull request',
      );
      return {
        gate: 'ready',
        detail: `merged (${method}) as ${merged.sha.slice(0, 7)}`,
        acted: true,
        merged: true,
      };
    } catch (error) {
      const message = refusalMessage(error);
      if (!(error instanceof GitHubRequestError) || message === undefined) throw error;
      await deps.store.setPullRequestMark(record.runId, key, `refused: ${message}`);
      return { gate: 'ready', detail: `${approved}; GitHub refused the merge: ${message}` };
    }
  };
}
