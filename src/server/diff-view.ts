/**
 * A run's diff on its page: files and hunks, every line escaped; a large file folded, a huge diff
 * cut with a note. The diff is the agent's work, so it is untrusted text like a transcript.
 */

import { type Html, html } from './html.js';

export interface DiffFile {
  path: string;
  /** The old path of a rename. */
  from: string | null;
  added: number;
  removed: number;
  binary: boolean;
  hunks: string[][];
}

/** Files over this many lines start folded. */
const FOLD_LINES = 200;
/** Lines shown in all; the rest is cut. */
const MAX_LINES = 5000;

function unquote(path: string): string {
  return path.startsWith('"') && path.endsWith('"') ? path.slice(1, -1) : path;
}

export function parseDiff(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  let hunk: string[] | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const match = /^diff --git ("?a\/.+?"?) ("?b\/.+"?)$/.exec(line);
      const path = match ? unquote(match[2]!).replace(/^b\//, '') : line.slice(11);
      file = { path, from: null, added: 0, removed: 0, binary: false, hunks: [] };
      files.push(file);
      hunk = undefined;
      continue;
    }
    if (!file) continue;
    if (line.startsWith('@@')) {
      hunk = [line];
      file.hunks.push(hunk);
      continue;
    }
    if (!hunk) {
      if (line.startsWith('rename from ')) file.from = line.slice(12);
      if (line.startsWith('Binary files ')) file.binary = true;
      continue;
    }
    if (line.startsWith('+')) file.added += 1;
    else if (line.startsWith('-')) file.removed += 1;
    else if (line === '') continue;
    hunk.push(line);
  }
  return files;
}

function lineClass(line: string): string {
  if (line.startsWith('@@')) return 'at';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return 'ctx';
}

export function diffSection(
  files: readonly DiffFile[] | undefined,
  base: string | null,
  note: string | null,
): Html {
  if (!files)
    return html`<section class="panel" id="diff"><h3>Changes</h3><p class="muted">${note ?? 'No diff is available for this run.'}</p></section>`;
  let budget = MAX_LINES;
  const added = files.reduce((n, f) => n + f.added, 0);
  const removed = files.reduce((n, f) => n + f.removed, 0);
  const rendered = files.map((f) => {
    const lines = f.hunks.reduce((n, h) => n + h.length, 0);
    const shown = budget > 0;
    const body = !shown
      ? html`<p class="muted">not shown: the diff is longer than ${MAX_LINES} lines</p>`
      : f.binary
        ? html`<p class="muted">binary file</p>`
        : f.hunks.map((h) => {
            const cut = h.slice(0, Math.max(0, budget));
            budget -= h.length;
            return html`<pre class="hunk">${cut.map((l) => html`<span class="${lineClass(l)}">${l}</span>`)}</pre>`;
          });
    return html`<details class="diff-file"${lines <= FOLD_LINES && shown ? html` open` : ''} data-file="${f.path}"><summary>${f.from ? html`${f.from} → ` : ''}${f.path} <span class="stat-add">+${f.added}</span> <span class="stat-del">−${f.removed}</span>${lines > FOLD_LINES ? html` <span class="muted">(${lines} lines, folded)</span>` : ''}</summary>${body}</details>`;
  });
  return html`<section class="panel" id="diff">
  <h3>Changes <span class="muted">${files.length} file${files.length === 1 ? '' : 's'}, +${added} −${removed}${base ? html` against ${base}` : ''}</span></h3>
  ${files.length === 0 ? html`<p class="muted">The branch changes no file.</p>` : rendered}
</section>`;
}
