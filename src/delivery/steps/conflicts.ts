/**
 * The conflicts step (first in FOLLOW_STEPS): GitHub says the pull request cannot merge
 * (`mergeable: false`; `null` means GitHub is still computing it, so the next sweep looks again).
 *
 * - One notice comment per (head, base) pair, marked, through the write queue (a repeat edits it).
 * - `resolve_conflicts = true`: one remediation run per pair (`conflict:<head>..<base>`, not counted
 *   against `remediation_budget`) that resumes the agent to merge the base into the branch and
 *   resolve, never rebasing or force-pushing. A new pair afterwards (the agent pushed, or the base
 *   moved) is progress and starts over.
 * - Off, or the pair's resolution run is over and it still conflicts, or no run can start: the gate
 *   is `needs_human`, the notice says so, and `needs_human` is notified once per pair.
 */
import type { PullRequestGate } from '../../store/types.js';
import type { FollowContext, FollowStep, StepOutcome } from '../follow.js';
import type { RemediationRequest } from '../remediation-types.js';
import { compareRefs, mergeFields } from './merge-state.js';

/** Mark keys (pull_request_marks) of this step, per (head, base) pair. */
export const CONFLICT_MARKS = {
  notice: (pair: string) => `conflict-notice:${pair}`,
  remediation: (pair: string) => `conflict-remediation:${pair}`,
  needsHuman: (pair: string) => `conflict-needs-human:${pair}`,
} as const;

const short = (sha: string) => sha.slice(0, 7);
const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

function notice(
  base: string,
  head: string,
  baseSha: string,
  headSha: string,
  state: 'resolving' | 'person',
): string {
  const where = `${code(head)} (${short(headSha)}) conflicts with its base ${code(base)} (${short(baseSha)})`;
  const next =
    state === 'resolving'
      ? 'curupira starts the agent once to merge the base into the branch and resolve the conflicts (a merge commit: no rebase, no force-push).'
      : `A person resolves them: merge ${code(base)} into the branch (\`git merge origin/${base.replace(/`/g, "'")}\`), fix the conflicts and push. curupira never rebases or force-pushes this branch.`;
  return `**curupira**: this pull request's branch ${where}, so GitHub cannot merge it.\n\n${next}`;
}

async function filesOnBothSides(context: FollowContext, base: string): Promise<string[]> {
  const { github } = context.deps;
  const { repo } = context.record;
  const [ours, theirs] = await Promise.all([
    compareRefs(github, repo, base, context.pr.head.sha),
    compareRefs(github, repo, context.pr.head.sha, base),
  ]);
  const changed = new Set((ours.files ?? []).map((f) => f.filename));
  return (theirs.files ?? []).map((f) => f.filename).filter((f) => changed.has(f));
}

function request(context: FollowContext, base: string, pair: string, files: string[]): RemediationRequest {
  const { pr } = context;
  const safeBase = base.replace(/`/g, "'");
  return {
    cause: 'conflict',
    key: `conflict:${pair}`,
    budgeted: false,
    instructions: [
      `Pull request #${pr.number} cannot be merged: its branch conflicts with the base branch \`${safeBase}\` (head ${pr.head.sha}, base ${pair.split('..')[1]}).`,
      `Merge the base into the branch: curupira has just fetched it as \`origin/${safeBase}\`, so run \`git merge origin/${safeBase}\` (no fetch needed: a sandboxed run may have no network), resolve every conflict keeping the intent of both sides, check that the project still builds and its tests pass, then commit the merge.`,
      'Never rebase, never amend or rewrite commits that were pushed, never force-push: curupira pushes the branch when you finish.',
      files.length > 0
        ? 'The files changed on both sides (where git is likely to find the conflicts) are listed below as data.'
        : '',
    ]
      .filter(Boolean)
      .join('\n\n'),
    untrusted: files.length > 0 ? [{ label: 'files changed on both sides', text: files.join('\n') }] : [],
  };
}

export function conflictsStep(): FollowStep {
  return async (context) => {
    const { deps, queue, record, pr } = context;
    if (mergeFields(pr).mergeable !== false) return undefined;
    const base = pr.base.ref;
    const comparison = await compareRefs(deps.github, record.repo, base, pr.head.sha);
    const baseSha = comparison.base_commit.sha;
    const pair = `${pr.head.sha}..${baseSha}`;
    const resolving = deps.config?.(record.automationId)?.resolve_conflicts === true;
    const marker = `conflict run=${record.runId} pair=${pair}`;
    const comment = (state: 'resolving' | 'person') =>
      queue.enqueue({
        marker,
        repo: record.repo,
        number: record.number!,
        runId: record.runId,
        write: { kind: 'comment', body: notice(base, pr.head.ref, baseSha, pr.head.sha, state) },
      });
    if (!(await deps.store.getPullRequestMark(record.runId, CONFLICT_MARKS.notice(pair)))) {
      await comment(resolving ? 'resolving' : 'person');
      await deps.store.setPullRequestMark(
        record.runId,
        CONFLICT_MARKS.notice(pair),
        resolving ? 'resolving' : 'person',
      );
    }

    const needsHuman = async (why: string): Promise<StepOutcome> => {
      const key = CONFLICT_MARKS.needsHuman(pair);
      if (!(await deps.store.getPullRequestMark(record.runId, key))) {
        if (resolving) await comment('person');
        deps.notify?.({
          event: 'needs_human',
          id: `pr:${record.runId}:conflict:${pair}`,
          automation: record.automationId,
          summary: `${record.automationId}: pull request ${record.repo}#${record.number} conflicts with ${base}; a person resolves it (${why})`,
          ...(context.run ? { run: context.run } : {}),
          details: {
            pull_request: record.number,
            url: record.url,
            head: pr.head.sha,
            base: baseSha,
            reason: why,
          },
        });
        await deps.store.setPullRequestMark(record.runId, key, why);
        deps.log.info(
          { run: record.runId, number: record.number, pair },
          'Conflicted pull request needs a person',
        );
      }
      return {
        gate: 'needs_human',
        detail: `conflicts with ${base} (${short(pr.head.sha)}..${short(baseSha)}): ${why}`,
      };
    };

    if (!resolving) return needsHuman('resolve_conflicts is off');
    if (!deps.remediate) return needsHuman('no remediation run can start here');
    const files = await filesOnBothSides(context, base);
    const result = await deps.remediate(record, request(context, base, pair, files));
    const gate: PullRequestGate = 'conflicted';
    switch (result) {
      case 'started':
        await deps.store.setPullRequestMark(record.runId, CONFLICT_MARKS.remediation(pair), 'started');
        return {
          gate,
          detail: `resolving: a remediation run merges ${base} (${short(pr.head.sha)}..${short(baseSha)})`,
          acted: true,
        };
      case 'busy':
        return {
          gate,
          detail: 'waiting: another follow-up action of this pull request is in flight',
          acted: true,
        };
      case 'handled':
        return needsHuman('the resolution run did not resolve it');
      case 'exhausted':
        return needsHuman('the remediation budget is spent');
      case 'refused':
        return needsHuman(
          'the remediation was refused (the checkout is not this repository’s, or nothing to resume)',
        );
    }
  };
}
