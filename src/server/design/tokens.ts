/**
 * The board's design tokens: every colour, type size, space and radius the pages use, as CSS custom
 * properties. Light by default, dark when the system asks for it (`prefers-color-scheme`). Status
 * colours follow the outcome classes of src/core/outcome.ts (`--success`, `--failure`, …) and keep a
 * contrast of at least 4.5:1 on both the page and a card.
 */

import type { RunOutcomeClass } from '../../core/outcome.js';

/** The outcome classes that have a colour of their own (each is a `--<class>` property). */
export const STATUS_COLOURS: readonly RunOutcomeClass[] = [
  'success',
  'failure',
  'attention',
  'blocked',
  'running',
  'parked',
  'neutral',
];

export const TOKENS_CSS = `
:root {
  color-scheme: light dark;
  --bg: #f6f8fa; --surface: #ffffff; --surface-2: #eef1f4; --line: #d0d7de; --line-strong: #afb8c1;
  --text: #1f2328; --muted: #57606a; --link: #0550ae; --focus: #0969da;
  --success: #1a7f37; --failure: #cf222e; --attention: #9a6700; --blocked: #8250df;
  --running: #0969da; --parked: #bc4c00; --neutral: #57606a;
  --font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif;
  --mono: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, monospace;
  --text-xs: .75rem; --text-sm: .8125rem; --text-md: .875rem; --text-lg: 1rem; --text-xl: 1.25rem;
  --space-1: .25rem; --space-2: .5rem; --space-3: .75rem; --space-4: 1rem; --space-6: 1.5rem;
  --radius: 8px; --radius-sm: 5px;
  --shadow: 0 1px 2px rgba(31, 35, 40, .06);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --surface: #161b22; --surface-2: #21262d; --line: #30363d; --line-strong: #484f58;
    --text: #e6edf3; --muted: #9198a1; --link: #58a6ff; --focus: #58a6ff;
    --success: #3fb950; --failure: #ff7b72; --attention: #d29922; --blocked: #bc8cff;
    --running: #58a6ff; --parked: #f0883e; --neutral: #9198a1;
    --shadow: none;
  }
}
`;
