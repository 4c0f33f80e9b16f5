/** The board and the run page: server-rendered HTML; every value from GitHub or an agent is escaped. */

import type { AgentEvent } from '../agents/types.js';
import { describeRunCode } from '../core/code-source.js';
import { formatInputs, formatResult } from '../core/result-line.js';
import { isTerminal, type RunRecord } from '../core/types.js';
import { formatCost } from '../cost/prices.js';
import type { RunRepository } from '../delivery/repositories.js';
import type { ReviewSummary } from '../delivery/review-summary.js';
import type { DispatchRecord, FleetHost, WaitingTask } from '../fleet/types.js';
import type { PullRequestRecord } from '../store/types.js';
import { findTriggerDefinition, runItemLink, runItemName } from '../triggers/registry.js';
import type { AutomationCard, BoardData } from './board-data.js';
import {
  button as actionButton,
  attentionCard,
  otherDeliveries,
  queuedCard,
  runActions,
  runCard,
  safeLink,
  statusPill,
  when,
} from './cards.js';
import { headerTotals, reloadBanner } from './figures-view.js';
import { type Html, html, raw } from './html.js';
import { HEAD_LINKS, page } from './page-layout.js';

/** Done cards on the board; older ones are on the runs page. */
const DONE_SHOWN = 12;

/** Tool inputs and outputs longer than this are collapsed. */
const LONG_TEXT = 300;

function button(label: string, action: string, extra = ''): Html {
  return actionButton({ label, action, danger: extra === 'danger' });
}

export { page };

/** Seed 004's "is this even polling?" line of an event trigger: last check or error, baseline. */
function pollingLine(card: AutomationCard): Html {
  let checked: Html;
  if (card.lastError) checked = html`<span class="error">last poll failed: ${card.lastError}</span>`;
  else if (card.lastPollAt)
    checked = html`last check ${when(card.lastPollAt)}${
      card.matching === null ? '' : html` · ${card.matching} open matching`
    } · ${card.lastFound ?? 0} new${card.waiting > 0 ? html` · ${card.waiting} more waiting` : ''}`;
  else checked = html`not polled yet`;
  const baseline = !card.baseline
    ? ''
    : card.baseline.set
      ? html` · baseline set${card.baseline.at ? html` ${when(card.baseline.at)}` : ''}`
      : html` · baseline not set yet`;
  return html`<div class="detail${card.lastError ? ' error' : ''}">${checked}${baseline}</div>`;
}

/** Today's spend, and a budget warning or park, on an automation's card. */
function budgetLine(card: AutomationCard): Html | '' {
  const budget = card.budget;
  if (!budget) return '';
  const limit = budget.limitPerDayUsd === undefined ? '' : ` of ${formatCost(budget.limitPerDayUsd)}`;
  const state =
    budget.state === 'parked'
      ? html` · <span class="error">parked until ${when(budget.parkedUntil ?? null)}: ${budget.reason ?? ''}</span>`
      : budget.state === 'warning'
        ? html` · <span class="warn">budget warning: 80 % used</span>`
        : '';
  return html`<div class="detail budget budget-${budget.state}">cost today ${formatCost(budget.spentTodayUsd)}${limit}${state}</div>`;
}

function automationCard(card: AutomationCard): Html {
  const base = `/api/v1/automations/${encodeURIComponent(card.id)}`;
  const lines = card.explain.slice(0, 2).map((l) => html`<div class="detail">${l.label}: ${l.value}</div>`);
  const polling = card.nextFireAt
    ? html`<div class="detail">next fire: ${when(card.nextFireAt)}</div>`
    : pollingLine(card);
  const disabled = card.disabled
    ? html`<div class="detail">disabled in the settings file (enabled = false)</div>`
    : '';
  return html`<article class="card automation${card.paused ? ' paused' : ''}" data-automation="${card.id}">
  <h3><a href="/automations/${encodeURIComponent(card.id)}">${card.id}</a>${card.paused ? html` <span class="tag">paused</span>` : ''}${card.budget?.state === 'parked' ? html` <span class="tag">parked</span>` : ''}</h3>
  <div class="detail">${card.triggerType}</div>
  ${lines}
  ${disabled}
  ${card.pausedReason ? html`<div class="detail warn reason">${card.pausedReason}</div>` : ''}
  ${card.parkedUntil ? html`<div class="detail warn">provider parked (usage limit) until ${when(card.parkedUntil)}</div>` : ''}
  ${card.retries.map((r) => html`<div class="detail retry">${r}</div>`)}
  ${polling}
  ${budgetLine(card)}
  <div class="actions">${button('Run now', `${base}/run`)}${
    card.paused ? button('Resume', `${base}/resume`) : button('Pause', `${base}/pause`)
  }</div>
</article>`;
}

function column(id: string, title: string, cards: Html[], total = cards.length): Html {
  return html`<section class="column" id="column-${id}" data-column="${id}">
  <h2>${title} <span class="count">${total}</span></h2>
  ${cards.length === 0 ? html`<p class="empty">nothing here</p>` : cards}
</section>`;
}

/** What the board's header says of the fleet: its hosts, or that they could not be read. */
export type FleetGlance = readonly FleetHost[] | 'unavailable' | { unreachableSince: string };

/** The board's link to the fleet page: `3 hosts · 1 gone`, hot when a host is late or gone. */
function fleetBadge(fleet: FleetGlance | undefined): Html | '' {
  if (fleet === undefined) return '';
  if (fleet === 'unavailable')
    return html`<a id="fleet" class="badge hot" href="/fleet">fleet unavailable</a>`;
  if ('unreachableSince' in fleet)
    return html`<a id="fleet" class="badge hot" href="/fleet">database unreachable since ${fleet.unreachableSince.slice(11, 19)} UTC</a>`;
  const troubled = fleet.filter((h) => h.health === 'late' || h.health === 'gone');
  const words = [`${fleet.length} host${fleet.length === 1 ? '' : 's'}`];
  for (const health of ['late', 'gone'] as const) {
    const n = troubled.filter((h) => h.health === health).length;
    if (n > 0) words.push(`${n} ${health}`);
  }
  return html`<a id="fleet" class="badge${troubled.length > 0 ? ' hot' : ''}" href="/fleet">fleet: ${words.join(' · ')}</a>`;
}

/** The part of the board that live updates replace; `fleet` only on a fleet's state (issue 17). */
export function boardLive(data: BoardData, fleet?: FleetGlance): Html {
  const now = Date.parse(data.now);
  return html`<div id="live">
<header class="top">
  <h1>curupira</h1>
  <span id="summary">${data.summary}</span>
  <a class="badge" href="/runs">all runs</a>
  <a id="attention" class="badge${data.attentionCount > 0 ? ' hot' : ''}" href="#column-attention">${data.attentionCount} need attention</a>
  ${fleetBadge(fleet)}
  ${headerTotals(data.totals)}
</header>
${reloadBanner(data.engine?.reloadError)}
<main class="board">
  ${column('scheduled', 'Scheduled', data.automations.map(automationCard))}
  ${column(
    'in-progress',
    'In progress',
    [
      ...data.inProgress.map((r) =>
        runCard(r, data.deliveries?.[r.id], now, otherDeliveries(data.deliveries, r.id)),
      ),
      ...(data.engine?.queuedTasks ?? []).map((task, index) => queuedCard(task, index + 1)),
    ],
    data.inProgress.length + (data.engine?.queued ?? 0),
  )}
  ${column(
    'attention',
    'Needs attention',
    (data.attentionGroups ?? data.attention.map((latest) => ({ latest, earlier: [], running: null }))).map(
      (g) =>
        attentionCard(g, data.deliveries?.[g.latest.id], now, otherDeliveries(data.deliveries, g.latest.id)),
    ),
    data.attentionCount,
  )}
  ${column(
    'done',
    'Done',
    [
      ...data.done
        .slice(0, DONE_SHOWN)
        .map((r) => runCard(r, data.deliveries?.[r.id], now, otherDeliveries(data.deliveries, r.id))),
      ...(data.done.length > DONE_SHOWN
        ? [html`<a class="more" href="/runs">older runs: search every run</a>`]
        : []),
    ],
    Math.min(data.done.length, DONE_SHOWN),
  )}
</main>
</div>`;
}

export function boardPage(data: BoardData, token: string, fleet?: FleetGlance): Html {
  return page(
    'curupira board',
    token,
    html`${boardLive(data, fleet)}<p id="connection" class="muted">live</p>`,
    'board.js',
  );
}

/** `3s`, `2m05s`, or `?` for a time that does not parse (a row may hold anything). */
function age(at: string, now: number): string {
  const ms = now - Date.parse(at);
  if (!Number.isFinite(ms)) return '?';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60
    ? `${m}m${String(s % 60).padStart(2, '0')}s`
    : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

function hostRow(host: FleetHost, now: number): Html {
  const load = host.capacity === 0 && host.load === 0 ? '-' : `${host.load}/${host.capacity}`;
  return html`<tr class="host health-${host.health}" data-host="${host.name}">
  <td class="name">${host.name}</td>
  <td>${host.role}</td>
  <td><span class="tag health">${host.health}</span>${host.stoppedAt ? html` <span class="muted">stopped ${when(host.stoppedAt)}</span>` : ''}</td>
  <td class="num">${load}</td>
  <td title="${host.heartbeatAt}">${age(host.heartbeatAt, now)} ago</td>
  <td>${host.polling ? html`<span class="tag polling">polling</span>` : '-'}</td>
  <td class="checkouts">${host.checkouts.length === 0 ? '-' : host.checkouts.join(', ')}</td>
  <td class="runs">${canRun(host)}</td>
  <td>${host.version}</td>
  <td>${host.pid} · ${when(host.startedAt)}</td>
</tr>`;
}

/** What a worker advertises it can run (its automations); `-` for a poller, `any` when it says nothing. */
function canRun(host: FleetHost): string {
  if (host.capacity === 0) return '-';
  if (host.capabilities === null) return 'any';
  return host.capabilities.automations.length === 0 ? 'nothing' : host.capabilities.automations.join(', ');
}

function waitingRow(task: WaitingTask, now: number): Html {
  return html`<tr class="waiting" data-task="${task.taskKey}">
  <td>${task.automationId}</td>
  <td>${task.repo}</td>
  <td class="clip" title="${task.taskKey}">${task.taskKey}</td>
  <td title="${task.since}">${age(task.since, now)}</td>
  <td>${task.reason}</td>
</tr>`;
}

function dispatchRow(dispatch: DispatchRecord, now: number): Html {
  const run = dispatch.runId
    ? html`<a href="/runs/${encodeURIComponent(dispatch.runId)}">${dispatch.runId}</a>`
    : '-';
  return html`<tr class="dispatch state-${dispatch.state}" data-dispatch="${dispatch.id}">
  <td>${dispatch.automationId}</td>
  <td>${dispatch.repo}</td>
  <td class="clip" title="${dispatch.taskKey}">${dispatch.taskKey}</td>
  <td>${dispatch.host}</td>
  <td><span class="tag">${dispatch.state.replace('_', ' ')}</span>${dispatch.refused ? html` <span class="muted">(refused)</span>` : ''}${dispatch.previousId ? html` <span class="muted">(taken over)</span>` : ''}</td>
  <td>${run}</td>
  <td title="${dispatch.enqueuedAt}">${age(dispatch.enqueuedAt, now)} ago</td>
  <td>${dispatch.detail ?? ''}</td>
</tr>`;
}

/** The part of the fleet page that its refresh replaces. */
export function fleetLive(
  hosts: readonly FleetHost[],
  dispatches: readonly DispatchRecord[],
  now: number,
  waiting: readonly WaitingTask[] = [],
): Html {
  const sorted = [...hosts].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return html`<div id="live">
<section class="fleet-hosts">
  <h2>Hosts <span class="count">${hosts.length}</span></h2>
  ${
    hosts.length === 0
      ? html`<p class="empty">no host has a heartbeat row yet</p>`
      : html`<table class="fleet"><thead><tr><th>host</th><th>role</th><th>health</th><th>load/capacity</th><th>heartbeat</th><th>poller</th><th>checkouts</th><th>can run</th><th>version</th><th>pid · started</th></tr></thead><tbody>${sorted.map((h) => hostRow(h, now))}</tbody></table>`
  }
</section>
<section class="fleet-dispatches">
  <h2>Dispatches not yet settled <span class="count">${dispatches.length}</span></h2>
  ${
    dispatches.length === 0
      ? html`<p class="empty">nothing here</p>`
      : html`<table class="fleet"><thead><tr><th>automation</th><th>repository</th><th>task</th><th>host</th><th>state</th><th>run</th><th>enqueued</th><th>detail</th></tr></thead><tbody>${dispatches.map((d) => dispatchRow(d, now))}</tbody></table>`
  }
</section>
${
  waiting.length === 0
    ? ''
    : html`<section class="fleet-waiting">
  <h2>Waiting: no live worker can run them <span class="count">${waiting.length}</span></h2>
  <table class="fleet"><thead><tr><th>automation</th><th>repository</th><th>task</th><th>waiting for</th><th>why</th></tr></thead><tbody>${waiting.map((t) => waitingRow(t, now))}</tbody></table>
</section>`
}
</div>`;
}

/** The fleet page (issue 17): every host's heartbeat row and the dispatches in flight. */
export function fleetPage(
  hosts: readonly FleetHost[],
  dispatches: readonly DispatchRecord[],
  token: string,
  now: number,
  waiting: readonly WaitingTask[] = [],
): Html {
  const body = html`<header class="top"><h1><a href="/">curupira</a></h1><span>fleet</span></header>
<main class="fleet-page">
${fleetLive(hosts, dispatches, now, waiting)}
<p id="connection" class="muted">refreshed every few seconds</p>
</main>`;
  return page('curupira fleet', token, body, 'fleet.js');
}

function collapsible(label: Html, text: string, cls: string): Html {
  const short = text.length <= LONG_TEXT && !text.includes('\n');
  return html`<details class="${cls}"${short ? raw(' open') : ''}><summary>${label}</summary><pre>${text}</pre></details>`;
}

export function eventHtml(event: AgentEvent): Html {
  switch (event.kind) {
    case 'session':
      return html`<li class="event meta">session ${event.sessionId}</li>`;
    case 'assistant':
      return html`<li class="event assistant"><pre>${event.text.trim()}</pre></li>`;
    case 'thinking':
      return html`<li class="event thinking">${collapsible(html`thinking`, event.text.trim(), 'thinking')}</li>`;
    case 'tool_call':
      return html`<li class="event tool">${collapsible(html`tool call: <b>${event.name}</b>`, event.input, 'tool-call')}</li>`;
    case 'tool_result':
      return html`<li class="event tool${event.isError ? ' error' : ''}">${collapsible(
        html`${event.isError ? 'tool error' : 'tool result'}${event.name ? html`: ${event.name}` : ''} (${event.output.length} characters)`,
        event.output,
        'tool-result',
      )}</li>`;
    case 'usage':
      return html`<li class="event meta">usage: ${event.inputTokens} input (${event.cachedInputTokens} cached), ${event.outputTokens} output tokens${
        event.costUsd === undefined ? '' : `, $${event.costUsd.toFixed(4)}`
      }</li>`;
    case 'error':
      return html`<li class="event error">error: ${event.message}</li>`;
    case 'done':
      return html`<li class="event meta">${event.isError ? html`finished with an error${event.result ? html`: ${event.result}` : ''}` : 'finished'}</li>`;
  }
}

function field(label: string, value: Html | string | null): Html {
  return value === null || value === '' ? html`` : html`<dt>${label}</dt><dd>${value}</dd>`;
}

/** What screening found in the item's text: the verdict and every finding (excerpts as recorded). */
function screeningSection(run: RunRecord): Html | '' {
  const findings = (run.screeningFindings ?? []).filter((f) => f.scanner !== 'sandbox');
  if (!run.screeningReason && findings.length === 0) return '';
  return html`<section class="screening" id="screening">
  <h3>Screening</h3>
  ${run.screeningReason ? html`<p class="detail${run.status === 'blocked' ? ' error' : ''}">${run.screeningReason}</p>` : ''}
  ${
    findings.length === 0
      ? ''
      : html`<table class="findings"><thead><tr><th>severity</th><th>scanner</th><th>field</th><th>offset</th><th>excerpt</th></tr></thead><tbody>${findings.map(
          (f) =>
            html`<tr class="severity-${f.severity}"><td>${f.severity}</td><td>${f.scanner}/${f.rule}</td><td>${f.field}</td><td>${String(f.offset)}</td><td><code>${f.excerpt}</code></td></tr>`,
        )}</tbody></table>`
  }
</section>`;
}

/** The run's sandbox (issue 26): the policy it ran under and the connections it refused. */
function sandboxSection(run: RunRecord): Html | '' {
  const findings = (run.screeningFindings ?? []).filter((f) => f.scanner === 'sandbox');
  if (findings.length === 0) return '';
  const policy = findings.find((f) => f.rule === 'policy');
  const blocked = findings.filter((f) => f.rule !== 'policy');
  return html`<section class="sandbox" id="sandbox">
  <h3>Sandbox</h3>
  ${policy ? html`<p class="detail${policy.severity === 'low' ? '' : ' error'}">${policy.excerpt}</p>` : ''}
  ${blocked.length === 0 ? '' : html`<ul class="blocked">${blocked.map((f) => html`<li><code>${f.excerpt}</code></li>`)}</ul>`}
</section>`;
}

/** The run's delivery (issue 13): the pushed branch, its pull request and, while open, its follow-up gate. */
function deliveryFields(delivery: PullRequestRecord | undefined): Html | '' {
  if (!delivery) return '';
  const pr =
    delivery.number === null
      ? `not opened yet (${delivery.state})`
      : html`${safeLink(delivery.url, `#${delivery.number}`)} ${delivery.state} since ${delivery.since}${delivery.adopted ? ' (adopted)' : ''}`;
  const gate =
    delivery.gate && delivery.state === 'open'
      ? `${delivery.gate.replace(/_/g, ' ')}${delivery.gateSince ? ` since ${delivery.gateSince}` : ''}${delivery.gateDetail ? `: ${delivery.gateDetail}` : ''}`
      : null;
  return html`${field('pushed', `${delivery.headBranch}${delivery.headSha ? ` at ${delivery.headSha.slice(0, 12)}` : ''}`)}
    ${delivery.delivery === 'pr' ? field('pull request', pr) : ''}
    ${field('follow-up', gate)}
    ${field('delivery', delivery.detail)}`;
}

/**
 * A task across repositories (issue 30): every repository of the run, its worktree and its pull
 * request. Paths, names and addresses are escaped; a link only where the address is http(s).
 */
function repositoriesSection(repositories: readonly RunRepository[]): Html | '' {
  if (repositories.length === 0) return '';
  const pr = (d: PullRequestRecord | null) =>
    !d
      ? 'none (no commit, or not delivered yet)'
      : d.number === null
        ? `${d.delivery === 'pr' ? 'not opened yet' : 'branch only'} (${d.state})`
        : html`${safeLink(d.url, `#${d.number}`)} ${d.state} since ${d.since}${d.adopted ? ' (adopted)' : ''}`;
  return html`<section class="repositories" id="repositories">
  <h3>Repositories (${String(repositories.length)})</h3>
  <div class="table-wrap"><table class="repositories"><thead><tr><th scope="col">alias</th><th scope="col">repository</th><th scope="col">worktree</th><th scope="col">pull request</th></tr></thead><tbody>${repositories.map(
    (r) =>
      html`<tr data-alias="${r.alias}"><td>${r.alias}${r.primary ? html` <span class="muted">(primary)</span>` : ''}</td><td>${r.repo}</td><td><code>${r.worktreePath ?? '-'}</code></td><td>${pr(r.delivery)}</td></tr>`,
  )}</tbody></table></div>
</section>`;
}

/**
 * The pull request's review thread in a few lines (issue 28): verdicts, counts and the newest
 * reviews and comments, as the reviews step last read them. Their text is GitHub's: escaped here.
 */
function reviewSection(summary: ReviewSummary | undefined): Html | '' {
  if (!summary) return '';
  const people = (logins: readonly string[]) => logins.map((l) => `@${l}`).join(', ');
  const verdicts = [
    summary.changesRequestedBy.length > 0 ? `changes requested by ${people(summary.changesRequestedBy)}` : '',
    summary.approvedBy.length > 0 ? `approved by ${people(summary.approvedBy)}` : '',
  ].filter((v) => v !== '');
  const n = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const counts = `${n(summary.reviews, 'review')}, ${n(summary.inlineComments, 'inline comment')}, ${n(summary.comments, 'comment')}`;
  return html`<section class="reviews" id="reviews">
  <h3>Review thread</h3>
  <p class="detail">${verdicts.length > 0 ? `${verdicts.join('; ')} · ` : 'no verdict yet · '}${counts}</p>
  ${
    summary.latest.length === 0
      ? ''
      : html`<ol class="review-notes">${summary.latest.map(
          (n) =>
            html`<li class="review-note${n.trusted ? '' : ' untrusted'}"><span class="who">@${n.who}</span> <span class="muted">${n.kind === 'review' ? `review${n.state ? ` (${n.state})` : ''}` : n.kind === 'inline' ? `on ${n.path ?? '?'}${n.line ? `:${n.line}` : ''}` : 'comment'}${n.trusted ? '' : ' · not a trusted account: never acted on'}</span><blockquote>${n.excerpt}</blockquote></li>`,
        )}</ol>`
  }
</section>`;
}

/** A fleet run's transcript stays on the host that ran its agent: say where, not "none". */
function missingTranscript(run: RunRecord): Html {
  if (run.host && run.transcriptPath)
    return html`<p class="muted" id="transcript-elsewhere">The transcript is on host ${run.host}, at ${run.transcriptPath}: transcripts stay on the host that ran the agent, and this board's machine has none for this run.</p>`;
  return html`<p class="muted">No transcript was saved for this run.</p>`;
}

/**
 * The item's other runs (newest first): a retry and the cancelled or failed run before it, a
 * blocked run and the one an allowance let through, each a link with its status and reason.
 */
function attemptsSection(run: RunRecord, attempts: readonly RunRecord[]): Html | '' {
  const others = attempts.filter((other) => other.id !== run.id);
  if (others.length === 0) return '';
  const short = (text: string) => (text.length > 160 ? `${text.slice(0, 159)}…` : text);
  return html`<section class="attempts" id="attempts">
  <h3>Other runs of this item</h3>
  <ol class="attempt-list">${others.map(
    (other) =>
      html`<li>${statusPill(other.status)} <a href="/runs/${encodeURIComponent(other.id)}">${other.id}</a> <span class="muted">${other.createdAt.replace('T', ' ').slice(0, 19)} UTC${other.automationId === run.automationId ? '' : ` · ${other.automationId}`}</span>${other.reason ? html` <span class="detail">${short(other.reason)}</span>` : ''}</li>`,
  )}</ol>
</section>`;
}

/** The run's item: a link where GitHub has one, else its name (a schedule's fire, a chain's run). */
function itemField(run: RunRecord): Html | string {
  const link = runItemLink(run);
  return link ? html`<a href="${link}" rel="noreferrer">${runItemName(run)}</a>` : runItemName(run);
}

export function runPage(
  run: RunRecord,
  events: AgentEvent[] | undefined,
  token: string,
  delivery?: PullRequestRecord,
  changes?: Html,
  reviews?: ReviewSummary,
  /**
   * Where the item comes from (a source outside GitHub), for a task across repositories each
   * repository, and the item's runs (this one among them or not).
   */
  more: { source?: string; repositories?: readonly RunRepository[]; attempts?: readonly RunRecord[] } = {},
): Html {
  const live = !isTerminal(run.status);
  const base = `/api/v1/runs/${encodeURIComponent(run.id)}`;
  const usage = run.usage
    ? `${run.usage.inputTokens} input (${run.usage.cachedInputTokens} cached), ${run.usage.outputTokens} output tokens${run.usage.costUsd === undefined ? '' : `, $${run.usage.costUsd.toFixed(4)}`}`
    : null;
  const body = html`<header class="top"><h1><a href="/">curupira</a></h1><span>run ${run.id}</span></header>
<main class="run-page" data-run="${run.id}" data-live="${live ? 'true' : 'false'}" data-events="${base}/events?from=${events?.length ?? 0}">
  <h2>${run.itemTitle}</h2>
  <dl class="facts">
    ${field('status', statusPill(run.status, 'run-status'))}
    ${field('result', run.result ? `${formatResult(run.result)} (${run.result.via === 'tool' ? 'result tool' : 'result line'})` : null)}
    ${field('outcome', run.reason)}
    ${field('inputs', run.inputs ? formatInputs(run.inputs) : null)}
    ${field('automation', run.automationId)}
    ${field('host', run.host ?? null)}
    ${field('item', itemField(run))}
    ${field('source', more.source ?? null)}
    ${field('agent', run.profile ? `${run.profile} (${run.provider ?? '-'})` : null)}
    ${field('session', run.sessionId)}
    ${field('branch', run.branch)}
    ${field('code', describeRunCode(run, findTriggerDefinition(run.taskType)))}
    ${field('worktree', run.worktreePath ? `${run.worktreePath}${live ? ' (in use)' : run.worktreeKept ? ` (kept: ${run.commits} unpushed commits or changes)` : ' (removed)'}` : null)}
    ${deliveryFields(delivery)}
    ${field('usage', usage)}
    ${field('cost', `${formatCost(run.costUsd)}${run.model ? ` (${run.model})` : ''}`)}
    ${field('started', run.startedAt)}
    ${field('finished', run.finishedAt)}
  </dl>
  <div class="actions">${runActions(run)}</div>
  ${attemptsSection(run, more.attempts ?? [])}
  ${repositoriesSection(more.repositories ?? [])}
  ${sandboxSection(run)}
  ${screeningSection(run)}
  ${reviewSection(reviews)}
  ${changes ?? ''}
  ${run.prompt ? html`<details class="prompt"><summary>Prompt (${run.prompt.length} characters)</summary><pre>${run.prompt}</pre></details>` : ''}
  <h3 id="conversation-title">${live ? 'Live events' : 'Transcript'}</h3>
  <ol id="conversation" class="conversation">${(events ?? []).map(eventHtml)}</ol>
  ${!live && events === undefined ? missingTranscript(run) : ''}
</main>`;
  return page(`run ${run.id}: ${run.itemTitle}`, token, body, 'run.js');
}

export function messagePage(title: string, message: string): Html {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
${HEAD_LINKS}</head><body><main class="message"><h1>${title}</h1><p>${message}</p></main></body></html>`;
}
