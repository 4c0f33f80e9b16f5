/**
 * The automation page (`/automations/:name`): its trigger and next poll or fire, its last errors,
 * its figures over a window (in total and per agent profile) and its runs with filters and paging;
 * and the runs page (`/runs`): the same search across every automation.
 */

import type { Hono } from 'hono';
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../core/types.js';
import { formatCost } from '../cost/prices.js';
import type { PullRequestRecord, RunFilter } from '../store/types.js';
import { parseWindow, searchFilter } from './api.js';
import { type AutomationCard, automationCards, deliveriesOf } from './board-data.js';
import {
  button,
  itemName,
  otherDeliveries,
  pullRequestsLine,
  runDuration,
  statusPill,
  when,
} from './cards.js';
import { ApiError } from './errors.js';
import { FIGURE_WINDOWS, type FigureSet, type FigureWindowName, windowFigures } from './figures.js';
import { figureTiles, profileTable } from './figures-view.js';
import { baselineButton, findingCounts, findingsPanel } from './findings-page.js';
import { type Html, html } from './html.js';
import { layout } from './page-layout.js';
import type { ServerContext } from './server-context.js';

/** Runs per page on the automation and runs pages. */
export const RUNS_PAGE = 50;

export interface RunSearch {
  automation?: string;
  status?: RunStatus;
  profile?: string;
  repo?: string;
  q?: string;
  before?: string;
}

function query(search: RunSearch, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...search, ...extra }))
    if (value !== undefined && value !== '') params.set(key, value);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function filtersForm(
  action: string,
  search: RunSearch,
  withAutomation: readonly string[] | null,
  window?: string,
): Html {
  const option = (value: string, current: string | undefined, label = value) =>
    html`<option value="${value}"${current === value ? html` selected` : ''}>${label}</option>`;
  return html`<form class="filters" method="get" action="${action}" role="search">
  ${window ? html`<input type="hidden" name="window" value="${window}">` : ''}
  ${
    withAutomation
      ? html`<label>automation<select name="automation">${option('', search.automation, 'any')}${withAutomation.map((a) => option(a, search.automation))}</select></label>`
      : ''
  }
  <label>status<select name="status">${option('', search.status, 'any')}${RUN_STATUSES.map((s) => option(s, search.status, s.replace(/_/g, ' ')))}</select></label>
  <label>agent profile<input name="profile" value="${search.profile ?? ''}" size="10"></label>
  <label>repository<input name="repo" value="${search.repo ?? ''}" size="14" placeholder="owner/name"></label>
  <label>title contains<input type="search" name="q" value="${search.q ?? ''}" size="16"></label>
  <button type="submit">Search</button>
</form>`;
}

function runRow(run: RunRecord, deliveries: Record<string, PullRequestRecord>, now: number): Html {
  const name = itemName(run);
  return html`<tr data-run="${run.id}" data-status="${run.status}">
  <td>${statusPill(run.status)}</td>
  <td><a href="/runs/${encodeURIComponent(run.id)}">${name.title}</a> <span class="muted">${name.ref}</span>${pullRequestsLine(deliveries[run.id], otherDeliveries(deliveries, run.id))}</td>
  <td class="optional"><a href="/automations/${encodeURIComponent(run.automationId)}">${run.automationId}</a></td>
  <td class="optional">${run.profile ?? '-'}</td>
  <td class="num">${runDuration(run, now)}</td>
  <td class="num">${formatCost(run.costUsd)}</td>
  <td class="optional">${when(run.createdAt)}</td>
</tr>`;
}

export function runsTable(
  runs: readonly RunRecord[],
  deliveries: Record<string, PullRequestRecord>,
  now: number,
): Html {
  if (runs.length === 0) return html`<p class="empty" id="no-runs">no run matches</p>`;
  return html`<div class="table-wrap"><table class="runs" id="runs">
<thead><tr><th scope="col">status</th><th scope="col">item</th><th scope="col" class="optional">automation</th><th scope="col" class="optional">agent</th><th scope="col" class="num">duration</th><th scope="col" class="num">cost</th><th scope="col" class="optional">created</th></tr></thead>
<tbody>${runs.map((r) => runRow(r, deliveries, now))}</tbody></table></div>`;
}

function pager(path: string, search: RunSearch, next: string | null, extra: Record<string, string>): Html {
  const { before: _before, ...rest } = search;
  return html`<nav class="pager" aria-label="pages of runs">${
    search.before ? html`<a href="${path}${query(rest, extra)}">newest</a>` : ''
  }${next ? html`<a href="${path}${query({ ...rest, before: next }, extra)}" rel="next" id="older">older runs</a>` : ''}</nav>`;
}

function triggerPanel(card: AutomationCard): Html {
  const base = `/api/v1/automations/${encodeURIComponent(card.id)}`;
  const next = card.nextFireAt
    ? html`next fire ${when(card.nextFireAt)}`
    : card.paused
      ? html`not polling: paused`
      : card.nextPollAt
        ? html`polling · next poll ${when(card.nextPollAt)}`
        : html`not polled yet`;
  return html`<section class="panel" id="trigger">
  <h3>Trigger</h3>
  <dl class="facts">
    <dt>type</dt><dd>${card.triggerType}</dd>
    <dt>state</dt><dd id="polling">${next}</dd>
    ${card.lastPollAt ? html`<dt>last check</dt><dd>${when(card.lastPollAt)} · ${card.lastFound ?? 0} new${card.matching === null ? '' : html` · ${card.matching} open matching`}</dd>` : ''}
    ${card.explain.map((l) => html`<dt>${l.label}</dt><dd>${l.value}</dd>`)}
    ${card.pausedReason ? html`<dt>paused</dt><dd class="warn">${card.pausedReason}</dd>` : ''}
    ${card.budget ? html`<dt>cost today</dt><dd>${formatCost(card.budget.spentTodayUsd)}${card.budget.limitPerDayUsd === undefined ? '' : html` of ${formatCost(card.budget.limitPerDayUsd)}`}</dd>` : ''}
  </dl>
  <div class="actions">${button({ label: 'Run now', action: `${base}/run`, follow: `/api/v1/runs?automation=${encodeURIComponent(card.id)}&limit=1` })}${
    card.scans.includes('baseline') ? baselineButton(card.id) : ''
  }${
    card.paused
      ? button({ label: 'Resume', action: `${base}/resume` })
      : button({ label: 'Pause', action: `${base}/pause` })
  }</div>
</section>`;
}

function errorsPanel(card: AutomationCard, failed: readonly RunRecord[]): Html {
  return html`<section class="panel" id="errors">
  <h3>Last errors</h3>
  ${card.lastError ? html`<p class="error" id="poll-error">last poll failed: ${card.lastError}</p>` : ''}
  ${
    failed.length === 0 && !card.lastError
      ? html`<p class="empty">no errors</p>`
      : html`<ul>${failed.map(
          (r) =>
            html`<li>${when(r.finishedAt ?? r.createdAt)} <a href="/runs/${encodeURIComponent(r.id)}">${itemName(r).ref}</a>: ${r.reason ?? r.status}</li>`,
        )}</ul>`
  }
</section>`;
}

function windowLinks(path: string, current: FigureWindowName): Html {
  return html`<nav class="pager" aria-label="figures window">${Object.keys(FIGURE_WINDOWS).map((w) =>
    w === current
      ? html`<strong aria-current="true">${w}</strong>`
      : html`<a href="${path}?window=${w}">${w}</a>`,
  )}</nav>`;
}

export function automationPage(args: {
  card: AutomationCard;
  figures: FigureSet;
  windowName: FigureWindowName;
  failed: readonly RunRecord[];
  runs: readonly RunRecord[];
  next: string | null;
  deliveries: Record<string, PullRequestRecord>;
  search: RunSearch;
  token: string;
  now: number;
  /** A review watch's findings (issue 29): counts and a link to its findings view; absent: none. */
  findings?: Html;
}): Html {
  const { card } = args;
  const path = `/automations/${encodeURIComponent(card.id)}`;
  const body = html`<main class="automation-page" data-automation="${card.id}">
  <h2>${card.id}${card.paused ? html` <span class="tag">paused</span>` : ''}${card.disabled ? html` <span class="tag">disabled</span>` : ''}</h2>
  ${triggerPanel(card)}
  ${errorsPanel(card, args.failed)}
  ${args.findings ?? ''}
  <section class="panel" id="figures">
    <h3>Figures, last ${args.windowName}</h3>
    ${windowLinks(path, args.windowName)}
    ${figureTiles(args.figures.total)}
    <h3>Per agent profile</h3>
    ${profileTable(args.figures)}
  </section>
  <section class="panel" id="runs-panel">
    <h3>Runs</h3>
    ${filtersForm(path, args.search, null, args.windowName)}
    ${runsTable(args.runs, args.deliveries, args.now)}
    ${pager(path, args.search, args.next, { window: args.windowName })}
  </section>
</main>`;
  return layout(args.token, `curupira: ${card.id}`, html`automation ${card.id}`, body);
}

export function runsPage(args: {
  automations: readonly string[];
  runs: readonly RunRecord[];
  next: string | null;
  deliveries: Record<string, PullRequestRecord>;
  search: RunSearch;
  token: string;
  now: number;
}): Html {
  const body = html`<main class="runs-page">
  <h2>Runs</h2>
  ${filtersForm('/runs', args.search, args.automations)}
  ${runsTable(args.runs, args.deliveries, args.now)}
  ${pager('/runs', args.search, args.next, {})}
</main>`;
  return layout(args.token, 'curupira: runs', html`runs`, body);
}

/** The search of a page's query string (invalid values are refused, as the API does). */
export function readSearch(q: (name: string) => string | undefined): {
  search: RunSearch;
  filter: RunFilter;
} {
  const status = q('status');
  if (status !== undefined && status !== '' && !(RUN_STATUSES as readonly string[]).includes(status))
    throw new ApiError('bad_request', `unknown status '${status}'`);
  const before = q('before');
  if (before !== undefined && before !== '' && !/^[0-9A-Za-z_]{1,64}$/.test(before))
    throw new ApiError('bad_request', `invalid cursor '${before}'`);
  const filter = searchFilter(q);
  const search: RunSearch = {};
  const automation = q('automation');
  if (automation) search.automation = automation;
  if (status) search.status = status as RunStatus;
  if (filter.profile) search.profile = filter.profile;
  if (filter.repo) search.repo = filter.repo;
  if (filter.text) search.q = filter.text;
  if (before) search.before = before;
  return {
    search,
    filter: {
      ...filter,
      ...(automation ? { automationId: automation } : {}),
      ...(status ? { status: [status as RunStatus] } : {}),
      ...(before ? { beforeId: before } : {}),
    },
  };
}

async function searchRuns(ctx: ServerContext, filter: RunFilter) {
  const rows = await ctx.store.listRuns({ ...filter, limit: RUNS_PAGE + 1 });
  const runs = rows.slice(0, RUNS_PAGE);
  return {
    runs,
    next: rows.length > RUNS_PAGE ? runs.at(-1)!.id : null,
    deliveries: await deliveriesOf(ctx.store, runs, ctx.engine.currentSettings().automations),
  };
}

export function automationPageRoutes(
  app: Hono,
  send: (c: never, page: Html) => Response,
  ctx: ServerContext,
): void {
  app.get('/automations/:name', async (c) => {
    const name = c.req.param('name');
    const now = new Date();
    const card = automationCards(ctx.engine, now).find((a) => a.id === name);
    if (!card) throw new ApiError('automation_not_found', `no automation '${name}' is configured`);
    const windowName = parseWindow(c.req.query('window'));
    const { search, filter } = readSearch((n) => c.req.query(n));
    // A watch whose runs get the findings tools, or any automation with findings on record.
    const offersFindings = ctx.engine
      .currentSettings()
      .automations.some((a) => a.id === name && a.trigger.agentTools !== undefined);
    const [figures, failed, found, counts] = await Promise.all([
      windowFigures(ctx.store, windowName, name, now),
      ctx.store.listRuns({ automationId: name, status: ['failed', 'timed_out', 'stalled'], limit: 5 }),
      searchRuns(ctx, { ...filter, automationId: name }),
      findingCounts(ctx, name),
    ]);
    const showFindings = offersFindings || counts.open + counts.resolved > 0;
    return send(
      c as never,
      automationPage({
        card,
        figures,
        windowName,
        failed,
        ...found,
        search,
        token: ctx.token,
        now: now.getTime(),
        ...(showFindings ? { findings: findingsPanel(name, counts) } : {}),
      }),
    );
  });
  app.get('/runs', async (c) => {
    const { search, filter } = readSearch((n) => c.req.query(n));
    const found = await searchRuns(ctx, filter);
    return send(
      c as never,
      runsPage({
        automations: ctx.engine.currentSettings().automations.map((a) => a.id),
        ...found,
        search,
        token: ctx.token,
        now: Date.now(),
      }),
    );
  });
}
