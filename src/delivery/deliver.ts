/**
 * Delivery (issue 13): after a successful run, the agent's branch goes to the remote (`deliver =
 * "branch"`) and, with `deliver = "pr"`, into a pull request — opened as a draft unless `draft =
 * false`, or adopted when one is already open for the branch.
 *
 * Safe to repeat after a kill -9 at any point: the delivery is a store row (`pull_requests`,
 * migration 9) written before each step; a push of a commit already there changes nothing, and
 * before opening a pull request the open ones of the branch are read (the body of the ones curupira
 * opens carries a hidden marker naming the run). The engine's restart finishes the interrupted run
 * through the same path, so it opens at most one pull request.
 */
import type { ResolvedAutomation } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { codeSource } from '../core/code-source.js';
import { errorMessage } from '../core/errors.js';
import type { RunRecord, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import type { Logger } from '../log.js';
import { crashPoint } from '../process/crash-point.js';
import type { PullRequestRecord, Store } from '../store/types.js';
import { REPO_PATTERN } from '../triggers/common-schema.js';
import { git } from '../workspace/git.js';
import { deliveryBranchName, scheduledBranchName } from '../workspace/paths.js';
import { pathExists } from '../workspace/remove.js';
import { resolveDefaultBranch } from '../workspace/worktree.js';
import { HOLDING_STATES } from './follow.js';
import {
  createPullRequest,
  defaultBranchOf,
  deliveryMarker,
  findOpenPullRequest,
  type PullJson,
  renderPullRequest,
} from './pull-request.js';
import { branchTip, containedIn, pushBranch } from './push.js';
import { type DeliveryFinding, heldReason, reviewDelivery, reviewFailure } from './review.js';
import { changeSummary, finalAgentMessage, quoted } from './summary.js';

export interface DeliveryDeps {
  store: Store;
  log: Logger;
  clock: Clock;
  tokens?: TokenSource;
  /** A client made with `maxAttempts: 1` (a retried POST could open a second pull request). */
  github?: GitHubClient;
  /** Waits between attempts at the GitHub side (default 2 s, 5 s). */
  retryDelaysMs?: readonly number[];
}

export interface DeliveryRequest {
  automation: ResolvedAutomation;
  task: Task;
  run: RunRecord;
  /** The worktree holding the branch. */
  cwd: string;
  branch: string;
  signal?: AbortSignal;
  /** The engine's environment: its secret-looking values count as secrets in the review. */
  env?: NodeJS.ProcessEnv;
  /**
   * A multi-repository task: where this delivery goes when it is not the primary repository's (its
   * record key, GitHub repository and remote), and the others' names for the body (repositories.ts).
   */
  target?: DeliveryTarget;
  /** A multi-repository task: the GitHub repositories of all its deliveries, this one's included. */
  spans?: readonly string[];
}

/** An additional repository's delivery of a multi-repository task. */
export interface DeliveryTarget {
  /** The `pull_requests` key: `<run id>~<alias>`. */
  key: string;
  /** `owner/name` on GitHub. */
  repo: string;
  remote: string;
}

export type DeliveryResult =
  | { kind: 'no-changes' }
  | { kind: 'delivered'; record: PullRequestRecord }
  | { kind: 'failed'; reason: string }
  /** Not pushed: the agent's commits carry a secret or an unasked configuration edit (review.ts). */
  | { kind: 'held'; reason: string; findings: DeliveryFinding[] }
  /** `deliver = "head"`: the commits went to the pull request's own branch (no delivery record). */
  | { kind: 'pushed-head'; branch: string; sha: string; number: number }
  /** `deliver = "head"` on a pull request whose branch cannot be pushed to (a fork's): kept locally. */
  | { kind: 'not-pushed'; reason: string };

/**
 * The branch a delivery pushes to: the one its record names (a restart finds the same), else the
 * readable name made from the run's own item id and title (recorded when the run was created, so
 * the same after a restart).
 */
export function remoteBranchOf(
  automation: Pick<ResolvedAutomation, 'id'>,
  run: Pick<RunRecord, 'itemId' | 'itemTitle'> & { scheduledFor?: string | null },
  record?: Pick<PullRequestRecord, 'headBranch'>,
): string {
  if (record) return record.headBranch;
  // A schedule's fire: named by its time, not by its epoch seconds and the automation's id.
  if (run.scheduledFor) return scheduledBranchName(automation.id, run.scheduledFor);
  return deliveryBranchName(automation.id, run.itemId, run.itemTitle);
}

/** True when some automation delivers its branches: only then does the engine build delivery. */
export function wantsDelivery(automations: readonly { config: { deliver?: unknown } }[]): boolean {
  return automations.some((a) => a.config.deliver !== undefined);
}

/**
 * The delivery that holds this task back, if any: while its pull request is open the item is not
 * run again (a second run would cut a new branch beside the delivered one; following the pull
 * request is the follow-up's work), nor while a closed one waits for a person, nor after a person
 * said the work landed elsewhere or is abandoned. A merged or re-developed one holds nothing.
 */
export async function openDelivery(store: Store, taskKey: string): Promise<PullRequestRecord | undefined> {
  return (await store.listPullRequests({ taskKey, states: HOLDING_STATES }))[0];
}

/**
 * For a trigger whose items are occasions (a schedule's fires): a pull request of an earlier fire
 * of the automation still open or waiting for a person, which holds the next fire.
 */
export async function earlierFireDelivery(
  store: Store,
  automationId: string,
  taskKey: string,
): Promise<PullRequestRecord | undefined> {
  return (await store.listPullRequests({ states: ['open', 'needs_human'] })).find(
    (pr) => pr.automationId === automationId && pr.taskKey !== taskKey,
  );
}

/** A delivery as a reason names it: `pull request #8`, or `branch <name>` when none was opened. */
export function deliveryName(record: Pick<PullRequestRecord, 'number' | 'headBranch'>): string {
  return record.number === null ? `branch ${record.headBranch}` : `pull request #${record.number}`;
}

/** The branch the delivery compares with and the pull request merges into. */
async function baseBranch(deps: DeliveryDeps, request: DeliveryRequest): Promise<string> {
  const { automation, task, cwd } = request;
  if (automation.config.pr_base_branch) return automation.config.pr_base_branch;
  if (automation.config.deliver === 'pr' && deps.github)
    return defaultBranchOf(deps.github, request.target?.repo ?? task.identity.repo);
  return (await resolveDefaultBranch(cwd, { network: false })).ref.replace(/^origin\//, '');
}

async function commitsAhead(cwd: string, base: string, sha: string): Promise<number> {
  const out = await git(['rev-list', '--count', `refs/remotes/origin/${base}..${sha}`, '--'], { cwd }).catch(
    () => '0',
  );
  return Number.parseInt(out.trim(), 10) || 0;
}

export async function deliverRun(deps: DeliveryDeps, request: DeliveryRequest): Promise<DeliveryResult> {
  const { automation, task, run, cwd, branch } = request;
  const mode = automation.config.deliver;
  if (!mode) return { kind: 'no-changes' };
  if (mode === 'head') return deliverToHead(deps, request);
  const key = request.target?.key ?? run.id;
  const repo = request.target?.repo ?? task.identity.repo;
  if (mode === 'pr' && (!REPO_PATTERN.test(repo) || !deps.github)) {
    return {
      kind: 'failed',
      reason: `deliver = "pr" needs a GitHub repository and token (task repo ${repo})`,
    };
  }
  const fields = { automation: automation.id, run: run.id, branch, repo };
  let firstPush = false;
  try {
    let record = await deps.store.getPullRequest(key);
    // Finished after a restart, its worktree already removed: that happens only once the branch
    // was delivered (nothing left unpushed), so there is nothing more to do.
    if (record && record.state !== 'pushing' && (mode === 'branch' || record.number !== null))
      if (!(await pathExists(cwd))) return { kind: 'delivered', record };
    const sha = await branchTip(cwd, branch);
    const base = record?.baseBranch ?? (await baseBranch(deps, request));
    if (!sha || (!record && (await containedIn(cwd, sha, base)))) return { kind: 'no-changes' };
    if (!record || record.state === 'pushing') {
      const held = await review(request, `refs/remotes/origin/${base}`, sha);
      if (held) {
        deps.log.warn({ ...fields, findings: held.findings.length }, 'Delivery held for a person');
        return held;
      }
    }
    // Recorded before the first push: a restart pushes to (and looks for the pull request of) the
    // same remote branch.
    // Nothing of this delivery reached the remote yet: a rejected push means the branch is someone else's.
    firstPush = !record || record.state === 'pushing';
    record ??= await deps.store.beginPullRequest({
      runId: key,
      automationId: automation.id,
      taskKey: task.key,
      repo,
      delivery: mode,
      headBranch: remoteBranchOf(automation, run),
    });
    const remoteBranch = record.headBranch;
    crashPoint('delivery-begun');
    if (record.state === 'pushing' || record.headSha !== sha) {
      await pushBranch({
        cwd,
        remote: request.target?.remote ?? automation.repository.remote,
        branch,
        remoteBranch,
        ...(deps.tokens ? { tokens: deps.tokens } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      record = await deps.store.updatePullRequest(key, {
        headSha: sha,
        baseBranch: base,
        ...(record.state === 'pushing' ? { state: 'pushed' as const } : {}),
      });
      deps.log.info({ ...fields, remoteBranch, sha }, 'Pushed the branch');
    }
    crashPoint('delivery-pushed');
    if (mode === 'branch' || record.number !== null) return { kind: 'delivered', record };
    const pr = await withRetries(deps, () => ensurePullRequest(deps, request, base, sha, remoteBranch));
    record = await deps.store.updatePullRequest(key, {
      number: pr.number,
      url: pr.html_url,
      adopted: !(pr.body ?? '').includes(deliveryMarker(key)),
      state: 'open',
    });
    crashPoint('delivery-recorded');
    deps.log.info({ ...fields, number: pr.number, adopted: record.adopted }, 'Pull request delivered');
    return { kind: 'delivered', record };
  } catch (error) {
    if (firstPush && rejectedPush(error)) {
      // Running the agent again would meet the same branch: a person decides (not retried).
      const remoteBranch = remoteBranchOf(
        automation,
        run,
        await deps.store.getPullRequest(key).catch(() => undefined),
      );
      const reason = `not pushed: ${repo} already has a branch ${remoteBranch} with commits this run does not have (a delivery of this item made outside this state file, by another curupira or an earlier state file, or someone's own push); nothing was overwritten and the agent's commits stay on ${branch} in the kept worktree. Merge, close or delete what is on that branch, then retry this run`;
      deps.log.warn({ ...fields, remoteBranch }, 'Delivery held: the remote branch has other commits');
      return { kind: 'held', reason, findings: [] };
    }
    const reason = `could not deliver branch ${branch}: ${errorMessage(error)}`;
    deps.log.warn({ ...fields, error: errorMessage(error) }, 'Delivery failed');
    const record = await deps.store.getPullRequest(key).catch(() => undefined);
    if (record) await deps.store.updatePullRequest(key, { detail: reason }).catch(() => undefined);
    return { kind: 'failed', reason };
  }
}

/** git refused the push because the remote branch has commits the pushed one lacks (not a fast-forward). */
function rejectedPush(error: unknown): boolean {
  return /\[rejected\]|non-fast-forward|fetch first|Note about fast-forwards/i.test(errorMessage(error));
}

/** The review of the commits to push (review.ts): a hold, or undefined when they may go. */
async function review(
  request: DeliveryRequest,
  from: string,
  sha: string,
): Promise<Extract<DeliveryResult, { kind: 'held' }> | undefined> {
  try {
    const findings = await reviewDelivery({
      cwd: request.cwd,
      from,
      to: sha,
      allow: request.automation.config.allow_config_edits,
      ...(request.env ? { env: request.env } : {}),
    });
    if (findings.length === 0) return undefined;
    return { kind: 'held', reason: heldReason(findings, request.branch), findings };
  } catch (error) {
    return { kind: 'held', reason: reviewFailure(error), findings: [] };
  }
}

/** The open pull request of the branch (adopted), else a new one. */
async function ensurePullRequest(
  deps: DeliveryDeps,
  request: DeliveryRequest,
  base: string,
  sha: string,
  remoteBranch: string,
): Promise<PullJson> {
  const github = deps.github!;
  const { automation, task, run, cwd } = request;
  const repo = request.target?.repo ?? task.identity.repo;
  const open = await findOpenPullRequest(github, repo, remoteBranch);
  if (open) return open;
  const message = await finalAgentMessage(run.transcriptPath, run.provider);
  const notes = {
    changes: await changeSummary(cwd, `refs/remotes/origin/${base}`, sha),
    agentMessage: message ? quoted(message) : '',
  };
  const commits = await commitsAhead(cwd, base, sha);
  const { title, body } = renderPullRequest(automation, task, run, commits, notes, remoteBranch, {
    key: request.target?.key ?? run.id,
    ...(request.spans ? { spans: request.spans } : {}),
  });
  const created = await createPullRequest(github, repo, {
    title,
    body,
    head: remoteBranch,
    base,
    draft: automation.config.pr_draft,
  });
  crashPoint('delivery-pr-opened');
  return created;
}

/**
 * `deliver = "head"`: the agent's commits go back to the pull request's own branch, fast-forward
 * only, when that branch is in this repository. A fork's branch is never pushed to: the commits stay
 * in the kept worktree and the run says so. Repeating it after a kill -9 pushes the same commit.
 */
async function deliverToHead(deps: DeliveryDeps, request: DeliveryRequest): Promise<DeliveryResult> {
  const { automation, task, run, cwd, branch } = request;
  const source = codeSource(automation.config, task, automation.trigger);
  if (source.kind !== 'pr_head')
    return { kind: 'failed', reason: 'deliver = "head" needs a pull request and worktree_from = "head"' };
  const fields = { automation: automation.id, run: run.id, branch, number: source.number };
  try {
    const sha = await branchTip(cwd, branch);
    const tracking = `pull/${source.number}/head`;
    const start = run.headCommit ?? null;
    if (!sha || sha === start || (await containedIn(cwd, sha, tracking))) return { kind: 'no-changes' };
    if (source.fromFork || !source.headRef)
      return {
        kind: 'not-pushed',
        reason: `not pushed: pull request #${source.number}'s branch is in a fork, which curupira never pushes to; the commits are kept in the worktree`,
      };
    const held = await review(request, `refs/remotes/origin/${tracking}`, sha);
    if (held) {
      deps.log.warn({ ...fields, findings: held.findings.length }, 'Delivery held for a person');
      return held;
    }
    await pushBranch({
      cwd,
      remote: automation.repository.remote,
      branch,
      remoteBranch: source.headRef,
      ...(deps.tokens ? { tokens: deps.tokens } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    });
    deps.log.info({ ...fields, remoteBranch: source.headRef, sha }, "Pushed to the pull request's branch");
    return { kind: 'pushed-head', branch: source.headRef, sha, number: source.number };
  } catch (error) {
    const reason = `could not push to pull request #${source.number}'s branch ${source.headRef ?? ''}: ${errorMessage(error)}`;
    deps.log.warn({ ...fields, error: errorMessage(error) }, 'Delivery failed');
    return { kind: 'failed', reason };
  }
}

async function withRetries<T>(deps: DeliveryDeps, action: () => Promise<T>): Promise<T> {
  const delays = deps.retryDelaysMs ?? [2000, 5000];
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await action();
    } catch (error) {
      const wait = delays[attempt];
      if (wait === undefined) throw error;
      deps.log.info(
        { error: errorMessage(error), attempt: attempt + 1 },
        'Opening the pull request failed; trying again',
      );
      await deps.clock.sleep(wait);
    }
  }
}
