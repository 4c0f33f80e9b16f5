/** The page a browser gets without the board's token: where the token is and how to open the board. */

import { type Html, html } from './html.js';
import { HEAD_LINKS } from './page-layout.js';

export function tokenPage(tokenFile: string | null, origin: string, wrongToken: boolean): Html {
  const file = tokenFile ?? '<state folder>/serve-token';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Token needed</title>
${HEAD_LINKS}
</head>
<body>
<main class="message" id="token-page">
<h1>Token needed</h1>
${wrongToken ? html`<p class="error" role="alert">The token in the address is not this board's token.</p>` : ''}
<p>This board answers only to its token, made by the first <code>curupira serve</code> and kept in the file</p>
<p><code id="token-file">${file}</code></p>
<p>(readable only by the user who runs <code>curupira serve</code>). To open the board, visit it once with the token in the address; the browser then keeps it in a cookie for this site and the address drops it:</p>
<p><code id="open-with">${origin}/?token=$(cat ${file})</code></p>
<p class="muted">Or run <code>curupira serve</code> again: its first start prints the whole address. Scripts and the API send <code>Authorization: Bearer &lt;token&gt;</code> instead.</p>
</main>
</body>
</html>`;
}
