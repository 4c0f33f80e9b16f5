/**
 * The findings of a review watch on the board (`/automations/:name/findings`): what its reviews
 * reported, open, resolved or all, each with where it is, when it was first and last seen and,
 * once resolved, at which commit and how. Everything shown is escaped: titles, details, paths and
 * resolutions are the agent's words.
 */
import type { Hono } from 'hono';
import type { FindingRecord } from '../store/types.js';
import { button, when } from './cards.js';
import { ApiError } from './errors.js';
import { type Html, html } from './html.js';
import { layout } from './page-layout.js';
import type { ServerContext } from './server-context.js';

export const FINDING_VIEWS = ['open', 'resolved', 'all'] as const;
export type FindingView = (typeof FINDING_VIEWS)[number];

/** How many findings a watch has of each status (the automation page's link). */
export interface FindingCounts {
  open: number;
  resolved: number;
}

const short = (sha: string | null): string => (sha ? sha.slice(0, 12) : '-');

export function findingsPath(watch: string, view?: FindingView): string {
  return `/automations/${encodeURIComponent(watch)}/findings${view && view !== 'open' ? `?status=${view}` : ''}`;
}

function findingRow(f: FindingRecord): Html {
  const lines = f.lineStart === f.lineEnd ? `${f.lineStart}` : `${f.lineStart}-${f.lineEnd}`;
  return html`<tr data-finding="${f.id}" data-status="${f.status}">
  <td class="num">#${f.id}</td>
  <td><span class="tag severity-${f.severity}">${f.severity}</span></td>
  <td>${f.category}</td>
  <td><code>${f.file}:${lines}</code></td>
  <td><details><summary>${f.title}</summary><p class="detail">${f.detail}</p></details></td>
  <td class="optional">${when(f.firstSeenAt)} <code>${short(f.firstSeenCommit)}</code></td>
  <td class="optional">${when(f.lastSeenAt)} <code>${short(f.lastSeenCommit)}</code> <a href="/runs/${encodeURIComponent(f.lastRunId)}">run</a></td>
  <td>${
    f.status === 'resolved'
      ? html`resolved ${when(f.resolvedAt)} at <code>${short(f.resolvedCommit)}</code>${f.resolution ? html`: ${f.resolution}` : ''}`
      : html`open`
  }</td>
</tr>`;
}

export function findingsTable(findings: readonly FindingRecord[], view: FindingView): Html {
  if (findings.length === 0)
    return html`<p class="empty" id="no-findings">no ${view === 'all' ? '' : `${view} `}findings</p>`;
  return html`<div class="table-wrap"><table class="findings" id="findings">
<thead><tr><th scope="col" class="num">id</th><th scope="col">severity</th><th scope="col">category</th><th scope="col">where</th><th scope="col">finding</th><th scope="col" class="optional">first seen</th><th scope="col" class="optional">last seen</th><th scope="col">status</th></tr></thead>
<tbody>${findings.map(findingRow)}</tbody></table></div>`;
}

function viewLinks(watch: string, current: FindingView, counts: FindingCounts): Html {
  const label = (v: FindingView) =>
    v === 'all' ? `all ${counts.open + counts.resolved}` : `${v} ${counts[v]}`;
  return html`<nav class="pager" aria-label="findings shown">${FINDING_VIEWS.map((v) =>
    v === current
      ? html`<strong aria-current="true">${label(v)}</strong>`
      : html`<a href="${findingsPath(watch, v)}">${label(v)}</a>`,
  )}</nav>`;
}

/**
 * "Run a baseline now": a review of the whole repository at the branch's head, for any watch. The
 * board's script posts it with the token header, as every other action.
 */
export function baselineButton(watch: string): Html {
  return button({
    label: 'Run a baseline now',
    action: `/api/v1/automations/${encodeURIComponent(watch)}/baseline`,
    follow: `/api/v1/runs?automation=${encodeURIComponent(watch)}&limit=1`,
  });
}

export function findingsPage(args: {
  watch: string;
  view: FindingView;
  findings: readonly FindingRecord[];
  counts: FindingCounts;
  token: string;
  /** The watch offers "run a baseline now". */
  baseline: boolean;
}): Html {
  const { watch, view } = args;
  const body = html`<main class="findings-page" data-automation="${watch}">
  <h2>Findings of ${watch}</h2>
  <p><a href="/automations/${encodeURIComponent(watch)}">back to the automation</a></p>
  ${args.baseline ? html`<div class="actions" id="findings-actions">${baselineButton(watch)}</div>` : ''}
  ${viewLinks(watch, view, args.counts)}
  ${findingsTable(args.findings, view)}
</main>`;
  return layout(args.token, `curupira: findings of ${watch}`, html`findings of ${watch}`, body);
}

/** The automation page's panel: counts and the link (only for a watch with findings tools or findings). */
export function findingsPanel(watch: string, counts: FindingCounts): Html {
  return html`<section class="panel" id="findings-panel">
  <h3>Findings</h3>
  <p><a href="${findingsPath(watch)}" id="findings-link">${counts.open} open</a> · <a href="${findingsPath(watch, 'resolved')}">${counts.resolved} resolved</a></p>
</section>`;
}

export async function findingCounts(ctx: ServerContext, watch: string): Promise<FindingCounts> {
  const all = await ctx.store.listFindings({ watch });
  const open = all.filter((f) => f.status === 'open').length;
  return { open, resolved: all.length - open };
}

export function parseFindingView(value: string | undefined): FindingView {
  if (value === undefined || value === '') return 'open';
  if ((FINDING_VIEWS as readonly string[]).includes(value)) return value as FindingView;
  throw new ApiError('bad_request', `unknown status '${value}': one of ${FINDING_VIEWS.join(', ')}`);
}

export function findingsPageRoutes(
  app: Hono,
  send: (c: never, page: Html) => Response,
  ctx: ServerContext,
): void {
  app.get('/automations/:name/findings', async (c) => {
    const name = c.req.param('name');
    if (!ctx.engine.currentSettings().automations.some((a) => a.id === name))
      throw new ApiError('automation_not_found', `no automation '${name}' is configured`);
    const view = parseFindingView(c.req.query('status'));
    const [findings, counts] = await Promise.all([
      ctx.store.listFindings({ watch: name, ...(view === 'all' ? {} : { status: view }) }),
      findingCounts(ctx, name),
    ]);
    const baseline = ctx.engine
      .automations()
      .some((a) => a.id === name && (a.scans ?? []).includes('baseline'));
    return send(
      c as never,
      findingsPage({ watch: name, view, findings, counts, token: ctx.token, baseline }),
    );
  });
}
