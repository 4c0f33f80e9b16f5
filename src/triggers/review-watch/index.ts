/**
 * The review-watch trigger (issue 29): a branch kept reviewed. Each poll asks GitHub for the
 * branch's head commit, fetches it into the repository's checkout and decides the range with
 * `src/review/range.ts`; nothing new is a skipped run with no agent, anything else a task pinned to
 * that commit (its worktree starts there) with the range in its prompt. A finished review (its
 * agent called `findings_done`) moves the watch's "reviewed up to" when the watch next looks.
 */
import type { Item } from '../../core/types.js';
import type { GitHubClient } from '../../github/client.js';
import { getBranch, getRepository } from '../../github/rest.js';
import { markReviewed, reviewDone, reviewedUpTo, settleReview } from '../../review/progress.js';
import {
  baselineScope,
  describeScope,
  gitHistory,
  incrementalScope,
  NO_NEW_COMMITS,
  type ReviewScope,
} from '../../review/range.js';
import type { Store } from '../../store/types.js';
import { ensureCheckout } from '../../workspace/checkout.js';
import { git } from '../../workspace/git.js';
import { repoLockKey, withLock } from '../../workspace/lock.js';
import { defaultTimezone, noUpstreamRun, stringField } from '../hooks.js';
import type { PollContext, TriggerDefinition, WatchLook } from '../types.js';
import { type ReviewWatchResolved, reviewWatchTable } from './schema.js';

/** How long the clone (first look) and the fetch of the branch may take. */
const FETCH_TIMEOUT_MS = 10 * 60_000;

/** How many of the watch's newest runs are looked at for a finished review to settle. */
const SETTLE_WINDOW = 20;

/** The watched branch: as set, or the repository's default branch, asked from GitHub. */
async function watchedBranch(automation: ReviewWatchResolved, github: GitHubClient): Promise<string> {
  if (automation.config.branch) return automation.config.branch;
  return (await getRepository(github, automation.config.repo)).default_branch;
}

/** The branch's head commit, as GitHub says it now. */
async function headOf(
  automation: ReviewWatchResolved,
  github: GitHubClient,
  branch: string,
): Promise<string> {
  return (await getBranch(github, automation.config.repo, branch)).commit.sha;
}

/** The commit a review run was pinned to, from its item key (`review:<scan>:<sha>`). */
function pinnedCommit(itemKey: string): string | undefined {
  const match = /^review:[a-z]+:([0-9a-f]{7,64})$/.exec(itemKey);
  return match?.[1];
}

/**
 * "Reviewed up to" follows the newest of the watch's recent runs whose agent called
 * `findings_done`, or that succeeded without calling it (its pinned commit counts as reviewed);
 * a run that failed, timed out, was stopped or skipped moves nothing.
 */
async function settleNewest(store: Store, watch: string): Promise<void> {
  for (const run of await store.listRuns({ automationId: watch, limit: SETTLE_WINDOW })) {
    if (await reviewDone(store, run.id)) {
      await settleReview(store, watch, run.id);
      return;
    }
    const commit = run.status === 'succeeded' ? pinnedCommit(run.itemKey) : undefined;
    if (commit) {
      await markReviewed(store, watch, commit);
      return;
    }
  }
}

/** The scan a person may ask for now, for any watch: "run a baseline now". */
const BASELINE_NOW = 'baseline';

function reviewItem(
  automation: ReviewWatchResolved,
  branch: string,
  head: string,
  scope: Extract<ReviewScope, { kind: 'review' }> | undefined,
  asked = false,
): Item {
  const c = automation.config;
  const scan = asked ? 'baseline' : c.scan;
  return {
    // A baseline asked now is its own task: never the resumed session of another review of this head.
    id: asked ? `${head.slice(0, 12)}-baseline` : head.slice(0, 12),
    title: `${scan === 'baseline' ? 'Baseline review' : 'Review'} of ${c.repo} ${branch} at ${head.slice(0, 12)}${asked ? ' (asked now)' : ''}`,
    url: `https://github.com/${c.repo}/commit/${head}`,
    body: '',
    itemKey: `review:${scan}:${head}`,
    repo: c.repo,
    fields: {
      review_scan: scan,
      review_branch: branch,
      review_commit: head,
      review_from: scope?.from ?? '',
      review_commits: scope ? scope.commits.join('\n') : '',
      review_range: scope ? describeScope(scope) : NO_NEW_COMMITS,
    },
  };
}

async function look(
  automation: ReviewWatchResolved,
  github: GitHubClient,
  context: PollContext,
  asked?: string,
): Promise<WatchLook> {
  const { repository } = automation;
  const branch = await watchedBranch(automation, github);
  const head = await headOf(automation, github, branch);
  const checkout = await ensureCheckout({
    alias: repository.alias,
    remote: repository.remote,
    path: repository.checkoutPath,
    ...(repository.setup_script ? { setupScript: repository.setup_script } : {}),
    timeoutMs: FETCH_TIMEOUT_MS,
    log: context.log,
    ...(context.signal ? { signal: context.signal } : {}),
  });
  await withLock(repoLockKey(checkout.path), () =>
    git(['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${branch}:refs/remotes/origin/${branch}`], {
      cwd: checkout.path,
      timeoutMs: FETCH_TIMEOUT_MS,
      ...(context.signal ? { signal: context.signal } : {}),
    }),
  );
  if (!context.preview) await settleNewest(context.store, automation.id);
  // "Run a baseline now": the whole repository at the head, whatever the watch reviewed last.
  if (asked === BASELINE_NOW)
    return { item: reviewItem(automation, branch, head, baselineScope(head, 'asked'), true) };
  const mark = await reviewedUpTo(context.store, automation.id);
  if (
    automation.config.scan === 'incremental' &&
    automation.config.first_review === 'from_now' &&
    mark === null
  ) {
    // The first look of a watch that starts from now: this head counts as reviewed, no agent.
    if (!context.preview) await markReviewed(context.store, automation.id, head);
    return {
      item: reviewItem(automation, branch, head, undefined),
      skip: `Starting from ${head.slice(0, 12)}: the history before it is not reviewed`,
    };
  }
  // A baseline watch whose last finished review is at this head (before a restart, say) has
  // nothing new to review: the same head is not paid for twice ("run a baseline now" still is).
  const scope: ReviewScope =
    automation.config.scan === 'baseline'
      ? mark === head
        ? { kind: 'skip', reason: NO_NEW_COMMITS }
        : baselineScope(head)
      : await incrementalScope(gitHistory(checkout.path), head, mark, {
          wholeFirst: automation.config.first_review === 'whole',
        });
  if (scope.kind === 'skip')
    return { item: reviewItem(automation, branch, head, undefined), skip: scope.reason };
  return { item: reviewItem(automation, branch, head, scope) };
}

export const reviewWatchTrigger: TriggerDefinition<ReviewWatchResolved> = {
  ...reviewWatchTable,
  // One review of a watch at a time: the next one's range starts where this one ends.
  serialRuns: true,
  createFeed(automation, context) {
    return context.feeds.watch(automation, {
      look: (poll, asked) => look(automation, context.github(), poll, asked),
      scans: [BASELINE_NOW],
    });
  },
  pinnedCommit(task) {
    const branch = stringField(task.item.fields.review_branch);
    const sha = stringField(task.item.fields.review_commit);
    return branch && sha ? { branch, sha } : undefined;
  },
  agentTools(task, runId) {
    const sha = stringField(task.item.fields.review_commit);
    return sha
      ? { name: 'curupira-findings', args: ['--run', runId, '--commit', sha], commit: sha }
      : undefined;
  },
  doctor: {
    needs: 'github',
    async check(automation, context) {
      const github = context.github();
      const branch = await watchedBranch(automation, github);
      const head = await headOf(automation, github, branch);
      return { ok: true, detail: `${automation.config.repo} ${branch} is at ${head.slice(0, 12)}` };
    },
  },
  screening: {
    unscreened: 'a review watch’s prompt carries commit ids and its own range, no third-party text',
  },
  itemName: (run) => `review of ${run.repo} at ${run.itemId}`,
  upstreamRunId: noUpstreamRun,
  resolveTimezone: defaultTimezone,
};
