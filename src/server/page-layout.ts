/** The frame of the board's secondary pages (an automation, the runs, a watch's findings). */
import { type Html, html, raw } from './html.js';

/** What every page's head links: its icon and the stylesheet (both served without the token: app.ts). */
export const HEAD_LINKS = raw(
  '<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">\n<link rel="stylesheet" href="/assets/board.css">',
);

/** A whole page: its title, the token its actions send, its body and the script it loads. */
export function page(title: string, token: string, body: Html, script: string): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="curupira-token" content="${token}">
<title>${title}</title>
${HEAD_LINKS}
</head>
<body>
${body}
<div id="feedback" aria-live="polite"></div>
<script src="/assets/${script}" defer></script>
</body>
</html>`;
}

/** A page: its token for the actions, its title, the crumb beside the name, and the body. */
export function layout(token: string, title: string, crumb: Html, body: Html): Html {
  return page(
    title,
    token,
    html`<header class="top"><h1><a href="/">curupira</a></h1><span class="crumb">${crumb}</span><a class="badge" href="/runs">all runs</a></header>
${body}`,
    'actions.js',
  );
}
