/** The board's components, written only with the tokens of tokens.ts. */

import { STATUS_COLOURS, TOKENS_CSS } from './tokens.js';

const OUTCOME_CSS = STATUS_COLOURS.map((c) => `.outcome-${c} { --tone: var(--${c}); }`).join('\n');

const COMPONENTS_CSS = `
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: var(--text-md)/1.45 var(--font); color: var(--text); background: var(--bg); }
a { color: var(--link); text-decoration: none; }
a:hover { text-decoration: underline; }
.detail a, .meta a, .gate a, dd a, p a, li a, td a, .notice a { text-decoration: underline; text-underline-offset: 2px; text-decoration-thickness: 1px; }
:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; border-radius: 3px; }
h1, h2, h3 { line-height: 1.25; }
code, pre, .mono { font-family: var(--mono); font-size: var(--text-sm); }
.muted, .empty { color: var(--muted); }
.empty { font-size: var(--text-sm); padding: var(--space-2) 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }

/* Header */
header.top { display: flex; flex-wrap: wrap; gap: var(--space-2) var(--space-4); align-items: center; padding: var(--space-3) var(--space-4); background: var(--surface); border-bottom: 1px solid var(--line); }
header.top h1 { font-size: var(--text-lg); margin: 0; font-weight: 650; letter-spacing: .01em; }
header.top h1 a { color: inherit; }
header.top .crumb { color: var(--muted); overflow-wrap: anywhere; }
#summary { color: var(--muted); font-size: var(--text-sm); }
.badge { display: inline-flex; align-items: center; gap: var(--space-1); padding: 2px var(--space-2); border-radius: 999px; border: 1px solid var(--line); color: var(--text); font-size: var(--text-sm); background: var(--surface); }
a.badge:hover { text-decoration: none; border-color: var(--line-strong); }
.badge.hot { color: var(--failure); border-color: var(--failure); font-weight: 600; }
.totals { display: flex; flex-wrap: wrap; gap: var(--space-1) var(--space-3); font-size: var(--text-sm); color: var(--muted); margin-left: auto; }
.totals b { color: var(--text); font-weight: 600; }
.banner { margin: var(--space-3) var(--space-4) 0; padding: var(--space-2) var(--space-3); border: 1px solid var(--failure); border-left-width: 4px; border-radius: var(--radius-sm); background: var(--surface); color: var(--text); }
.banner strong { color: var(--failure); }
.banner pre { margin-top: var(--space-1); }

/* Board */
main.board { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 270px), 1fr)); gap: var(--space-4); padding: var(--space-4); align-items: start; }
.column h2 { font-size: var(--text-sm); text-transform: uppercase; letter-spacing: .05em; color: var(--muted); margin: 0 0 var(--space-2); display: flex; gap: var(--space-2); align-items: center; }
.column h2 .count { background: var(--surface-2); color: var(--text); border-radius: 999px; padding: 0 var(--space-2); font-size: var(--text-xs); }
.column .more { font-size: var(--text-sm); }
.card { --tone: var(--line-strong); background: var(--surface); border: 1px solid var(--line); border-left: 4px solid var(--tone); border-radius: var(--radius); padding: var(--space-2) var(--space-3); margin-bottom: var(--space-2); box-shadow: var(--shadow); overflow-wrap: anywhere; min-width: 0; }
.card.automation { border-left-color: var(--running); }
.card.automation.paused { border-left-color: var(--neutral); }
.card h3 { font-size: var(--text-md); font-weight: 600; margin: 0 0 var(--space-1); }
.card h3 a { color: var(--text); }
.card h3 .number { color: var(--muted); font-weight: 400; }
.card .meta { display: flex; flex-wrap: wrap; gap: 2px var(--space-2); align-items: center; font-size: var(--text-sm); color: var(--muted); }
.detail { color: var(--muted); font-size: var(--text-sm); margin-top: 2px; }
.detail.error, .detail.reason { color: var(--text); }
.card .reason { border-left: 2px solid var(--tone); padding-left: var(--space-2); margin: var(--space-1) 0; }
.detail.warn, .warn { color: var(--attention); }
.detail.retry { color: var(--parked); }
.error { color: var(--failure); }
.detail.clip, .clip { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.branch { font-family: var(--mono); font-size: var(--text-xs); }
.tag { display: inline-block; font-size: var(--text-xs); border: 1px solid var(--line); border-radius: var(--radius-sm); padding: 0 var(--space-1); color: var(--muted); font-weight: 500; }
.pill, .tag.status { display: inline-flex; align-items: center; gap: 4px; font-size: var(--text-xs); font-weight: 600; color: var(--tone, var(--neutral)); border: 1px solid currentColor; border-radius: 999px; padding: 0 var(--space-2); background: var(--surface); white-space: nowrap; }
.pill::before, .tag.status::before { content: ""; width: 6px; height: 6px; border-radius: 50%; background: currentColor; }
${OUTCOME_CSS}
.gate { font-size: var(--text-sm); }
.attempts { margin-top: var(--space-1); font-size: var(--text-sm); }
.attempts summary { cursor: pointer; color: var(--muted); }
.attempts ol { margin: var(--space-1) 0 0; padding-left: var(--space-4); }
.attempts li { margin: 2px 0; }

/* Buttons and actions */
.actions { margin-top: var(--space-2); display: flex; gap: var(--space-1); flex-wrap: wrap; }
button, .button { font: inherit; font-size: var(--text-sm); line-height: 1.4; padding: 3px var(--space-3); border-radius: var(--radius-sm); border: 1px solid var(--line-strong); background: var(--surface-2); color: var(--text); cursor: pointer; min-height: 28px; }
button:hover, .button:hover { border-color: var(--text); text-decoration: none; }
button:disabled { opacity: .6; cursor: progress; }
button.danger { color: var(--failure); border-color: var(--failure); background: var(--surface); }
button.primary { background: var(--running); border-color: var(--running); color: #fff; }
#feedback { position: fixed; bottom: var(--space-4); right: var(--space-4); left: auto; max-width: min(30rem, calc(100vw - 2rem)); z-index: 10; display: flex; flex-direction: column; gap: var(--space-2); }
.notice { background: var(--surface); color: var(--text); border: 1px solid var(--line); border-left: 4px solid var(--success); border-radius: var(--radius); padding: var(--space-2) var(--space-3); box-shadow: 0 4px 12px rgba(0, 0, 0, .15); font-size: var(--text-sm); }
.notice.failed { border-left-color: var(--failure); }
dialog.confirm { border: 1px solid var(--line); border-radius: var(--radius); background: var(--surface); color: var(--text); max-width: min(32rem, calc(100vw - 2rem)); padding: var(--space-4); }
dialog.confirm::backdrop { background: rgba(0, 0, 0, .4); }
dialog.confirm h2 { font-size: var(--text-lg); margin: 0 0 var(--space-2); }
dialog.confirm .actions { justify-content: flex-end; }

/* Forms: filters */
form.filters { display: flex; flex-wrap: wrap; gap: var(--space-2); align-items: end; margin: var(--space-2) 0 var(--space-3); }
form.filters label { display: flex; flex-direction: column; font-size: var(--text-xs); color: var(--muted); gap: 2px; }
input, select { font: inherit; font-size: var(--text-sm); padding: 3px var(--space-2); border: 1px solid var(--line-strong); border-radius: var(--radius-sm); background: var(--surface); color: var(--text); min-height: 28px; max-width: 100%; }
.pager { display: flex; gap: var(--space-3); align-items: center; margin: var(--space-3) 0; font-size: var(--text-sm); }

/* Pages */
main.page, main.run-page, main.fleet-page, main.automation-page, main.runs-page, main.findings-page { padding: var(--space-4); max-width: 78rem; margin: 0 auto; }
main.page h2, main.run-page h2, main.automation-page h2, main.runs-page h2, main.findings-page h2 { font-size: var(--text-xl); margin: var(--space-2) 0 var(--space-3); }
section.panel { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); padding: var(--space-3) var(--space-4); margin-bottom: var(--space-4); min-width: 0; }
section.panel > h3, main h3 { font-size: var(--text-md); margin: 0 0 var(--space-2); }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: var(--space-1) var(--space-4); margin: 0; }
dt { color: var(--muted); font-size: var(--text-sm); }
dd { margin: 0; overflow-wrap: anywhere; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); gap: var(--space-2); }
.figure { background: var(--surface-2); border-radius: var(--radius-sm); padding: var(--space-2) var(--space-3); }
.figure .label { display: block; font-size: var(--text-xs); color: var(--muted); }
.figure .value { display: block; font-size: var(--text-lg); font-weight: 650; font-variant-numeric: tabular-nums; }
.outcomes { display: flex; flex-wrap: wrap; gap: var(--space-1) var(--space-2); margin: var(--space-2) 0; }
.table-wrap { overflow-x: auto; }
table.fleet, table.runs, table.findings, table.figures-by-profile { border-collapse: collapse; width: 100%; background: var(--surface); margin-bottom: var(--space-3); font-size: var(--text-sm); }
table th, table td { border-bottom: 1px solid var(--line); padding: var(--space-1) var(--space-2); text-align: left; vertical-align: top; overflow-wrap: anywhere; }
table th { color: var(--muted); font-weight: 500; font-size: var(--text-xs); text-transform: uppercase; letter-spacing: .04em; }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.health-healthy .health { color: var(--success); }
.health-late .health { color: var(--attention); }
.health-gone .health { color: var(--failure); }
.health-stopped { color: var(--muted); }
.review-notes { list-style: none; padding: 0; margin: 0 0 var(--space-3); }
.attempt-list { list-style: none; padding: 0; margin: 0 0 var(--space-3); font-size: var(--text-sm); }
.attempt-list li { padding: var(--space-1) 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.attempt-list .detail { display: block; color: var(--muted); }
.review-note { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius-sm); padding: var(--space-2) var(--space-3); margin-bottom: var(--space-2); font-size: var(--text-sm); }
.review-note .who { font-weight: 600; }
.review-note.untrusted { border-style: dashed; }
.review-note blockquote { margin: var(--space-1) 0 0; overflow-wrap: anywhere; }
.severity-critical td:first-child, .severity-high td:first-child { color: var(--failure); font-weight: 600; }
#connection { padding: 0 var(--space-4) var(--space-4); font-size: var(--text-xs); }

/* Transcript */
ol.conversation { list-style: none; padding: 0; margin: 0; }
.event { border-left: 3px solid var(--line); padding: var(--space-1) var(--space-3); margin: var(--space-2) 0; background: var(--surface); border-radius: 0 var(--radius-sm) var(--radius-sm) 0; }
.event.assistant { border-color: var(--running); }
.event.tool { border-color: var(--attention); }
.event.error { border-color: var(--failure); }
.event.meta { color: var(--muted); font-size: var(--text-sm); }
details > summary { cursor: pointer; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: var(--space-1) 0; line-height: 1.4; }

/* Diff */
.diff-file { border: 1px solid var(--line); border-radius: var(--radius-sm); margin-bottom: var(--space-2); background: var(--surface); }
.diff-file > summary { padding: var(--space-1) var(--space-2); background: var(--surface); border-bottom: 1px solid var(--line); font-family: var(--mono); font-size: var(--text-sm); overflow-wrap: anywhere; }
.diff-file .stat-add { color: var(--success); }
.diff-file .stat-del { color: var(--failure); }
pre.hunk { margin: 0; padding: var(--space-1) 0; white-space: pre; overflow-x: auto; font-size: var(--text-xs); }
pre.hunk span { display: block; padding: 0 var(--space-2); }
pre.hunk .add { background: color-mix(in srgb, var(--success) 12%, transparent); }
pre.hunk .del { background: color-mix(in srgb, var(--failure) 12%, transparent); }
pre.hunk .at { color: var(--muted); }

/* Token page and messages */
main.message { max-width: 40rem; margin: 10vh auto; padding: var(--space-6); background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); }
main.message h1 { font-size: var(--text-xl); margin-top: 0; }
main.message code { background: var(--surface-2); padding: 1px 4px; border-radius: 3px; overflow-wrap: anywhere; }

@media (max-width: 600px) {
  header.top { padding: var(--space-2) var(--space-3); }
  .totals { margin-left: 0; }
  main.board, main.page, main.run-page, main.fleet-page, main.automation-page, main.runs-page, main.findings-page { padding: var(--space-3); }
  dl.facts { grid-template-columns: minmax(0, 1fr); }
  dt { margin-top: var(--space-1); }
  table.runs .optional { display: none; }
}
`;

export const BOARD_CSS = `${TOKENS_CSS}${COMPONENTS_CSS}`;
