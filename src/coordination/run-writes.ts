/**
 * What a run writes to GitHub, through the write queue (src/github/write-queue.ts). Strictly
 * opt-in: with none of the keys its writers declare (`githubWriters`, src/github/writers.ts) the
 * engine builds none of this and sends no write request.
 *
 * `result_comment`: one result comment per run on the item (issues and pull requests only), marked
 * `<!-- curupira:result run=<id> -->`; the same run reporting again (a resumed or recovered run)
 * edits that comment instead of posting another. Escalation, the run log and the repair sweep
 * (src/coordination/) queue their writes through `forItem` and `queue`.
 */

import type { AnyAutomation, Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { formatInputs, formatResult } from '../core/result-line.js';
import { isFailure, type RunRecord, type Task } from '../core/types.js';
import { deliveryRunId } from '../delivery/repositories.js';
import { createGitHubClient, type GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import { code, type RunWrites, runDuration } from '../github/write-port.js';
import { type ServiceWriteSender, WriteQueue } from '../github/write-queue.js';
import { declareWriter, type GitHubWriter, type SettingsWideKey, writesWanted } from '../github/writers.js';
import type { Logger } from '../log.js';
import type { GitHubWrite, PullRequestRecord, Store, WriteInit } from '../store/types.js';
import { isPullRequestItem, numberedItem } from '../triggers/registry.js';
import { itemTextDigest } from './budget.js';
import { ESCALATION_WRITER, failuresMarker, predictFailures } from './escalation.js';
import { LEASE_WRITER } from './lease.js';
import { RUN_LOG_WRITER } from './run-log.js';

export type { RunWrites };

/** `result_comment = true`: one result comment per run on its item. */
export const RESULT_COMMENT_WRITER = declareWriter({ feature: 'result comment', keys: ['result_comment'] });

/** `status_label`, `failed_label`, `blocked_label`: the labels of a run's state on its item. */
export const STATE_LABELS_WRITER = declareWriter({
  feature: 'state labels',
  keys: ['status_label', 'failed_label', 'blocked_label'],
});

/** `handoffs`: the labels each reported outcome puts on and takes off the item (issue 32). */
export const HANDOFF_WRITER = declareWriter({ feature: 'outcome handoffs', keys: ['handoffs'] });

/** `trusted_label`: the label of an item screening found vouched for (issue 32, seed 001). */
export const TRUSTED_LABEL_WRITER = declareWriter({ feature: 'trusted label', keys: ['trusted_label'] });

/** `human_reviewer`: people asked to review each delivered pull request (issue 32, seed 001). */
export const HUMAN_REVIEWER_WRITER = declareWriter({
  feature: 'human reviewer',
  keys: ['human_reviewer'],
  settingsWide: ['human_reviewer'],
});

/**
 * Every feature that writes through the queue, each declared beside its keys. A function, not a
 * constant: the coordination modules import this one, so their declarations are read at call time.
 */
export function githubWriters(): readonly GitHubWriter[] {
  return [
    RESULT_COMMENT_WRITER,
    STATE_LABELS_WRITER,
    HANDOFF_WRITER,
    TRUSTED_LABEL_WRITER,
    HUMAN_REVIEWER_WRITER,
    LEASE_WRITER,
    ESCALATION_WRITER,
    RUN_LOG_WRITER,
  ];
}

/**
 * True when any automation turns on a declared writer: only then does the engine build `RunWrites`.
 * `execution` carries the settings-wide defaults (`escalated_label`, `run_log`, `lease_ttl`).
 */
export function wantsGitHubWrites(
  automations: readonly AnyAutomation[],
  execution?: Partial<Pick<Settings['execution'], SettingsWideKey>>,
): boolean {
  return (
    writesWanted(githubWriters(), automations, execution) ||
    automations.some((automation) => automation.trigger.writeBack?.wanted(automation as never) === true)
  );
}

/** The label writes of a run's end: the status label off, the exit label on (or the failed one off). */
export function exitLabelWrites(
  automation: AnyAutomation,
  run: RunRecord,
): { marker: string; write: GitHubWrite }[] {
  const { status_label: status, failed_label: failed, blocked_label: blocked } = automation.config;
  const out: { marker: string; write: GitHubWrite }[] = [];
  if (status)
    out.push({ marker: `status run=${run.id} step=remove`, write: { kind: 'remove-label', label: status } });
  const add = (name: string, description: string) =>
    out.push({
      marker: `exit run=${run.id}`,
      write: { kind: 'add-labels', labels: [{ name, description }] },
    });
  if (failed && isFailure(run.status)) {
    add(failed, 'curupira: the last run on this item failed');
  } else if (failed && run.status === 'succeeded') {
    out.push({ marker: `exit run=${run.id}`, write: { kind: 'remove-label', label: failed } });
  } else if (blocked && run.status === 'blocked') {
    add(blocked, 'curupira: screening held this item for a person to look at');
  }
  out.push(...handoffWrites(automation, run));
  return out;
}

/**
 * The handoff of a run's reported outcome (`handoffs.<outcome>`): its labels taken off, then put
 * on, each one write with its own marker, so a run reporting again writes nothing twice.
 */
export function handoffWrites(
  automation: AnyAutomation,
  run: RunRecord,
  pullRequest = isPullRequestItem(run.taskType),
): { marker: string; write: GitHubWrite }[] {
  const outcome = run.result?.outcome;
  const handoff = outcome === undefined ? undefined : automation.config.handoffs?.[outcome];
  if (!handoff) return [];
  const description = `curupira: set when '${automation.id}' reports ${outcome}`;
  const out: { marker: string; write: GitHubWrite }[] = [];
  // Taken off first: an item never carries both the label this step watches and the next one's, so
  // a poll between the two writes cannot offer it to this step again as a changed item.
  for (const [i, label] of handoff.remove_labels.entries())
    out.push({ marker: `handoff run=${run.id} step=remove n=${i}`, write: { kind: 'remove-label', label } });
  if (handoff.add_labels.length > 0)
    out.push({
      marker: `handoff run=${run.id} step=add`,
      write: { kind: 'add-labels', labels: handoff.add_labels.map((name) => ({ name, description })) },
    });
  // The verdict as a pull-request review (a review step's `approve` → APPROVE), once per run.
  if (handoff.review && pullRequest && run.result)
    out.push({
      marker: `handoff run=${run.id} step=review`,
      write: {
        kind: 'review',
        event: handoff.review,
        body: `**curupira** automation ${code(automation.id)} (run ${code(run.id)}): ${code(formatResult(run.result))}`,
      },
    });
  return out;
}

/** True when screening found the run's item vouched for (its author, or its labels' labelers, trusted). */
export function vouched(run: Pick<RunRecord, 'screeningReason'>): boolean {
  return run.screeningReason?.startsWith('vouched (') === true;
}

/** The people and teams asked to review a delivered pull request (`org/team` → the team's slug). */
export function reviewersOf(names: readonly string[]): { reviewers: string[]; teamReviewers: string[] } {
  const clean = names.map((n) => n.replace(/^@/, ''));
  return {
    reviewers: clean.filter((n) => !n.includes('/')),
    teamReviewers: clean.filter((n) => n.includes('/')).map((n) => n.slice(n.indexOf('/') + 1)),
  };
}

export function resultMarker(runId: string): string {
  return `result run=${runId}`;
}

/**
 * A task across repositories' deliveries in one row: every pull request (or pushed branch) the run
 * made, its primary's first; undefined for one delivery or none (the reason names it).
 */
function deliveriesRow(deliveries: readonly PullRequestRecord[]): string | undefined {
  if (deliveries.length < 2) return undefined;
  return deliveries
    .map((d) =>
      d.number === null
        ? `${d.repo} (branch ${code(d.headBranch)})`
        : `${d.repo}#${d.number}${d.url ? ` ${d.url}` : ''}`,
    )
    .join(', ');
}

/**
 * The branch a reader can find: the one a delivery pushed (the run's own branch is a local name,
 * deleted once pushed), else the run's. A task delivered to several repositories names each in its
 * pull requests' row.
 */
function branchRow(run: RunRecord, deliveries: readonly PullRequestRecord[]): string | undefined {
  if (deliveries.length > 1) return undefined;
  const branch = deliveries[0]?.headBranch ?? run.branch;
  return branch ? code(branch) : undefined;
}

/**
 * The result comment's body (the queue adds the hidden marker and redacts it). `deliveries`: the
 * run's delivery records; a task across repositories lists every one.
 */
export function resultCommentBody(
  automation: AnyAutomation,
  run: RunRecord,
  deliveries: readonly PullRequestRecord[] = [],
): string {
  const lines = [
    `**curupira** run ${code(run.id)} of automation ${code(automation.id)}: **${run.status}**`,
    '',
  ];
  const rows: [string, string | undefined][] = [
    ['Outcome', run.result ? code(formatResult(run.result)) : undefined],
    ['Inputs', run.inputs ? code(formatInputs(run.inputs)) : undefined],
    ['Reason', run.reason ? code(run.reason) : undefined],
    ['Duration', runDuration(run)],
    ['Branch', branchRow(run, deliveries)],
    ['Pull requests', deliveriesRow(deliveries)],
    ['Commits', run.commits > 0 ? String(run.commits) : undefined],
    ['Kept worktree', run.worktreeKept && run.worktreePath ? code(run.worktreePath) : undefined],
    ['Tokens', run.usage ? `${run.usage.inputTokens} in, ${run.usage.outputTokens} out` : undefined],
    ['Transcript', code(`curupira runs show ${run.id}`)],
  ];
  for (const [name, value] of rows) if (value !== undefined) lines.push(`- ${name}: ${value}`);
  return lines.join('\n');
}

export interface RunWritesOptions {
  store: Store;
  /** REST base URL (the engine's client's `apiUrl`). */
  apiUrl: string;
  tokens: TokenSource;
  clock: Clock;
  log: Logger;
  signal?: AbortSignal;
  /** For tests: the client to write with (default one with `maxAttempts: 1`, see write-queue.ts). */
  client?: GitHubClient;
  paceMs?: number;
  /** Waits after each failed attempt (default the queue's, WRITE_BACKOFF_MS). */
  backoffMs?: readonly number[];
  /** Sends the writes to items outside GitHub (a trigger's `writeBack`). */
  sendServiceWrite?: ServiceWriteSender;
  /** The settings in force (the `[settings]` defaults such as `human_reviewer`). */
  settings?: () => Settings;
}

export function createRunWrites(options: RunWritesOptions): RunWrites {
  const { log } = options;
  const client =
    options.client ??
    createGitHubClient({
      apiUrl: options.apiUrl,
      tokens: options.tokens,
      clock: options.clock,
      log,
      maxAttempts: 1,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  const queue = new WriteQueue({
    store: options.store,
    client,
    clock: options.clock,
    log,
    ...(options.paceMs === undefined ? {} : { paceMs: options.paceMs }),
    ...(options.backoffMs === undefined ? {} : { backoffMs: options.backoffMs }),
    ...(options.sendServiceWrite ? { sendServiceWrite: options.sendServiceWrite } : {}),
  });
  const quietly = async <T>(what: string, action: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await action();
    } catch (error) {
      log.warn({ error: errorMessage(error) }, `Could not ${what}`);
      return undefined;
    }
  };
  // One drain at a time: two at once could both miss a marker the other is about to post.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(action: () => Promise<T>): Promise<T> => {
    const next = chain.then(action, action);
    chain = next.catch(() => undefined);
    return next;
  };
  const drain = () => serial(() => quietly('send GitHub writes', () => queue.drain()));
  const target = (task: Task) => numberedItem(task.identity.taskType, task.identity.repo, task.identity.id);
  const enqueueAll = async (writes: readonly WriteInit[]) => {
    if (writes.length === 0) return;
    await quietly('queue GitHub writes', async () => {
      for (const w of writes) await queue.enqueue(w);
    });
    // Sent in the background; a failure stays queued for the next drain or flush.
    void drain();
  };
  const enqueue = async (task: Task, run: RunRecord, writes: { marker: string; write: GitHubWrite }[]) => {
    const item = target(task);
    if (item) await enqueueAll(writes.map((w) => ({ ...item, runId: run.id, ...w })));
  };
  // A task across repositories: the run's deliveries, the primary's (keyed by the run id) first.
  const deliveriesOf = async (run: RunRecord): Promise<PullRequestRecord[]> =>
    (
      (await quietly('read the run’s deliveries', () =>
        options.store.listPullRequests({ taskKey: run.taskKey }),
      )) ?? []
    )
      .filter((d) => deliveryRunId(d.runId) === run.id)
      .sort((a, b) => Number(b.runId === run.id) - Number(a.runId === run.id));
  const resultWrite = async (
    automation: AnyAutomation,
    task: Task,
    run: RunRecord,
  ): Promise<{ marker: string; write: GitHubWrite }[]> => {
    if (automation.config.result_comment !== true) return [];
    // The failure count after this run travels with it, for other hosts (escalation.ts).
    const failures = await quietly('count failures', () => predictFailures(options.store, task, run));
    const hidden =
      failures === undefined ? '' : `\n\n${failuresMarker(automation.id, failures, itemTextDigest(task))}`;
    const body = `${resultCommentBody(automation, run, await deliveriesOf(run))}${hidden}`;
    return [{ marker: resultMarker(run.id), write: { kind: 'comment', body } }];
  };
  /** `human_reviewer`: the pull request this run delivered gets its reviewers asked, once. */
  const reviewerWrites = async (automation: AnyAutomation, run: RunRecord): Promise<WriteInit[]> => {
    const names = automation.config.human_reviewer ?? options.settings?.().execution.human_reviewer;
    if (!names || names.length === 0) return [];
    const delivered = await quietly('read the delivered pull request', () =>
      options.store.getPullRequest(run.id),
    );
    if (delivered?.delivery !== 'pr' || delivered.number === null) return [];
    return [
      {
        repo: delivered.repo,
        number: delivered.number,
        runId: run.id,
        marker: `reviewers run=${run.id}`,
        write: { kind: 'request-reviewers', ...reviewersOf(names) },
      },
    ];
  };
  return {
    async started(automation, task, run) {
      const writes: { marker: string; write: GitHubWrite }[] = [];
      const label = automation.config.status_label;
      if (label)
        writes.push({
          marker: `status run=${run.id} step=add`,
          write: {
            kind: 'add-labels',
            labels: [
              { name: label, description: `curupira: automation ${automation.id} is working on this item` },
            ],
          },
        });
      const trusted = automation.config.trusted_label;
      if (trusted && vouched(run))
        writes.push({
          marker: `trusted run=${run.id}`,
          write: {
            kind: 'add-labels',
            labels: [{ name: trusted, description: 'curupira: the author (or labeler) is trusted' }],
          },
        });
      if (writes.length > 0) await enqueue(task, run, writes);
    },
    async finished(automation, task, run) {
      const writes = exitLabelWrites(automation, run);
      writes.push(...(await resultWrite(automation, task, run)));
      await enqueue(task, run, writes);
      await enqueueAll(await reviewerWrites(automation, run));
      // Write-back to an item outside GitHub (a Linear issue), when its trigger has one and is asked.
      const back = automation.trigger.writeBack;
      if (back?.wanted(automation as never))
        await enqueueAll(
          back.writes(
            automation as never,
            task,
            run,
            resultCommentBody(automation, run, await deliveriesOf(run)),
          ),
        );
    },
    async queueEdit(item, runId, marker, body) {
      await queue.enqueue({ ...item, runId, marker, write: { kind: 'comment', body, editOnly: true } });
      void drain();
    },
    async resultChanged(automation, task, run) {
      await enqueue(task, run, await resultWrite(automation, task, run));
    },
    forItem: enqueue,
    queue: enqueueAll,
    drain,
    async flush(signal) {
      await serial(async () => {
        try {
          await queue.runUntilIdle(signal);
        } catch (error) {
          // Stopping ends the wait; what is left stays queued and goes out at the next start.
          if (!signal?.aborted) log.warn({ error: errorMessage(error) }, 'Could not send GitHub writes');
        }
      });
    },
  };
}
