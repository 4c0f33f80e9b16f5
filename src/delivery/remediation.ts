/**
 * The remediator (issue 13): when a follow-up step (src/delivery/steps/) finds that a delivered pull
 * request needs the agent again — reviewers asked for changes, checks fail, the branch conflicts —
 * it hands a `RemediationRequest` to `remediate`, which starts a remediation run:
 *
 * - a NEW run in the ledger, of the delivery's automation and item, whose `upstreamRunId` is the
 *   delivery's run (that is how `runs`, `runs show` and the executor tell a remediation);
 * - it resumes the delivery's agent session (the delivery run's `sessionId`; after a remediation, the
 *   newest one, kept in the `session` mark) in the delivery's kept worktree if it is still there,
 *   else in one recreated from the pull request's head branch, fetched (never a fresh branch);
 * - its prompt is the request's `instructions` (curupira's words) followed by each `untrusted`
 *   block fenced as data (src/prompt/fence.ts, one nonce per run);
 * - on success it pushes to the same branch (src/delivery/push.ts: never forced), moves the
 *   delivery's `headSha` and marks that head as curupira's own (`ownHeadMark`). The delivery row
 *   stays the one followed: no second pull request, no second row.
 *
 * Marks (pull_request_marks of the delivery):
 *
 * | key | value |
 * | --- | --- |
 * | `action` | the action in flight: JSON `{ key, runId, request, sessionId, attempt, unstarted? }`, set before the run starts, removed when it is done |
 * | `handled:<key>` | the run that answered `key` (a key is never remediated twice) |
 * | `rounds` | JSON `{ count, head }`: budgeted remediations started since `head`, the last head not curupira's own |
 * | `session` | the newest agent session id of the delivery |
 * | `exhausted` | the `rounds.head` whose spent budget was already told (one comment, one `needs_human`) |
 * | `own-head:<sha>` | a head curupira pushed (`ownHeadMark`) |
 *
 * Scheduling: `execute` is the engine's scheduler (src/engine/remediations.ts): the run waits
 * for a slot of `max_active_tasks` and for the item's lock (never beside another run of the item),
 * and not while its automation is paused or parked. Meanwhile it is `live` here, so the follower
 * does not ask for it twice. An engine that stops (or drains) before it started answers
 * `undefined`: the action stays in flight, marked `unstarted`, and the next start runs it as the
 * same attempt. A run an operator cancelled (`curupira cancel`, the board) counts as the answer of
 * its key (marked handled): it is not started again; a new review, a new failing head or a push
 * asks again.
 *
 * Crash safety: the `action` mark is written before the run starts; a process killed while it is in
 * flight leaves it, and the next look at the pull request (`resumeInFlight`, the first follow-up
 * step) pushes what a finished run left unpushed, or starts the action once more (attempt 2) when
 * its run was cut short; a second cut gives the key up (marked handled). The engine's own restart
 * recovery never runs it again: the item's open delivery holds its saved session back, and a
 * remediation run finished after a restart never delivers (src/engine/run/complete.ts).
 */

import type { ResolvedAutomation } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { NO_NEW_COMMIT_REASON } from '../core/outcome.js';
import { taskOfRun } from '../core/task-fields.js';
import type { RunRecord, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import type { Logger } from '../log.js';
import { crashPoint } from '../process/crash-point.js';
import { createFence } from '../prompt/fence.js';
import { capText } from '../prompt/untrusted.js';
import type { PullRequestRecord, Store } from '../store/types.js';
import { git } from '../workspace/git.js';
import { originUrl, prepareHeadWorktree, remoteRepoName } from '../workspace/head-worktree.js';
import { ensureCheckout } from '../workspace/index.js';
import { worktreePath } from '../workspace/paths.js';
import { pathExists } from '../workspace/remove.js';
import type { FollowContext, StepOutcome } from './follow.js';
import { getPullRequest } from './pull-request.js';
import { branchTip, pushBranch } from './push.js';
import {
  ownHeadMark,
  type RemediationRequest,
  type RemediationResult,
  type RemediationRun,
} from './remediation-types.js';
import { deliveryRunId, repositoryOfDelivery } from './repositories.js';
import { heldReason, reviewDelivery, reviewFailure } from './review.js';

export const DEFAULT_REMEDIATION_BUDGET = 2;

/** The mark keys of the remediator (see the module comment). */
export const REMEDIATION_MARKS = {
  action: 'action',
  rounds: 'rounds',
  session: 'session',
  exhausted: 'exhausted',
  handled: (key: string) => `handled:${key}`,
} as const;

/** The action in flight of one delivery (the `action` mark). */
export interface InFlightAction {
  key: string;
  /** The remediation run, once created (null before). */
  runId: string | null;
  request: RemediationRequest;
  sessionId: string;
  /** 1, or 2 when it was started again after its run was cut short. */
  attempt: number;
  /** The engine stopped while it waited for its turn: no run was made, the next start is the same attempt. */
  unstarted?: boolean;
}

interface Rounds {
  count: number;
  /** The last head that was not curupira's own (a human push starts the count again). */
  head: string | null;
}

export interface RemediatorDeps {
  store: Store;
  log: Logger;
  clock: Clock;
  github: GitHubClient;
  tokens?: TokenSource;
  /** The engine's environment: its secret-looking values count as secrets in the review. */
  env?: NodeJS.ProcessEnv;
  automation(id: string): ResolvedAutomation | undefined;
  /**
   * Runs a remediation (the engine: through its scheduler, then `executeTask`); `onRun` sees the
   * run record as soon as it exists. Undefined: it never started (the engine stopped or drained
   * while it waited for its turn).
   */
  execute(
    automation: ResolvedAutomation,
    task: Task,
    remediation: RemediationRun,
    onRun: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined>;
  /** True while the engine stops: a run cut short by it stays in flight for the next start. */
  stopping?(): boolean;
}

export type InFlightState = 'none' | 'running' | 'resumed' | 'settled';

export interface Remediator {
  remediate(record: PullRequestRecord, request: RemediationRequest): Promise<RemediationResult>;
  /**
   * The delivery's action in flight: `running` here, `resumed` (its run started again after a
   * restart), `settled` (a stopped process left it: its push was done and it is handled now), or
   * `none`.
   */
  resumeInFlight(record: PullRequestRecord): Promise<InFlightState>;
  /** Resolves when no remediation of this process runs. */
  idle(): Promise<void>;
}

function parse<T>(value: string | undefined): T | undefined {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as T;
  } catch {
    return undefined;
  }
}

/** The prompt of a remediation: curupira's instructions, then each text from GitHub fenced. */
export function remediationPrompt(request: RemediationRequest, branch: string): string {
  const fence = createFence();
  const blocks = request.untrusted
    .filter((block) => block.text.trim() !== '')
    .map((block) => fence.fence(capText(block.text), block.label));
  return [
    request.instructions.trim(),
    ...blocks,
    `Work in this worktree, on the branch \`${branch}\` of the pull request, and commit your changes there. curupira pushes the branch to the pull request when you are done: do not push, rebase or rewrite its history yourself.`,
  ].join('\n\n');
}

/** Why the checkout cannot remediate `repo`'s pull request (its origin is another repository), if so. */
export async function originProblem(
  automation: ResolvedAutomation,
  repo: string,
): Promise<string | undefined> {
  const origin = await originUrl(automation.repository.checkoutPath);
  if (origin === null) return `the checkout ${automation.repository.checkoutPath} has no origin`;
  const settings = automation.repository.remote;
  const want = repo.toLowerCase();
  for (const [what, url] of [
    ['origin', origin],
    ['remote', settings],
  ] as const) {
    const named = remoteRepoName(url);
    if (named !== undefined && named.toLowerCase() !== want)
      return `the checkout's ${what} is ${named}, not the pull request's repository ${repo}`;
  }
  // A local remote (a mirror, the simulator's bare repository) names no repository: then the
  // checkout's origin must be the settings' own remote.
  const local = (url: string) => url.replace(/^file:\/\//, '').replace(/\/+$/, '');
  if (remoteRepoName(origin) === undefined && local(origin) !== local(settings))
    return `the checkout's origin ${origin} is not the repository's remote ${settings}`;
  return undefined;
}

export function createRemediator(deps: RemediatorDeps): Remediator {
  const { store, log } = deps;
  /**
   * The automation as the delivery's repository sees it: a multi-repository task's additional
   * repository (repositories.ts) takes the primary's place, so its checkout, worktree and remote
   * are the ones used.
   */
  const automationFor = (record: PullRequestRecord): ResolvedAutomation | undefined => {
    const automation = deps.automation(record.automationId);
    if (!automation || deliveryRunId(record.runId) === record.runId) return automation;
    const repository = repositoryOfDelivery(automation, record.runId);
    return repository ? { ...automation, repository } : undefined;
  };
  /** Remediations running in this process, by delivery (run id of the delivery). */
  const live = new Map<string, Promise<void>>();

  const readAction = async (record: PullRequestRecord): Promise<InFlightAction | undefined> =>
    parse<InFlightAction>((await store.getPullRequestMark(record.runId, REMEDIATION_MARKS.action))?.value);
  const writeAction = (record: PullRequestRecord, action: InFlightAction) =>
    store.setPullRequestMark(record.runId, REMEDIATION_MARKS.action, JSON.stringify(action));

  /** Marks the action's key handled by `runId` and clears the action (in that order). */
  const settle = async (record: PullRequestRecord, action: InFlightAction, run: RunRecord | undefined) => {
    await store.setPullRequestMark(record.runId, REMEDIATION_MARKS.handled(action.key), run?.id ?? '');
    if (run?.sessionId)
      await store.setPullRequestMark(record.runId, REMEDIATION_MARKS.session, run.sessionId);
    await store.deletePullRequestMark(record.runId, REMEDIATION_MARKS.action);
  };

  /** Pushes the run's branch (fast-forward only) and records the new head as curupira's own. */
  const pushHead = async (
    automation: ResolvedAutomation,
    record: PullRequestRecord,
    cwd: string,
    localBranch: string = record.headBranch,
  ): Promise<{ failed?: string; note?: string; held?: string }> => {
    const sha = await branchTip(cwd, localBranch);
    if (!sha) return { failed: `the branch ${localBranch} is gone from the worktree` };
    const current = await store.getPullRequest(record.runId);
    if (current?.headSha === sha) return { note: NO_NEW_COMMIT_REASON };
    // The new commits only: what was pushed before was reviewed then (or pushed by a person).
    try {
      const findings = await reviewDelivery({
        cwd,
        from: current?.headSha ?? `refs/remotes/origin/${record.baseBranch ?? 'HEAD'}`,
        to: sha,
        allow: automation.config.allow_config_edits,
        ...(deps.env ? { env: deps.env } : {}),
      });
      if (findings.length > 0) return { held: heldReason(findings, record.headBranch) };
    } catch (error) {
      return { held: reviewFailure(error) };
    }
    crashPoint('remediation-pushing');
    // Own before the push: a crash after it leaves the pushed head known as ours (`recover` moves
    // `headSha` to it), never ours taken for a human's.
    await store.setPullRequestMark(record.runId, ownHeadMark(sha), 'pushed');
    try {
      await pushBranch({
        cwd,
        remote: automation.repository.remote,
        branch: localBranch,
        remoteBranch: record.headBranch,
        ...(deps.tokens ? { tokens: deps.tokens } : {}),
      });
    } catch (error) {
      return {
        failed: `could not push ${record.headBranch} to pull request #${record.number}: ${errorMessage(error)}`,
      };
    }
    crashPoint('remediation-push-done');
    await store.updatePullRequest(record.runId, { headSha: sha });
    crashPoint('remediation-pushed');
    log.info({ run: record.runId, number: record.number, sha }, 'Pushed a remediation to the pull request');
    return {};
  };

  /**
   * A finished run whose worktree is gone pushed before the process died, maybe before `headSha`
   * moved: the pull request's head, when it is one curupira pushed, becomes the delivery's head.
   */
  const notePushedHead = async (record: PullRequestRecord): Promise<{ failed?: string }> => {
    if (record.number === null) return {};
    const head = (await getPullRequest(deps.github, record.repo, record.number)).head.sha;
    const current = await store.getPullRequest(record.runId);
    if (head !== current?.headSha && (await store.getPullRequestMark(record.runId, ownHeadMark(head))))
      await store.updatePullRequest(record.runId, { headSha: head });
    return {};
  };

  /** Starts (in the background) the run of `action`, after preparing its worktree. */
  const start = async (record: PullRequestRecord, action: InFlightAction): Promise<void> => {
    const automation = automationFor(record);
    const delivery = await store.getRun(deliveryRunId(record.runId));
    if (!automation || !delivery) throw new Error(`the delivery of run ${record.runId} has no automation`);
    await ensureCheckout({
      alias: automation.repository.alias,
      remote: automation.repository.remote,
      path: automation.repository.checkoutPath,
      timeoutMs: 5 * 60_000,
      log,
    });
    const path =
      (deliveryRunId(record.runId) === record.runId ? delivery.worktreePath : null) ??
      worktreePath(automation.repository.checkoutPath, automation.id, delivery.taskType, delivery.itemId);
    const worktree = await prepareHeadWorktree({
      checkoutPath: automation.repository.checkoutPath,
      path,
      branch: record.headBranch,
      ...(delivery.branch ? { localBranch: delivery.branch } : {}),
      log,
    });
    // The base too, as origin/<base>: the agent merges it without the network (a sandboxed run has
    // none but its allow-list), and sees the base as it is now.
    if (record.baseBranch)
      await git(
        [
          'fetch',
          '--quiet',
          'origin',
          `+refs/heads/${record.baseBranch}:refs/remotes/origin/${record.baseBranch}`,
        ],
        { cwd: automation.repository.checkoutPath },
      );
    const remediation: RemediationRun = {
      sessionId: action.sessionId,
      prompt: remediationPrompt(action.request, record.headBranch),
      worktree: { path: worktree.path, branch: worktree.branch },
      deliveryRunId: record.runId,
      ...(record.baseBranch ? { baseBranch: record.baseBranch } : {}),
      push: (run) => pushHead(automation, record, run.worktreePath ?? worktree.path, worktree.branch),
    };
    let noted = false;
    const onRun = (run: RunRecord): void => {
      if (noted) return;
      noted = true;
      void writeAction(record, { ...action, runId: run.id }).catch((error: unknown) => {
        log.warn({ run: run.id, error: errorMessage(error) }, 'Could not record the remediation in flight');
      });
    };
    const running = (async () => {
      let run: RunRecord | undefined;
      try {
        run = await deps.execute(automation, taskOfRun(delivery), remediation, onRun);
        if (!run) {
          // Never started: in flight still, and the next start runs it (as the same attempt).
          await writeAction(record, { ...action, unstarted: true });
          log.info(
            { delivery: record.runId, key: action.key },
            'Remediation not started: the engine stopped',
          );
          return;
        }
        // The run id is known for sure now (onRun's write may still be on its way).
        await writeAction(record, { ...action, runId: run.id });
        crashPoint('remediation-finished');
        if (run.status === 'cancelled' && deps.stopping?.()) return; // the next start takes it up
        await settle(record, action, run);
        log.info(
          { run: run.id, delivery: record.runId, number: record.number, key: action.key, status: run.status },
          'Remediation finished',
        );
      } catch (error) {
        log.warn(
          { delivery: record.runId, key: action.key, error: errorMessage(error) },
          'Remediation failed',
        );
        if (!deps.stopping?.()) await settle(record, action, run).catch(() => undefined);
      }
    })().finally(() => live.delete(record.runId));
    live.set(record.runId, running);
  };

  /**
   * An action left in flight by a process that is gone: its finished run's push is done, or a run
   * cut short is started once more; returns true when an action was started again.
   */
  const recover = async (record: PullRequestRecord, action: InFlightAction): Promise<boolean> => {
    const run = action.runId ? await store.getRun(action.runId) : undefined;
    const automation = automationFor(record);
    if (run?.status === 'succeeded' && automation) {
      // Its worktree is gone when the push was done (nothing was left unpushed to keep it).
      const pushed =
        run.worktreePath && (await pathExists(run.worktreePath))
          ? await pushHead(automation, record, run.worktreePath, run.branch ?? record.headBranch)
          : await notePushedHead(record);
      if (pushed.failed) {
        log.warn({ run: run.id, reason: pushed.failed }, 'Could not push a remediation after a restart');
        await store.updateRun(run.id, { status: 'failed', reason: pushed.failed });
      }
      await settle(record, action, run);
      return false;
    }
    const cutShort = run === undefined || run.status === 'cancelled' || !run.finishedAt;
    // One that never started (the engine stopped while it waited its turn) keeps its attempt.
    const unstarted = action.unstarted === true && run === undefined;
    if (!cutShort || (action.attempt >= 2 && !unstarted) || !automation) {
      await settle(record, action, run);
      return false;
    }
    const { unstarted: _unstarted, ...rest } = action;
    const again: InFlightAction = {
      ...rest,
      runId: null,
      attempt: unstarted ? action.attempt : action.attempt + 1,
      sessionId: run?.sessionId ?? action.sessionId,
    };
    await writeAction(record, again);
    log.info(
      { delivery: record.runId, key: action.key, run: run?.id },
      'Starting an interrupted remediation again',
    );
    try {
      await start(record, again);
    } catch (error) {
      // Nothing started (the fetch failed, say): the next look tries this attempt again.
      await writeAction(record, action);
      throw error;
    }
    return true;
  };

  const readRounds = async (record: PullRequestRecord): Promise<Rounds> =>
    parse<Rounds>((await store.getPullRequestMark(record.runId, REMEDIATION_MARKS.rounds))?.value) ?? {
      count: 0,
      head: null,
    };

  return {
    async remediate(record, request) {
      if (live.has(record.runId)) return 'busy';
      const inFlight = await readAction(record);
      if (inFlight) {
        if (await recover(record, inFlight)) return inFlight.key === request.key ? 'started' : 'busy';
      }
      if (await store.getPullRequestMark(record.runId, REMEDIATION_MARKS.handled(request.key)))
        return 'handled';
      const automation = automationFor(record);
      const delivery = await store.getRun(deliveryRunId(record.runId));
      const fields = { delivery: record.runId, number: record.number, key: request.key };
      if (!automation || !delivery || record.number === null) return 'refused';
      const problem = await originProblem(automation, record.repo);
      if (problem) {
        log.warn({ ...fields, reason: problem }, 'Remediation refused');
        return 'refused';
      }
      const sessionId =
        (await store.getPullRequestMark(record.runId, REMEDIATION_MARKS.session))?.value ||
        delivery.sessionId;
      if (!sessionId || delivery.provider !== automation.profile.provider) {
        log.warn({ ...fields }, 'Remediation refused: no agent session of this provider to resume');
        return 'refused';
      }
      let rounds = await readRounds(record);
      if (request.budgeted) {
        const head = (await getPullRequest(deps.github, record.repo, record.number)).head.sha;
        const own =
          head === record.headSha ||
          (await store.getPullRequestMark(record.runId, ownHeadMark(head))) !== undefined;
        if (!own && head !== rounds.head) rounds = { count: 0, head };
        const budget = automation.config.remediation_budget ?? DEFAULT_REMEDIATION_BUDGET;
        if (rounds.count >= budget) {
          await store.setPullRequestMark(record.runId, REMEDIATION_MARKS.rounds, JSON.stringify(rounds));
          return 'exhausted';
        }
        rounds = { ...rounds, count: rounds.count + 1 };
      }
      const action: InFlightAction = { key: request.key, runId: null, request, sessionId, attempt: 1 };
      await writeAction(record, action);
      crashPoint('remediation-action-set');
      if (request.budgeted)
        await store.setPullRequestMark(record.runId, REMEDIATION_MARKS.rounds, JSON.stringify(rounds));
      try {
        await start(record, action);
      } catch (error) {
        // Nothing ran: the round is given back and the request may come again.
        await store.deletePullRequestMark(record.runId, REMEDIATION_MARKS.action);
        if (request.budgeted)
          await store.setPullRequestMark(
            record.runId,
            REMEDIATION_MARKS.rounds,
            JSON.stringify({ ...rounds, count: rounds.count - 1 }),
          );
        throw error;
      }
      log.info({ ...fields, session: sessionId }, 'Remediation started');
      crashPoint('remediation-started');
      return 'started';
    },
    async resumeInFlight(record) {
      if (live.has(record.runId)) return 'running';
      const action = await readAction(record);
      if (!action) return 'none';
      return (await recover(record, action)) ? 'resumed' : 'settled';
    },
    async idle() {
      while (live.size > 0) await Promise.all([...live.values()]);
    },
  };
}

export function exhaustedComment(budget: number): string {
  return `**curupira**: this pull request used its ${budget} remediation round${budget === 1 ? '' : 's'} (\`remediation_budget\`), so curupira stopped answering reviews and failing checks on its own. A person takes it from here; a push to the branch by someone else gives curupira its rounds back.`;
}

/**
 * What a step does when `remediate` answered `exhausted`: the gate `needs_human`, and once per
 * spent budget (the `exhausted` mark) one marked comment on the pull request and `needs_human`.
 */
export async function noteExhausted(context: FollowContext, cause: string): Promise<StepOutcome> {
  const { deps, queue, record } = context;
  const budget = deps.config?.(record.automationId)?.remediation_budget ?? DEFAULT_REMEDIATION_BUDGET;
  const rounds = parse<Rounds>(
    (await deps.store.getPullRequestMark(record.runId, REMEDIATION_MARKS.rounds))?.value,
  );
  const epoch = rounds?.head ?? record.headSha ?? '';
  const told = await deps.store.getPullRequestMark(record.runId, REMEDIATION_MARKS.exhausted);
  const detail = `${cause}; remediation budget spent (${budget} round${budget === 1 ? '' : 's'}): a person takes it from here`;
  if (told?.value !== epoch) {
    await queue.enqueue({
      marker: `remediation-exhausted run=${record.runId}`,
      repo: record.repo,
      number: record.number!,
      runId: record.runId,
      write: { kind: 'comment', body: exhaustedComment(budget) },
    });
    const run = await deps.store.getRun(record.runId);
    deps.notify?.({
      event: 'needs_human',
      id: `pr:${record.runId}:exhausted:${epoch}`,
      automation: record.automationId,
      summary: `${record.automationId}: pull request ${record.repo}#${record.number} spent its remediation budget (${cause}); a person takes it from here`,
      ...(run ? { run } : {}),
      details: { pull_request: record.number, url: record.url, budget, cause },
    });
    await deps.store.setPullRequestMark(record.runId, REMEDIATION_MARKS.exhausted, epoch);
  }
  return { gate: 'needs_human', detail };
}
