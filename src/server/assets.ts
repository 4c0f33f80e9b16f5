/**
 * The board's only assets, served by curupira itself (no CDN; works offline). Scripts never put
 * server text into markup: live updates swap in server-rendered (escaped) HTML, and live run
 * events are written with textContent.
 */

export const BOARD_CSS = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --line: #d8dde3; --muted: #667; --hot: #c62828; --warn: #a15c00; --ok: #2e7d32; }
@media (prefers-color-scheme: dark) { :root { --bg: #16181c; --card: #202329; --line: #343a42; --muted: #9aa; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: var(--bg); }
header.top { display: flex; gap: 1rem; align-items: baseline; padding: .6rem 1rem; border-bottom: 1px solid var(--line); }
header.top h1 { font-size: 1.1rem; margin: 0; }
header.top h1 a { color: inherit; text-decoration: none; }
.badge { padding: .1rem .5rem; border-radius: 1rem; border: 1px solid var(--line); color: inherit; text-decoration: none; }
.badge.hot { background: var(--hot); color: #fff; border-color: var(--hot); }
main.board { display: grid; grid-template-columns: repeat(4, minmax(220px, 1fr)); gap: .8rem; padding: .8rem; align-items: start; }
.column h2 { font-size: .95rem; margin: .2rem 0 .5rem; }
.count { color: var(--muted); font-weight: normal; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .6rem; margin-bottom: .5rem; overflow-wrap: anywhere; }
.card h3 { font-size: .95rem; margin: 0 0 .25rem; }
.card.paused { opacity: .7; }
.detail { color: var(--muted); font-size: .85rem; }
.detail.error, .detail.reason { color: var(--hot); }
.detail.warn { color: var(--warn); }
.detail.clip { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tag { font-size: .75rem; border: 1px solid var(--line); border-radius: 4px; padding: 0 .3rem; }
.status-succeeded .status, .status-merged .status { color: var(--ok); }
.status-failed .status, .status-timed_out .status, .status-stalled .status, .status-blocked .status, .status-escalated .status { color: var(--hot); }
.status-parked .status, .detail.retry { color: var(--warn); }
.actions { margin-top: .35rem; display: flex; gap: .3rem; flex-wrap: wrap; }
button.action { font: inherit; font-size: .8rem; padding: .1rem .5rem; cursor: pointer; }
button.danger { color: var(--hot); }
.empty, .muted { color: var(--muted); }
#connection { padding: 0 1rem; font-size: .8rem; }
main.run-page { padding: 1rem; max-width: 70rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
ol.conversation { list-style: none; padding: 0; }
.event { border-left: 3px solid var(--line); padding: .3rem .6rem; margin: .4rem 0; background: var(--card); }
.event.assistant { border-color: #3f51b5; }
.event.tool { border-color: var(--warn); }
.event.error { border-color: var(--hot); }
.event.meta { color: var(--muted); font-size: .85rem; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: .2rem 0; font: 13px/1.35 ui-monospace, monospace; }
main.message { padding: 2rem; }
main.fleet-page { padding: 1rem; }
table.fleet { border-collapse: collapse; width: 100%; background: var(--card); margin-bottom: 1rem; }
table.fleet th, table.fleet td { border-bottom: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
table.fleet th { color: var(--muted); font-weight: normal; font-size: .85rem; }
table.fleet td.num { text-align: right; white-space: nowrap; }
.health-healthy .health { color: var(--ok); }
.health-late .health { color: var(--warn); }
.health-gone .health { color: var(--hot); }
.health-stopped { color: var(--muted); }
`;

const COMMON_JS = `
const token = document.querySelector('meta[name="curupira-token"]').content;
async function post(url, body) {
  const headers = { authorization: 'Bearer ' + token };
  if (body) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method: 'POST', headers, body: body ? JSON.stringify(body) : undefined });
  return { response, answer: await response.json().catch(() => ({})) };
}
async function act(button) {
  button.disabled = true;
  try {
    let { response, answer } = await post(button.dataset.action);
    // The server names what an action would lose (a worktree's unpushed commits): ask first.
    if (response.status === 409 && answer.error && answer.error.code === 'confirmation_required') {
      const question = answer.error.message.split(' Send {')[0] + '\\n\\nRemove it anyway?';
      if (!confirm(question)) return;
      ({ response, answer } = await post(button.dataset.action, { confirm: true }));
    }
    if (!response.ok) alert((answer.error && answer.error.message) || ('failed: ' + response.status));
  } finally {
    button.disabled = false;
  }
  if (typeof refresh === 'function') refresh();
}
document.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (button) act(button);
});
`;

/**
 * Swaps in the server-rendered `#live` part of a page. A change notice that arrives while a
 * refresh is in flight is not dropped: one more refresh follows, so the page never stays on the
 * state before the last change. The swap waits while a pointer is held down, or a click whose
 * press and release landed on two different (old and new) buttons would be lost.
 */
const LIVE_JS = `
let pending = false;
let again = false;
// A press held longer than this (released outside the window, say) no longer holds the page.
let pressedAt = 0;
function holding() { return pressedAt !== 0 && Date.now() - pressedAt < 2000; }
async function swap(url, after) {
  if (pending || holding()) {
    if (!pending && !again) setTimeout(refresh, 2000);
    again = true;
    return;
  }
  pending = true;
  again = false;
  try {
    const response = await fetch(url, { headers: { authorization: 'Bearer ' + token } });
    const html = response.ok ? await response.text() : undefined;
    if (holding()) again = true;
    else if (html !== undefined) document.getElementById('live').outerHTML = html;
    if (after) after(response.ok ? undefined : 'refresh failed: ' + response.status);
  } catch {
    if (after) after('reconnecting…');
  } finally {
    pending = false;
  }
  if (again && !holding()) refresh();
}
document.addEventListener('pointerdown', () => { pressedAt = Date.now(); }, true);
function release() {
  pressedAt = 0;
  // After the click this release makes has been handled.
  if (again) setTimeout(refresh, 0);
}
document.addEventListener('pointerup', release, true);
document.addEventListener('pointercancel', release, true);
`;

export const BOARD_JS = `${COMMON_JS}${LIVE_JS}
function refresh() { return swap('/board/live'); }
const connection = document.getElementById('connection');
const source = new EventSource('/api/v1/events');
source.addEventListener('change', refresh);
source.onopen = () => { connection.textContent = 'live'; };
source.onerror = () => { connection.textContent = 'reconnecting…'; };
// Times on the cards (last check, next fire) move without a change notice.
setInterval(refresh, 30000);
`;

export const FLEET_JS = `${COMMON_JS}${LIVE_JS}
// Heartbeats change the fleet without a change notice: the page asks again every few seconds.
function refresh() {
  return swap('/fleet/live', (problem) => {
    document.getElementById('connection').textContent = problem ?? 'refreshed ' + new Date().toLocaleTimeString();
  });
}
setInterval(refresh, 5000);
`;

export const RUN_JS = `${COMMON_JS}
const main = document.querySelector('main.run-page');
const list = document.getElementById('conversation');
function item(cls, label, text, long) {
  const li = document.createElement('li');
  li.className = 'event ' + cls;
  if (label === null) {
    const pre = document.createElement('pre');
    pre.textContent = text;
    li.appendChild(pre);
  } else if (text === null) {
    li.textContent = label;
  } else {
    const details = document.createElement('details');
    if (!long) details.open = true;
    const summary = document.createElement('summary');
    summary.textContent = label;
    const pre = document.createElement('pre');
    pre.textContent = text;
    details.append(summary, pre);
    li.appendChild(details);
  }
  list.appendChild(li);
}
function show(e) {
  const long = (t) => t.length > ${300} || t.includes('\\n');
  switch (e.kind) {
    case 'session': return item('meta', 'session ' + e.sessionId, null);
    case 'assistant': return item('assistant', null, e.text.trim());
    case 'thinking': return item('thinking', 'thinking', e.text.trim(), true);
    case 'tool_call': return item('tool', 'tool call: ' + e.name, e.input, long(e.input));
    case 'tool_result': return item('tool' + (e.isError ? ' error' : ''), (e.isError ? 'tool error' : 'tool result') + ' (' + e.output.length + ' characters)', e.output, long(e.output));
    case 'usage': return item('meta', 'usage: ' + e.inputTokens + ' input (' + e.cachedInputTokens + ' cached), ' + e.outputTokens + ' output tokens', null);
    case 'error': return item('error', 'error: ' + e.message, null);
    case 'done': return item('meta', e.isError ? 'finished with an error' : 'finished', null);
  }
}
function refresh() { location.reload(); }
if (main.dataset.live === 'true') {
  const source = new EventSource(main.dataset.events);
  source.addEventListener('agent', (m) => show(JSON.parse(m.data)));
  source.addEventListener('run', (m) => { document.getElementById('run-status').textContent = JSON.parse(m.data).status; });
  source.addEventListener('end', () => { source.close(); setTimeout(() => location.reload(), 300); });
}
`;
