/** The figures (figures.ts) as HTML: the board header's totals, an automation's panel, per profile. */

import { RUN_OUTCOME_CLASSES } from '../core/outcome.js';
import { formatCost } from '../cost/prices.js';
import { duration, type FigureSet, type Figures, percent } from './figures.js';
import { type Html, html } from './html.js';

function tokens(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  return String(n);
}

/** The board header's fleet-wide totals over the window: runs, merged PRs, merge rate, cost per merged PR. */
export function headerTotals(set: FigureSet | undefined): Html | '' {
  if (!set) return '';
  const t = set.total;
  return html`<div class="totals" id="totals" title="last 7 days, every automation">
  <span><b>${t.runs}</b> runs</span>
  <span><b>${t.pullRequestsMerged}</b>/<b>${t.pullRequestsOpened}</b> PRs merged</span>
  <span>merge rate <b>${percent(t.mergeRate)}</b></span>
  <span><b>${formatCost(t.costUsd)}</b> spent</span>
  <span><b>${formatCost(t.costPerMergedUsd)}</b> per merged PR</span>
</div>`;
}

/** A failed settings reload, shown until a reload succeeds. */
export function reloadBanner(error: { message: string; at: string } | undefined): Html | '' {
  if (!error) return '';
  return html`<div class="banner" id="reload-error" role="alert"><strong>The settings file did not reload</strong> (${error.at.slice(0, 19).replace('T', ' ')} UTC): curupira keeps running with the last good settings until the file is fixed.<pre>${error.message}</pre></div>`;
}

function figure(label: string, value: string, key: string): Html {
  return html`<div class="figure" data-figure="${key}"><span class="label">${label}</span><span class="value">${value}</span></div>`;
}

export function figureTiles(f: Figures): Html {
  return html`<div class="figures">
  ${figure('runs', String(f.runs), 'runs')}
  ${figure('PRs opened', String(f.pullRequestsOpened), 'opened')}
  ${figure('PRs merged', String(f.pullRequestsMerged), 'merged')}
  ${figure('merge rate', percent(f.mergeRate), 'merge-rate')}
  ${figure('median time to merge', duration(f.medianToMergeMs), 'time-to-merge')}
  ${figure('median run time', duration(f.medianDurationMs), 'run-time')}
  ${figure('cost', formatCost(f.costUsd), 'cost')}
  ${figure('cost per run', formatCost(f.costPerRunUsd), 'cost-per-run')}
  ${figure('cost per merged PR', formatCost(f.costPerMergedUsd), 'cost-per-merged')}
  ${figure('tokens in / out', `${tokens(f.tokens.input)} / ${tokens(f.tokens.output)}`, 'tokens')}
</div>
<div class="outcomes">${RUN_OUTCOME_CLASSES.filter((c) => f.byOutcome[c] > 0).map(
    (c) => html`<span class="pill outcome-${c}" data-outcome-count="${c}">${c} ${f.byOutcome[c]}</span>`,
  )}</div>`;
}

/** The same figures per agent profile, so two agents on one automation can be compared. */
export function profileTable(set: FigureSet): Html {
  const rows = Object.entries(set.byProfile);
  if (rows.length === 0) return html`<p class="empty">no runs in this window</p>`;
  return html`<div class="table-wrap"><table class="figures-by-profile">
<thead><tr><th scope="col">agent profile</th><th scope="col" class="num">runs</th><th scope="col" class="num">success</th><th scope="col" class="num">failure</th><th scope="col" class="num">PRs merged / opened</th><th scope="col" class="num">merge rate</th><th scope="col" class="num">median to merge</th><th scope="col" class="num">cost per run</th><th scope="col" class="num">cost per merged PR</th></tr></thead>
<tbody>${rows.map(
    ([profile, f]) =>
      html`<tr data-profile="${profile}"><th scope="row">${profile}</th><td class="num">${f.runs}</td><td class="num">${f.byOutcome.success}</td><td class="num">${f.byOutcome.failure}</td><td class="num">${f.pullRequestsMerged} / ${f.pullRequestsOpened}</td><td class="num">${percent(f.mergeRate)}</td><td class="num">${duration(f.medianToMergeMs)}</td><td class="num">${formatCost(f.costPerRunUsd)}</td><td class="num">${formatCost(f.costPerMergedUsd)}</td></tr>`,
  )}</tbody></table></div>`;
}
