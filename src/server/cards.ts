/**
 * Run cards and the pieces every page shares about a run: its status pill (coloured by its outcome
 * class, src/core/outcome.ts), a readable item name and branch, its duration, its pull request with
 * the gate, and only the actions that make sense for its state. Everything shown is escaped.
 */

import { type RunOutcomeClass, runOutcomeClass } from '../core/outcome.js';
import { formatResult } from '../core/result-line.js';
import {
  blockedByScreening,
  CALM_STATUSES,
  isTerminal,
  type RunRecord,
  type RunStatus,
} from '../core/types.js';
import { formatCost } from '../cost/prices.js';
import { deliveryRunId } from '../delivery/repositories.js';
import type { QueuedTask } from '../engine/types.js';
import { pendingNote } from '../retries/unattended.js';
import type { PullRequestGate, PullRequestRecord } from '../store/types.js';
import { runItemName } from '../triggers/registry.js';
import { duration } from './figures.js';
import { type Html, html } from './html.js';

/** `2026-03-01 10:00 UTC` in a `<time>`; `-` for nothing. */
export function when(value: string | null | undefined): Html {
  if (!value) return html`-`;
  return html`<time datetime="${value}">${value.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

/** A status in words: `timed out`, `merged`. */
export function statusWords(status: RunStatus): string {
  return status.replace(/_/g, ' ');
}

/** The status pill: its colour says the outcome class (success, failure, blocked…). */
export function statusPill(status: RunStatus, id?: string): Html {
  const cls: RunOutcomeClass = runOutcomeClass(status);
  return html`<span class="tag status pill outcome-${cls}"${id ? html` id="${id}"` : ''} data-outcome="${cls}">${statusWords(status)}</span>`;
}

/** A link only to an http(s) address (as GitHub gave it); else the plain text. */
export function safeLink(url: string | null | undefined, text: Html | string): Html {
  return url && /^https?:\/\//i.test(url)
    ? html`<a href="${url}" rel="noreferrer">${text}</a>`
    : html`${text}`;
}

/**
 * What the item is called on a card: its title and `#number` for a GitHub item; for an item with no
 * page (a schedule's fire, a chain's upstream run) what its trigger calls it.
 */
export function itemName(run: RunRecord): { title: string; ref: string } {
  if (/^\d+$/.test(run.itemId) && /^https?:\/\//i.test(run.itemUrl))
    return { title: run.itemTitle, ref: `${run.repo}#${run.itemId}` };
  return { title: run.itemTitle, ref: runItemName(run) };
}

/** A branch short enough for a card: the start and the end kept, the middle elided (the full name in `title`). */
export function readableBranch(branch: string, max = 40): string {
  if (branch.length <= max) return branch;
  const head = Math.ceil((max - 1) * 0.6);
  return `${branch.slice(0, head)}…${branch.slice(branch.length - (max - 1 - head))}`;
}

/** How long the run took (or has run so far). */
export function runDuration(run: RunRecord, now: number = Date.now()): string {
  if (!run.startedAt) return '-';
  const end = run.finishedAt ? Date.parse(run.finishedAt) : now;
  return duration(end - Date.parse(run.startedAt));
}

const GATE_CLASS: Record<PullRequestGate, RunOutcomeClass> = {
  open: 'running',
  awaiting_review: 'running',
  changes_requested: 'attention',
  ci_failing: 'failure',
  conflicted: 'failure',
  behind: 'attention',
  ready: 'success',
  needs_human: 'attention',
};

/** The pull request in one line: `#12 merged`, `#12 open · checks failing: build`. */
export function pullRequestLine(pr: PullRequestRecord | undefined): Html | '' {
  if (!pr) return '';
  if (pr.delivery === 'branch')
    return html`<div class="detail gate">branch pushed <span class="branch" title="${pr.headBranch}">${readableBranch(pr.headBranch)}</span></div>`;
  if (pr.number === null)
    return html`<div class="detail gate">pull request not opened yet (${pr.state})</div>`;
  const stateClass = prStateClass(pr);
  const gate =
    pr.state === 'open' && pr.gate
      ? html` · <span class="pill outcome-${GATE_CLASS[pr.gate]}">${pr.gate === 'ci_failing' ? 'checks failing' : statusWordsOf(pr.gate)}</span>${pr.gateDetail ? html` <span class="gate-detail">${pr.gateDetail}</span>` : ''}`
      : '';
  return html`<div class="detail gate" data-pr="${String(pr.number)}">${safeLink(pr.url, `PR #${pr.number}`)} <span class="pill outcome-${stateClass}">${statusWordsOf(pr.state)}</span>${gate}</div>`;
}

/**
 * The deliveries of a task across repositories' other repositories among a page's (keyed
 * `<run id>~<alias>`, src/delivery/repositories.ts), in the order they were made.
 */
export function otherDeliveries(
  deliveries: Readonly<Record<string, PullRequestRecord>> | undefined,
  runId: string,
): PullRequestRecord[] {
  if (!deliveries) return [];
  return Object.entries(deliveries)
    .filter(([key]) => key !== runId && deliveryRunId(key) === runId)
    .map(([, pr]) => pr);
}

/** One delivery of a run across repositories, short: `api#12 open`, `web branch pushed`. */
function compactDelivery(pr: PullRequestRecord): Html {
  const name = pr.repo.slice(pr.repo.indexOf('/') + 1) || pr.repo; // `owner/name`: the name
  if (pr.delivery === 'branch')
    return html`<span title="${pr.repo}">${name}</span> branch pushed <span class="branch" title="${pr.headBranch}">${readableBranch(pr.headBranch)}</span>`;
  if (pr.number === null) return html`<span title="${pr.repo}">${name}</span> not opened yet (${pr.state})`;
  const gate =
    pr.state === 'open' && pr.gate
      ? html` <span class="pill outcome-${GATE_CLASS[pr.gate]}">${pr.gate === 'ci_failing' ? 'checks failing' : statusWordsOf(pr.gate)}</span>`
      : '';
  return html`<span class="pr" data-repo="${pr.repo}" data-pr="${String(pr.number)}">${safeLink(pr.url, html`<span title="${pr.repo}">${name}#${String(pr.number)}</span>`)} <span class="pill outcome-${prStateClass(pr)}">${statusWordsOf(pr.state)}</span>${gate}</span>`;
}

/**
 * A run's pull requests in one line: the primary's alone as `pullRequestLine` says it; a task across
 * repositories' every one, compact (`2 pull requests: api#12 open, web#7 merged`).
 */
export function pullRequestsLine(
  primary: PullRequestRecord | undefined,
  others: readonly PullRequestRecord[],
): Html | '' {
  if (others.length === 0) return pullRequestLine(primary);
  const all = [...(primary ? [primary] : []), ...others];
  const noun = all.every((pr) => pr.delivery === 'pr')
    ? `pull request${all.length === 1 ? '' : 's'}`
    : `deliver${all.length === 1 ? 'y' : 'ies'}`;
  return html`<div class="detail gate prs" data-prs="${String(all.length)}">${String(all.length)} ${noun}: ${all.map(
    (pr, i) => html`${i > 0 ? ', ' : ''}${compactDelivery(pr)}`,
  )}</div>`;
}

function prStateClass(pr: PullRequestRecord): RunOutcomeClass {
  return pr.state === 'merged'
    ? 'success'
    : pr.state === 'open'
      ? 'running'
      : pr.state === 'failed'
        ? 'failure'
        : 'attention';
}

function statusWordsOf(word: string): string {
  return word.replace(/_/g, ' ');
}

export interface ActionButton {
  label: string;
  action: string;
  danger?: boolean;
  /** A question the page asks before it acts, naming what will happen. */
  confirm?: string;
  /** Where to look for the run the action causes (a runs query of the API). */
  follow?: string;
}

export function button(b: ActionButton): Html {
  return html`<button type="button" class="action${b.danger ? ' danger' : ''}" data-action="${b.action}"${
    b.confirm ? html` data-confirm="${b.confirm}"` : ''
  }${b.follow ? html` data-follow="${b.follow}"` : ''}>${b.label}</button>`;
}

/** The actions that make sense for a run in its state (never Retry on a success). */
export function runActionButtons(run: RunRecord): ActionButton[] {
  const base = `/api/v1/runs/${encodeURIComponent(run.id)}`;
  const follow = `/api/v1/runs?task=${encodeURIComponent(run.taskKey)}&limit=1`;
  const name = `${itemName(run).ref} “${run.itemTitle}”`;
  if (!isTerminal(run.status))
    return [
      {
        label: 'Cancel',
        action: `${base}/cancel`,
        danger: true,
        confirm: `Cancel the run on ${name}? Its agent is stopped now${run.sessionId ? '; its session is kept' : ''}.`,
      },
    ];
  const actions: ActionButton[] = [];
  const outcome = runOutcomeClass(run.status);
  if (blockedByScreening(run)) {
    const critical = (run.screeningFindings ?? []).filter((f) => f.severity === 'critical');
    actions.push({
      label: 'Allow once',
      action: `${base}/allow`,
      follow,
      ...(critical.length > 0
        ? {
            confirm: `Allow ${name} once despite ${critical.length} critical finding${critical.length === 1 ? '' : 's'} (${critical.map((f) => `${f.scanner}/${f.rule}`).join(', ')})? An agent runs on this text as it stands.`,
          }
        : {}),
    });
  } else if (
    outcome === 'failure' ||
    outcome === 'attention' ||
    run.status === 'cancelled' ||
    run.status === 'parked' ||
    // Held by its delivery (a person cleared the way, then retries it), not by screened text.
    run.status === 'blocked'
  )
    actions.push({ label: run.status === 'parked' ? 'Retry now' : 'Retry', action: `${base}/retry`, follow });
  if (run.worktreeKept)
    actions.push({
      label: 'Remove worktree',
      action: `${base}/remove-worktree`,
      danger: true,
      confirm: `Remove the kept worktree ${run.worktreePath ?? ''}? ${run.commits > 0 ? `Its ${run.commits} unpushed commit${run.commits === 1 ? '' : 's'} and any changes are deleted for good.` : 'Any uncommitted changes are deleted for good.'}`,
    });
  if (!run.dismissedAt && (run.worktreeKept || !CALM_STATUSES.includes(run.status)))
    actions.push({ label: 'Dismiss', action: `${base}/dismiss` });
  return actions;
}

export function runActions(run: RunRecord): Html[] {
  return runActionButtons(run).map(button);
}

/** The card's lines, shared by a single run and an item's latest attempt. */
function runBody(
  run: RunRecord,
  pr: PullRequestRecord | undefined,
  now: number,
  others: readonly PullRequestRecord[],
): Html {
  const name = itemName(run);
  const agent = run.profile
    ? `${run.profile}${run.provider && run.provider !== run.profile ? ` (${run.provider})` : ''}`
    : null;
  return html`<h3><a href="/runs/${encodeURIComponent(run.id)}">${name.title}</a> <span class="number">${name.ref}</span></h3>
  <div class="meta">${statusPill(run.status)} <a href="/automations/${encodeURIComponent(run.automationId)}" class="automation-link">${run.automationId}</a>${
    agent ? html` · <span class="agent">${agent}</span>` : ''
  }${
    // A run that never started (held by screening, cancelled while queued) took no time and, unless
    // a classifier was paid, cost nothing: no placeholder dashes.
    run.startedAt ? html` · <span class="duration" title="duration">${runDuration(run, now)}</span>` : ''
  }${
    run.startedAt || (run.costUsd ?? null) !== null
      ? html` · <span class="cost" title="cost">${formatCost(run.costUsd)}</span>`
      : ''
  }</div>
  ${run.result ? html`<div class="detail result">reported <span class="outcome-name">${formatResult(run.result)}</span></div>` : ''}
  ${pullRequestsLine(pr, others)}
  ${run.reason ? html`<div class="detail reason">${run.reason}</div>` : ''}
  ${run.retryAt ? html`<div class="detail retry">${pendingNote(run)}</div>` : ''}
  ${run.host ? html`<div class="detail clip host" title="${run.host}">host ${run.host}</div>` : ''}
  ${run.branch && !pr && others.length === 0 ? html`<div class="detail clip">branch <span class="branch" title="${run.branch}">${readableBranch(run.branch)}</span></div>` : ''}
  ${run.worktreeKept ? html`<div class="detail warn clip" title="${run.worktreePath}">kept worktree (${run.commits} unpushed) ${run.worktreePath}</div>` : ''}
  <div class="detail">${when(run.finishedAt ?? run.startedAt ?? run.createdAt)}</div>`;
}

/** `others`: a task across repositories' deliveries besides the primary's `pr` (`otherDeliveries`). */
export function runCard(
  run: RunRecord,
  pr?: PullRequestRecord,
  now: number = Date.now(),
  others: readonly PullRequestRecord[] = [],
): Html {
  const cls = runOutcomeClass(run.status);
  return html`<article class="card run status-${run.status} outcome-${cls}" data-run="${run.id}" data-status="${run.status}">
  ${runBody(run, pr, now, others)}
  <div class="actions">${runActions(run)}</div>
</article>`;
}

/** A task queued for a free slot (no run yet): what it is, and where it stands in line. */
export function queuedCard(task: QueuedTask, place: number): Html {
  return html`<article class="card run status-queued outcome-${runOutcomeClass('queued')}" data-status="queued" data-item="${task.item}">
  <h3>${safeLink(task.url, task.title)} <span class="number">${task.item}</span></h3>
  <div class="meta">${statusPill('queued')} <a href="/automations/${encodeURIComponent(task.automationId)}" class="automation-link">${task.automationId}</a></div>
  <div class="detail reason">waiting for a free slot: ${place === 1 ? 'next to start' : `number ${place} in line`}</div>
</article>`;
}

/** One item in Needs attention: its latest attempt, with the earlier ones folded inside. */
export interface AttentionGroup {
  latest: RunRecord;
  earlier: RunRecord[];
  /** The item's newest run when it is newer than `latest` and still running (a retry under way). */
  running: RunRecord | null;
}

export function attentionCard(
  group: AttentionGroup,
  pr?: PullRequestRecord,
  now: number = Date.now(),
  others: readonly PullRequestRecord[] = [],
): Html {
  const run = group.latest;
  const cls = runOutcomeClass(run.status);
  const attempts = group.earlier.length;
  return html`<article class="card run item status-${run.status} outcome-${cls}" data-run="${run.id}" data-status="${run.status}" data-task="${run.taskKey}">
  ${runBody(run, pr, now, others)}
  ${group.running ? html`<div class="detail">retry under way: <a href="/runs/${encodeURIComponent(group.running.id)}">${group.running.id}</a></div>` : ''}
  ${
    attempts === 0
      ? ''
      : html`<details class="attempts"><summary>${attempts} earlier attempt${attempts === 1 ? '' : 's'}</summary><ol>${group.earlier.map(
          (r) =>
            html`<li data-run="${r.id}">${statusPill(r.status)} <a href="/runs/${encodeURIComponent(r.id)}">${when(r.finishedAt ?? r.createdAt)}</a>${r.reason ? html` <span class="muted">${r.reason}</span>` : ''}</li>`,
        )}</ol></details>`
  }
  <div class="actions">${runActionButtons(run).map((b) =>
    button(b.label === 'Dismiss' && attempts > 0 ? { ...b, action: `${b.action}?attempts=true` } : b),
  )}</div>
</article>`;
}
