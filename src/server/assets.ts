/**
 * The board's only assets, served by curupira itself (no CDN; works offline). Scripts never put
 * server text into markup: live updates swap in server-rendered (escaped) HTML, and live run
 * events are written with textContent.
 */

export { BOARD_CSS } from './design/styles.js';

/** The pages' icon (a browser tab's): the letter c on the board's link blue. */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0550ae"/><path d="M21.5 11a7.5 7.5 0 1 0 0 10" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round"/></svg>
`;

/**
 * Actions on every page: a risky one (its button has `data-confirm`) asks first in a dialog that
 * names what happens; each shows its result in a notice, and one that causes a run (`data-follow`:
 * a runs query of the API) links to that run once it is recorded. No alert or confirm windows:
 * the page stays usable, and text from the server goes in with textContent only.
 */
const COMMON_JS = `
const token = document.querySelector('meta[name="curupira-token"]').content;
const auth = { authorization: 'Bearer ' + token };
const RESULTS = { resumed: 'its session resumes', polling: 'its item is found again at the next poll', fired: 'a run starts', cancelling: 'the agent is being stopped' };
function notice(text, ok) {
  let box = document.getElementById('feedback');
  if (!box) {
    box = document.createElement('div');
    box.id = 'feedback';
    box.setAttribute('aria-live', 'polite');
    document.body.appendChild(box);
  }
  const div = document.createElement('div');
  div.className = 'notice' + (ok ? '' : ' failed');
  div.setAttribute('role', ok ? 'status' : 'alert');
  div.textContent = text;
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'close';
  close.textContent = 'Close';
  close.style.marginLeft = '.5rem';
  close.addEventListener('click', () => div.remove());
  div.appendChild(close);
  box.appendChild(div);
  return div;
}
function confirmAction(text, label) {
  return new Promise((resolve) => {
    const dialog = document.createElement('dialog');
    dialog.className = 'confirm';
    dialog.setAttribute('aria-labelledby', 'confirm-title');
    const title = document.createElement('h2');
    title.id = 'confirm-title';
    title.textContent = label + '?';
    const p = document.createElement('p');
    p.textContent = text;
    const actions = document.createElement('div');
    actions.className = 'actions';
    const no = document.createElement('button');
    no.type = 'button';
    no.textContent = 'Keep as it is';
    no.dataset.answer = 'no';
    const yes = document.createElement('button');
    yes.type = 'button';
    yes.className = 'danger';
    yes.textContent = label;
    yes.dataset.answer = 'yes';
    actions.append(no, yes);
    dialog.append(title, p, actions);
    let answer = false;
    no.addEventListener('click', () => dialog.close());
    yes.addEventListener('click', () => { answer = true; dialog.close(); });
    dialog.addEventListener('close', () => { dialog.remove(); resolve(answer); });
    document.body.appendChild(dialog);
    dialog.showModal();
    no.focus();
  });
}
async function newest(url) {
  try {
    const response = await fetch(url, { headers: auth });
    const body = await response.json();
    return body.runs && body.runs[0] ? body.runs[0].id : '';
  } catch {
    return '';
  }
}
async function follow(url, before, box) {
  const line = document.createElement('div');
  line.textContent = 'waiting for its run…';
  box.insertBefore(line, box.lastChild);
  for (let i = 0; i < 60; i += 1) {
    const id = await newest(url);
    if (id && id > before) {
      line.textContent = 'run: ';
      const a = document.createElement('a');
      a.href = '/runs/' + encodeURIComponent(id);
      a.className = 'caused-run';
      a.textContent = id;
      line.appendChild(a);
      return;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  line.textContent = 'no run recorded yet (it may be waiting for a free slot)';
}
function outcome(label, body) {
  if (body.result) return label + ': ' + (RESULTS[body.result] || body.result);
  if (body.allowedBy) return label + ': allowed by ' + body.allowedBy + '; the item runs at once';
  if (body.paused === true) return label + ': paused';
  if (body.paused === false) return label + ': resumed';
  return label + ': done';
}
async function act(button) {
  const label = button.textContent;
  if (button.dataset.confirm && !(await confirmAction(button.dataset.confirm, label))) return;
  button.disabled = true;
  const before = button.dataset.follow ? await newest(button.dataset.follow) : '';
  try {
    // A removal the person already confirmed (the dialog named what is lost) is sent as confirmed.
    const confirmed = Boolean(button.dataset.confirm) && button.dataset.action.endsWith('/remove-worktree');
    let response = await fetch(button.dataset.action, confirmed
      ? { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ confirm: true }) }
      : { method: 'POST', headers: auth });
    let body = await response.json().catch(() => ({}));
    // The server names what the action would lose (a worktree's unpushed commits): ask, then confirm.
    if (response.status === 409 && body.error && body.error.code === 'confirmation_required') {
      const question = body.error.message.split(' Send {')[0];
      if (!(await confirmAction(question, label))) return;
      response = await fetch(button.dataset.action, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ confirm: true }),
      });
      body = await response.json().catch(() => ({}));
    }
    if (!response.ok) notice(label + ' failed: ' + ((body.error && body.error.message) || response.status), false);
    else {
      const box = notice(outcome(label, body), true);
      if (button.dataset.follow) follow(button.dataset.follow, before, box);
    }
  } catch {
    notice(label + ' failed: the server did not answer', false);
  } finally {
    button.disabled = false;
  }
  if (typeof refresh === 'function') refresh(button);
}
document.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (button) act(button);
});
`;

/** The automation and runs pages: an action that causes a run keeps its notice; others reload the page. */
export const ACTIONS_JS = `${COMMON_JS}
function refresh(button) { if (!button || !button.dataset.follow) setTimeout(() => location.reload(), 600); }
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
function refresh(button) { if (!button || !button.dataset.follow) location.reload(); }
if (main.dataset.live === 'true') {
  const source = new EventSource(main.dataset.events);
  source.addEventListener('agent', (m) => show(JSON.parse(m.data)));
  source.addEventListener('run', (m) => { document.getElementById('run-status').textContent = JSON.parse(m.data).status; });
  source.addEventListener('end', () => { source.close(); setTimeout(() => location.reload(), 300); });
}
`;
