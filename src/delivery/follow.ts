/**
 * Following delivered pull requests (issue 13, item 2; the first two transitions). A sweep, at most
 * once per `follow_interval` seconds per pull request, reads each open delivery's pull request:
 *
 * - **merged** → the delivery is `merged`, the run's reason says so, and the linked issue (the
 *   run's item, for issue triggers) is closed as completed when GitHub did not close it;
 * - **closed unmerged** → `needs_human`, with one comment on the pull request (marked, so a repeat
 *   edits it) offering the three ways on.
 *
 * Its writes go through the write queue (durable, marked, redacted). Reviews, CI, conflicts and a
 * moving base are not followed yet.
 */
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { GitHubClient } from '../github/client.js';
import { WriteQueue } from '../github/write-queue.js';
import type { Logger } from '../log.js';
import type { PullRequestRecord, Store } from '../store/types.js';
import { getPullRequest } from './pull-request.js';

export const DEFAULT_FOLLOW_INTERVAL_SECONDS = 300;

export interface FollowDeps {
  store: Store;
  github: GitHubClient;
  clock: Clock;
  log: Logger;
  /** Seconds between two reads of one automation's pull requests (default 300). */
  intervalSeconds(automationId: string): number;
  paceMs?: number;
}

export function closedUnmergedComment(branch: string): string {
  return `**curupira**: this pull request was closed without being merged, so curupira stopped following it. A person chooses how to go on:

- **the work landed elsewhere**: close the issue as completed;
- **develop it again**: delete the branch \`${branch.replace(/`/g, "'")}\` and leave the issue open: the next run starts over from the base branch;
- **abandon it**: close the issue as not planned.`;
}

export interface FollowResult {
  checked: number;
  merged: number;
  closed: number;
}

export function createFollower(deps: FollowDeps): { sweep(): Promise<FollowResult> } {
  const lastChecked = new Map<string, number>();
  const queue = new WriteQueue({
    store: deps.store,
    client: deps.github,
    clock: deps.clock,
    log: deps.log,
    ...(deps.paceMs === undefined ? {} : { paceMs: deps.paceMs }),
  });
  return {
    async sweep() {
      const result: FollowResult = { checked: 0, merged: 0, closed: 0 };
      const now = deps.clock.now();
      for (const record of await deps.store.listPullRequests({ states: ['open'] })) {
        const due = (lastChecked.get(record.runId) ?? 0) + deps.intervalSeconds(record.automationId) * 1000;
        if (record.number === null || due > now) continue;
        lastChecked.set(record.runId, now);
        result.checked += 1;
        try {
          const outcome = await followOne(deps, queue, record);
          if (outcome) result[outcome] += 1;
        } catch (error) {
          deps.log.warn(
            { run: record.runId, number: record.number, error: errorMessage(error) },
            'Could not follow a pull request',
          );
        }
      }
      await queue.drain().catch((error: unknown) => {
        deps.log.warn({ error: errorMessage(error) }, 'Could not send GitHub writes');
      });
      return result;
    },
  };
}

async function followOne(
  deps: FollowDeps,
  queue: WriteQueue,
  record: PullRequestRecord,
): Promise<'merged' | 'closed' | undefined> {
  const pr = await getPullRequest(deps.github, record.repo, record.number!);
  if (pr.state === 'open') return undefined;
  const run = await deps.store.getRun(record.runId);
  if (pr.merged_at) {
    if (run?.taskType === 'github-issues' && /^\d+$/.test(run.itemId)) {
      const issue = await deps.github.rest<{ state: string }>(
        'GET',
        `/repos/${record.repo}/issues/${run.itemId}`,
      );
      if (issue.state === 'open') {
        await queue.enqueue({
          marker: `merged run=${record.runId} step=close-issue`,
          repo: record.repo,
          number: Number(run.itemId),
          runId: record.runId,
          write: { kind: 'set-state', state: 'closed', stateReason: 'completed' },
        });
      }
    }
    await deps.store.updatePullRequest(record.runId, {
      state: 'merged',
      detail: `merged at ${pr.merged_at}`,
    });
    if (run)
      await deps.store.updateRun(run.id, {
        reason: `merged: pull request #${record.number} merged at ${pr.merged_at}`,
      });
    deps.log.info({ run: record.runId, number: record.number }, 'Pull request merged');
    return 'merged';
  }
  await queue.enqueue({
    marker: `closed run=${record.runId}`,
    repo: record.repo,
    number: record.number!,
    runId: record.runId,
    write: { kind: 'comment', body: closedUnmergedComment(record.headBranch) },
  });
  await deps.store.updatePullRequest(record.runId, {
    state: 'needs_human',
    detail: 'closed without merging: a person decides (landed elsewhere, re-develop, abandon)',
  });
  deps.log.info({ run: record.runId, number: record.number }, 'Pull request closed unmerged: needs a person');
  return 'closed';
}
