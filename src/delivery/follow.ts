/**
 * Following delivered pull requests (issue 13, item 2). A sweep, at most once per
 * `follow_interval` seconds per pull request, reads each delivery still open or waiting for a person:
 *
 * - **merged** → the run ends as `merged`; the linked issue (the run's item, for issue triggers) is
 *   closed as completed when GitHub did not close it; the automation's state labels (`status_label`,
 *   `failed_label`) come off the item; a kept worktree is removed; `pr_merged` is notified;
 * - **closed unmerged** → `needs_human`, with one comment on the pull request (marked, so a repeat
 *   edits it) offering three ways on, each a label; `needs_human` is notified;
 * - **a way chosen** (a label on the pull request or on the issue): `agent:redevelop` → the item is
 *   run afresh; `agent:landed` / `agent:abandon` → the delivery is over for good. Either way the
 *   label comes off and a kept worktree is removed.
 *
 * Writes go through the write queue (durable, marked, redacted). Each step is safe to repeat: the
 * delivery's state changes last, so a process killed half-way does the same step again.
 *
 * While a pull request is open, the follow-up steps (`FOLLOW_STEPS`: conflicts, CI, reviews, a
 * moving base, merging) look at it in turn. Each may set the delivery's gate (the first gate found
 * wins, so the order is the precedence, except that `ready` only says "nothing here holds it
 * back", so a later step may still say more) and may start one action; once one step acted, the
 * later steps wait for the next sweep (one follow-up action in flight per pull request).
 */

import type { AutomationConfig } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage, GitHubRateLimitError } from '../core/errors.js';
import type { RunRecord } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { getIssue } from '../github/rest.js';
import { type ServiceWriteSender, WriteQueue } from '../github/write-queue.js';
import type { Logger } from '../log.js';
import type { NotificationEvent } from '../notify/index.js';
import type {
  PullRequestGate,
  PullRequestRecord,
  PullRequestState,
  Store,
  WriteInit,
} from '../store/types.js';
import { findTriggerDefinition, numberedItem } from '../triggers/registry.js';
import { getPullRequest, type PullJson } from './pull-request.js';
import type { RemediationRequest, RemediationResult } from './remediation-types.js';
import { deliveryRunId } from './repositories.js';
import { behindStep, ownUpdateStep } from './steps/behind.js';
import { ciStep } from './steps/ci.js';
import { conflictsStep } from './steps/conflicts.js';
import { inFlightStep } from './steps/in-flight.js';
import { mergeStep } from './steps/merge.js';
import { reviewsStep } from './steps/reviews.js';

export const DEFAULT_FOLLOW_INTERVAL_SECONDS = 300;

/** The labels a person adds to pick a way on after a pull request closed unmerged (seed 003). */
export const CHOICE_LABELS = {
  abandon: 'agent:abandon',
  landed: 'agent:landed',
  redevelop: 'agent:redevelop',
} as const;
type Choice = keyof typeof CHOICE_LABELS;

const CHOSEN: Record<Choice, { state: PullRequestState; words: string }> = {
  abandon: { state: 'abandoned', words: 'abandoned' },
  landed: { state: 'landed', words: 'the work landed elsewhere' },
  redevelop: { state: 'redeveloped', words: 're-develop: the item runs again from the base branch' },
};

/** Delivery states that keep the automation from running the item again. */
export const HOLDING_STATES: readonly PullRequestState[] = ['open', 'needs_human', 'landed', 'abandoned'];

/** One look at an open pull request, handed to each follow-up step in turn. */
export interface FollowContext {
  deps: FollowDeps;
  queue: WriteQueue;
  record: PullRequestRecord;
  /** The delivery's run (the run that pushed the branch first). */
  run: RunRecord | undefined;
  /** The pull request as just read. */
  pr: PullJson;
}

/**
 * What a follow-up step found: the gate it sees (`undefined`: nothing for this step) with a word,
 * and whether it started an action (a remediation run, an update of the branch, a merge, a notice).
 * A detail without a gate (`checks running: …`) is the detail of `open` when no step finds a gate.
 */
export interface StepOutcome {
  gate?: PullRequestGate;
  detail?: string;
  acted?: boolean;
  /** The step merged the pull request: the follower reads it again and ends the delivery at once. */
  merged?: boolean;
}

/** A follow-up step (src/delivery/steps/). Safe to repeat after a kill -9: it keeps its marks. */
export type FollowStep = (context: FollowContext) => Promise<StepOutcome | undefined>;

/**
 * The follow-up steps, in order of precedence: the first gate found is the delivery's gate.
 * `ownUpdateStep` sets no gate: it records curupira's own update of the branch (a merge of the
 * base GitHub made) before any step can count it as a person's push. A remediation in flight comes
 * next (it holds the others back); then conflicts, CI and reviews; then the steps that move the
 * branch or merge it.
 */
export const FOLLOW_STEPS: FollowStep[] = [
  ownUpdateStep(),
  inFlightStep,
  conflictsStep(),
  ciStep,
  reviewsStep,
  behindStep(),
  mergeStep(),
];

export interface FollowDeps {
  store: Store;
  github: GitHubClient;
  clock: Clock;
  log: Logger;
  /** Seconds between two reads of one automation's pull requests (default 300). */
  intervalSeconds(automationId: string): number;
  paceMs?: number;
  /** Waits after each failed write attempt (default the queue's, WRITE_BACKOFF_MS). */
  backoffMs?: readonly number[];
  /** The automation's state labels (`status_label`, `failed_label`), taken off the item at merge. */
  stateLabels?(automationId: string): readonly string[];
  /**
   * The writes to the item outside GitHub when every pull request of the run merged (a trigger's
   * `writeBack.merged`: a Linear or Jira issue moved to its done state); none unless asked.
   */
  mergedWrites?(run: RunRecord): WriteInit[];
  /** Sends the queue's writes to items outside GitHub (the engine's; without it they wait for it). */
  sendServiceWrite?: ServiceWriteSender;
  /** The engine's `notify` (`pr_merged`, `needs_human`). */
  notify?(event: NotificationEvent): void;
  /** A person chose to re-develop: the automation offers the item again. */
  redevelop?(record: PullRequestRecord): void;
  /** Removes the run's kept worktree, if it has one (the delivery is over). */
  removeWorktree?(run: RunRecord): Promise<void>;
  /** The automation's settings (follow-up keys: `remediation_budget`, `update_branch`, `merge`…). */
  config?(automationId: string): AutomationConfig | undefined;
  /** Starts a remediation run for a delivery (src/delivery/remediation-types.ts). */
  remediate?(record: PullRequestRecord, request: RemediationRequest): Promise<RemediationResult>;
  /**
   * The remediator's action in flight of a delivery (src/delivery/remediation.ts `resumeInFlight`):
   * `running`, `resumed` or `settled` after a restart, or `none`. Looked at first (steps/in-flight.ts).
   */
  inFlight?(record: PullRequestRecord): Promise<'none' | 'running' | 'resumed' | 'settled'>;
  /** The follow-up steps (default `FOLLOW_STEPS`); tests pass their own. */
  steps?: readonly FollowStep[];
}

export function closedUnmergedComment(branch: string): string {
  return `**curupira**: this pull request was closed without being merged, so curupira stopped following it. A person chooses how to go on, by adding one of these labels to this pull request or to its issue:

- \`${CHOICE_LABELS.landed}\`: **the work landed elsewhere**. curupira closes its delivery and does not run the item again;
- \`${CHOICE_LABELS.redevelop}\`: **develop it again**. curupira runs the item afresh from the base branch (delete the branch \`${branch.replace(/`/g, "'")}\` first: curupira never force-pushes over it);
- \`${CHOICE_LABELS.abandon}\`: **abandon it**. curupira closes its delivery and does not run the item again.`;
}

export interface FollowResult {
  checked: number;
  merged: number;
  closed: number;
  /** Deliveries a person decided on (a choice label). */
  decided: number;
}

export function createFollower(deps: FollowDeps): { sweep(): Promise<FollowResult> } {
  const lastChecked = new Map<string, number>();
  const queue = new WriteQueue({
    store: deps.store,
    client: deps.github,
    clock: deps.clock,
    log: deps.log,
    ...(deps.paceMs === undefined ? {} : { paceMs: deps.paceMs }),
    ...(deps.backoffMs === undefined ? {} : { backoffMs: deps.backoffMs }),
    ...(deps.sendServiceWrite ? { sendServiceWrite: deps.sendServiceWrite } : {}),
  });
  /** While GitHub's rate limit is spent: no look until its reset (said once per reset). */
  let spentUntil = Number.NEGATIVE_INFINITY;
  return {
    async sweep() {
      const result: FollowResult = { checked: 0, merged: 0, closed: 0, decided: 0 };
      const now = deps.clock.now();
      if (now < spentUntil) return result;
      for (const record of await deps.store.listPullRequests({ states: ['open', 'needs_human'] })) {
        const due = (lastChecked.get(record.runId) ?? 0) + deps.intervalSeconds(record.automationId) * 1000;
        if (record.number === null || due > now) continue;
        lastChecked.set(record.runId, now);
        result.checked += 1;
        try {
          const outcome = await followOne(deps, queue, record);
          if (outcome) result[outcome] += 1;
        } catch (error) {
          const resetAt = error instanceof GitHubRateLimitError ? error.resetAt?.getTime() : undefined;
          if (resetAt !== undefined && resetAt > deps.clock.now()) {
            // The other pull requests would meet the same answer: they wait for the reset too.
            if (resetAt !== spentUntil)
              deps.log.warn(
                { until: new Date(resetAt).toISOString(), error: errorMessage(error) },
                "GitHub's rate limit is spent: following pull requests waits for its reset",
              );
            spentUntil = resetAt;
            break;
          }
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
): Promise<'merged' | 'closed' | 'decided' | undefined> {
  const pr = await getPullRequest(deps.github, record.repo, record.number!);
  const run = await deps.store.getRun(deliveryRunId(record.runId));
  if (pr.merged_at) {
    await onMerged(deps, queue, record, run, pr.merged_at);
    return 'merged';
  }
  if (pr.state === 'open') {
    const current =
      record.state === 'needs_human'
        ? await deps.store.updatePullRequest(record.runId, { state: 'open', detail: 'reopened' })
        : record;
    const mergedNow = await followOpen(
      deps,
      { deps, queue, record: current, run, pr },
      deps.steps ?? FOLLOW_STEPS,
    );
    if (!mergedNow) return undefined;
    const after = await getPullRequest(deps.github, record.repo, record.number!);
    if (!after.merged_at) return undefined;
    await onMerged(
      deps,
      queue,
      (await deps.store.getPullRequest(record.runId)) ?? current,
      run,
      after.merged_at,
    );
    return 'merged';
  }
  if (record.state === 'needs_human')
    return (await onChoice(deps, queue, record, run)) ? 'decided' : undefined;
  await onClosed(deps, queue, record, run, pr);
  return 'closed';
}

/**
 * Runs the follow-up steps on an open pull request and records its gate: the first gate a step
 * found (a later step's gate replaces `ready`: approved as far as the reviews go, yet the branch
 * may be behind, or a person merges), else `open` (nothing to wait for or act on that a step knows
 * of) with the first detail a step gave without a gate (`checks running: …`).
 */
async function followOpen(
  deps: FollowDeps,
  context: FollowContext,
  steps: readonly FollowStep[],
): Promise<boolean> {
  let gate: { gate: PullRequestGate; detail: string | null } | undefined;
  let note: string | undefined;
  let merged = false;
  for (const step of steps) {
    const outcome = await step(context);
    if (outcome?.merged) merged = true;
    if (outcome?.gate && (!gate || gate.gate === 'ready'))
      gate = { gate: outcome.gate, detail: outcome.detail ?? null };
    if (!outcome?.gate && outcome?.detail !== undefined) note ??= outcome.detail;
    if (outcome?.acted) break;
  }
  const next = gate ?? { gate: 'open' as const, detail: note ?? null };
  if (next.gate !== context.record.gate || next.detail !== context.record.gateDetail)
    await deps.store.updatePullRequest(context.record.runId, { gate: next.gate, gateDetail: next.detail });
  return merged;
}

/** The run's item number in the pull request's repository (issue or pull request triggers), if any. */
function itemNumber(run: RunRecord | undefined, repo: string): number | undefined {
  if (!run || run.repo !== repo) return undefined;
  return numberedItem(run.taskType, run.repo, run.itemId)?.number;
}

async function onMerged(
  deps: FollowDeps,
  queue: WriteQueue,
  record: PullRequestRecord,
  run: RunRecord | undefined,
  mergedAt: string,
): Promise<void> {
  // A task across repositories (repositories.ts): the item is closed, and the run ends, once every
  // pull request of the run merged; the ones merged before only record it.
  const siblings = run
    ? (await deps.store.listPullRequests({ taskKey: record.taskKey })).filter(
        (r) => r.runId !== record.runId && deliveryRunId(r.runId) === run.id,
      )
    : [];
  const waiting = siblings.filter((r) => r.state !== 'merged');
  if (waiting.length > 0) {
    await deps.store.updatePullRequest(record.runId, { state: 'merged', detail: `merged at ${mergedAt}` });
    deps.log.info(
      { run: record.runId, number: record.number, waiting: waiting.map((r) => `${r.repo}#${r.number}`) },
      'Pull request merged; the others of its task are not yet',
    );
    return;
  }
  const itemRepo = siblings.length > 0 && run ? run.repo : record.repo;
  const number = itemNumber(run, itemRepo);
  const at = { repo: itemRepo, runId: run?.id ?? record.runId };
  if (number !== undefined) {
    if (run && findTriggerDefinition(run.taskType)?.githubItem === 'issue') {
      const issue = await getIssue(deps.github, itemRepo, number);
      if (issue.state === 'open') {
        await queue.enqueue({
          ...at,
          marker: `merged run=${at.runId} step=close-issue`,
          number,
          write: { kind: 'set-state', state: 'closed', stateReason: 'completed' },
        });
      }
    }
    for (const [i, label] of (deps.stateLabels?.(record.automationId) ?? []).entries()) {
      await queue.enqueue({
        ...at,
        marker: `merged run=${at.runId} step=unlabel-${i}`,
        number,
        write: { kind: 'remove-label', label },
      });
    }
  }
  // The item outside GitHub moved to its done state: one marker per run, so seeing the merge again
  // (a kill -9 before the delivery's state below was written) queues nothing twice.
  for (const write of run ? (deps.mergedWrites?.(run) ?? []) : [])
    if ((await deps.store.listWrites({ marker: write.marker })).length === 0) await queue.enqueue(write);
  // A task across repositories names every pull request (the last one merged last).
  const all = [...siblings, record];
  const names = all.map((r) => `${r.repo}#${r.number}`).join(', ');
  const reason =
    siblings.length > 0
      ? `merged: pull requests ${names} merged (the last at ${mergedAt})`
      : `merged: pull request #${record.number} merged at ${mergedAt}`;
  const ended = run ? await deps.store.updateRun(run.id, { status: 'merged', reason }) : undefined;
  if (ended) await deps.removeWorktree?.(ended);
  deps.notify?.({
    event: 'pr_merged',
    id: `pr:${record.runId}:merged`,
    automation: record.automationId,
    summary: `${record.automationId}: pull request${siblings.length > 0 ? 's' : ''} ${siblings.length > 0 ? names : `${record.repo}#${record.number}`} merged`,
    ...(ended ? { run: ended } : {}),
    details: {
      pull_request: record.number,
      url: record.url,
      merged_at: mergedAt,
      ...(siblings.length > 0
        ? { pull_requests: all.map((r) => `${r.repo}#${r.number}${r.url ? ` ${r.url}` : ''}`).join(', ') }
        : {}),
    },
  });
  await deps.store.updatePullRequest(record.runId, { state: 'merged', detail: `merged at ${mergedAt}` });
  deps.log.info({ run: record.runId, number: record.number }, 'Pull request merged');
}

async function onClosed(
  deps: FollowDeps,
  queue: WriteQueue,
  record: PullRequestRecord,
  run: RunRecord | undefined,
  pr: PullJson,
): Promise<void> {
  await queue.enqueue({
    marker: `closed run=${record.runId}`,
    repo: record.repo,
    number: record.number!,
    runId: record.runId,
    write: { kind: 'comment', body: closedUnmergedComment(record.headBranch) },
  });
  const labels = Object.values(CHOICE_LABELS).join(', ');
  const reason = `needs human: pull request #${record.number} was closed without merging; add a label: ${labels}`;
  const updated = run ? await deps.store.updateRun(run.id, { reason }) : undefined;
  deps.notify?.({
    event: 'needs_human',
    id: `pr:${record.runId}:closed`,
    automation: record.automationId,
    summary: `${record.automationId}: pull request ${record.repo}#${record.number} was closed without merging; a person decides how to go on`,
    ...(updated ? { run: updated } : {}),
    details: { pull_request: record.number, url: pr.html_url, choices: labels },
  });
  await deps.store.updatePullRequest(record.runId, {
    state: 'needs_human',
    detail: `closed without merging: a person decides (${labels})`,
  });
  deps.log.info({ run: record.runId, number: record.number }, 'Pull request closed unmerged: needs a person');
}

type LabelJson = string | { name?: string };

/** The way a person picked: the first choice label on the pull request, else on the run's item. */
async function findChoice(
  deps: FollowDeps,
  record: PullRequestRecord,
  run: RunRecord | undefined,
): Promise<{ choice: Choice; number: number } | undefined> {
  const item = itemNumber(run, record.repo);
  const numbers = [record.number!, ...(item !== undefined && item !== record.number ? [item] : [])];
  for (const number of numbers) {
    const { labels }: { labels?: LabelJson[] } = await getIssue(deps.github, record.repo, number);
    const names = new Set(
      (labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? '')).toLowerCase()),
    );
    const choice = (Object.keys(CHOICE_LABELS) as Choice[]).find((c) => names.has(CHOICE_LABELS[c]));
    if (choice) return { choice, number };
  }
  return undefined;
}

async function onChoice(
  deps: FollowDeps,
  queue: WriteQueue,
  record: PullRequestRecord,
  run: RunRecord | undefined,
): Promise<boolean> {
  const found = await findChoice(deps, record, run);
  if (!found) return false;
  const label = CHOICE_LABELS[found.choice];
  // Off again, so that a later delivery of the same item is not decided by it.
  await queue.enqueue({
    marker: `decided run=${record.runId}`,
    repo: record.repo,
    number: found.number,
    runId: record.runId,
    write: { kind: 'remove-label', label },
  });
  const { state, words } = CHOSEN[found.choice];
  const detail = `${words} (label ${label} on #${found.number})`;
  const updated = run
    ? await deps.store.updateRun(run.id, {
        reason: `pull request #${record.number} closed without merging; ${detail}`,
      })
    : undefined;
  if (updated) await deps.removeWorktree?.(updated);
  await deps.store.updatePullRequest(record.runId, { state, detail });
  if (found.choice === 'redevelop') deps.redevelop?.(record);
  deps.log.info({ run: record.runId, number: record.number, choice: found.choice }, 'A person decided');
  return true;
}
