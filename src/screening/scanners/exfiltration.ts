/**
 * exfiltration: secrets paired with a way out. A secret source (environment dumps, `$GITHUB_TOKEN`
 * and other `*_TOKEN` / `*_KEY` variables, `${{ secrets.X }}`, SSH keys, `.netrc`,
 * `~/.aws/credentials`, `.git-credentials`, `.npmrc`, `/proc/self/environ`, "your environment
 * variables"…) within 300 characters of a sink (curl, wget, nc, `fetch(`, `requests.post`, a URL, a
 * webhook or paste service, or "post/paste/include it in a comment / the PR description").
 *
 * - `secret-to-network` (critical): source and a network sink in prose.
 * - `secret-to-comment` (critical): source and "put it in a comment / PR / commit" in prose.
 * - `secret-to-network` in code (high): a command in a code block that ships secrets out is what a
 *   "run this to reproduce" attack looks like; it drops to low when the field discusses an attack
 *   (a security report quoting the payload) or when every URL in reach is a well-known API host the
 *   token is meant for (`curl -H "Authorization: token $GITHUB_TOKEN" https://api.github.com/…`).
 */
import { DISCUSSION_CUE, spaced } from '../lexicon.js';
import type { Hit, Scanner, Severity, TextView } from '../types.js';

const SOURCE =
  /\$\{\{\s*secrets\.[A-Za-z_][\w]*|\$\{?\s*(?:GITHUB_TOKEN|GH_TOKEN|ACTIONS_RUNTIME_TOKEN|ACTIONS_ID_TOKEN_REQUEST_TOKEN|NPM_TOKEN|NODE_AUTH_TOKEN|OPENAI_API_KEY|ANTHROPIC_API_KEY|AWS_SECRET_ACCESS_KEY|AWS_ACCESS_KEY_ID|AWS_SESSION_TOKEN|[A-Z][A-Z0-9_]*(?:_TOKEN|_SECRET|_PASSWORD|_PASSWD|_API_KEY|_ACCESS_KEY|_PRIVATE_KEY|_CREDENTIALS?|_KEY))\b|\$\(\s*(?:env|printenv|set|cat\s+[^)]{1,80})\s*\)|`\s*(?:env|printenv)\s*`|\b(?:printenv|env|set|export\s+-p)\s*(?:\|(?!\s*(?:grep|sort|head|tail|less|wc|cut)\b)|>|2>&1\s*\|)|\/proc\/(?:self|\d+|\*)\/environ|\.ssh\/(?:id_[a-z0-9]+|authorized_keys|config)?|\bid_(?:rsa|ed25519|ecdsa|dsa)(?:\.pub)?\b|\.netrc\b|\.aws\/(?:credentials|config)\b|\.git-credentials\b|\.npmrc\b|\.pypirc\b|\.docker\/config\.json|\.config\/gh\/hosts\.ya?ml|\.kube\/config|\bprocess\.env\b|\bos\.environ\b|\bENV\[|(?<![\w.])\.env(?:\.local|\.production)?\b/gi;

const SOURCE_GATE =
  /\$[{(A-Za-z]|`\s*(?:env|printenv)|\b(?:printenv|env|set|export)\s*(?:\||>|2>|-p)|\/proc\/|\.ssh|\bid_(?:rsa|ed|ec|dsa)|\.netrc|\.aws\/|\.git-cred|\.npmrc|\.pypirc|\.docker\/|\.config\/gh|\.kube\/|process\.env|os\.environ|ENV\[|\.env\b/i;
const SOURCE_WORDS_GATE =
  /environment\s+variables|env\s+vars|secrets|api\s+keys?|tokens?\b|credential|private\s+keys?|ssh\s+keys?|variables\s+d|variáveis|Umgebungs|Zugangs|переменн|ключи|токен|环境变量|環境変数|令牌|密钥|トークン|jetons|identifiants|segredos|credenc/i;

/** Secrets named in words: only count with a verb that sends them. */
const SOURCE_WORDS = spaced(
  /\b(?:all\s+(?:of\s+)?)?(?:the\s+|your\s+|its\s+|every\s+)?(?:environment\s+variables|env\s+vars|secrets|api\s+keys?|access\s+tokens?|credentials|private\s+keys?|ssh\s+keys?|github\s+token|gh\s+token|tokens)\b|variables\s+de\s+entorno|variáveis\s+de\s+ambiente|variables\s+d['’]environnement|Umgebungsvariablen|переменные\s+окружения|环境变量|環境変数|(?:tus|sus|los)\s+(?:tokens|secretos|credenciales)|(?:seus|os)\s+(?:tokens|segredos)|credenciais|(?:tes|vos|les)\s+(?:jetons|tokens|secrets|identifiants)|(?:deine|die)\s+(?:Tokens|Secrets|Zugangsdaten)|токен[ыа]?|ключи|令牌|密钥|トークン/giu,
);

const SEND = spaced(
  /\b(?:send|sends|post|upload|exfiltrate|forward|pipe|transmit|leak|submit|include|share|dump|paste|attach|beacon|ping|curl|wget)\b|envía|envia|manda|sube|envie|mande|envoie|envoyez|sende|schicke|lade\s+\S+\s+hoch|отправь|отправьте|перешли|загрузи|发送|上传|发到|送信|送って|アップロード/iu,
);

const NETWORK_SINK =
  /\b(?:curl|wget|nc|ncat|netcat|socat|httpie|Invoke-WebRequest|Invoke-RestMethod|iwr|scp|rsync|ftp|sftp|telnet)\b|\bfetch\s*\(|\baxios\.(?:post|get|put)\b|\brequests\.(?:post|get|put)\b|\burllib\.request\b|\bhttp\.request\b|https?:\/\/[^\s)>\]"'`]+|\b(?:webhook\.site|pastebin\.com|hastebin|transfer\.sh|ngrok\.io|ngrok-free\.app|requestbin|pipedream\.net|burpcollaborator\.net|interact\.sh|oast\.\w+|discord(?:app)?\.com\/api\/webhooks)\b/giu;

const COMMENT_SINK = spaced(
  /\b(?:post|paste|include|put|add|write|leave|share|publish|upload|send|dump|print|output|attach|reply with|list)\b(?:[^.\n]|\.(?=\S)){0,80}?\b(?:in|into|as|to|on)\s+(?:a|the|this|your|an)?\s*(?:new\s+|public\s+|follow-up\s+)?(?:comment|reply|pr|pull request|pr description|pull request description|pr body|issue|commit message|commit|gist|discussion|release notes)\b|(?:publica|pega|incluye|escribe|envía|envia|publique|cole|inclua|escreva|envie|poste|colle|inclus|écris|publie|envoie|poste|füge|schreibe|poste|sende|опубликуй|вставь|напиши|отправь|добавь)[^.\n]{0,80}?(?:comentario|comentário|commentaire|Kommentar|комментари|PR|pull request)|(?:发|贴|写|放)(?:到|在)(?:评论|PR|拉取请求)|コメントに(?:貼|書|投稿)/giu,
);

const TRUSTED_HOSTS =
  /^https?:\/\/(?:api\.github\.com|github\.com|uploads\.github\.com|raw\.githubusercontent\.com|registry\.npmjs\.org|npm\.pkg\.github\.com|ghcr\.io|localhost|127\.0\.0\.1|\[::1\]|api\.openai\.com|api\.anthropic\.com|pypi\.org|upload\.pypi\.org|sts\.amazonaws\.com|[\w.-]*\.amazonaws\.com)(?:[:/]|$)/i;

const WINDOW = 300;

interface Sink {
  index: number;
  kind: 'tool' | 'url' | 'comment';
  trusted: boolean;
  code: boolean;
}

function sinksOf(view: TextView): Sink[] {
  const sinks: Sink[] = [];
  for (const match of view.text.matchAll(NETWORK_SINK)) {
    const url = /^https?:/i.test(match[0]);
    sinks.push({
      index: match.index,
      kind: url ? 'url' : 'tool',
      trusted: url && TRUSTED_HOSTS.test(match[0]),
      code: view.inCode(match.index),
    });
  }
  for (const match of view.prose.matchAll(COMMENT_SINK))
    sinks.push({ index: match.index, kind: 'comment', trusted: false, code: false });
  return sinks;
}

function scan(view: TextView): Hit[] {
  const hits: Hit[] = [];
  const { text } = view;
  // Sources are rarer than sinks (URLs are everywhere): find them first, behind cheap gates.
  const sources: Array<{ offset: number; length: number; words: boolean }> = [];
  if (SOURCE_GATE.test(text))
    for (const match of text.matchAll(SOURCE))
      sources.push({ offset: match.index, length: match[0].length, words: false });
  if (SOURCE_WORDS_GATE.test(view.prose))
    for (const match of view.prose.matchAll(SOURCE_WORDS))
      sources.push({ offset: match.index, length: match[0].length, words: true });
  if (sources.length === 0) return hits;
  const sinks = sinksOf(view);
  if (sinks.length === 0) return hits;
  // Whether the field discusses an attack: asked only when a hit needs it (the cue list is long).
  let cue: boolean | undefined;
  const discussed = () => (cue ??= DISCUSSION_CUE.test(text));
  sources.sort((a, b) => a.offset - b.offset);
  let lastReported = -WINDOW;
  for (const source of sources) {
    const { offset } = source;
    if (offset - lastReported < WINDOW) continue;
    const from = Math.max(0, offset - WINDOW);
    const around = text.slice(from, offset + source.length + WINDOW);
    const sending = SEND.test(around);
    const near = sinks.filter(
      (sink) =>
        Math.abs(sink.index - offset) <= WINDOW &&
        (sink.kind === 'comment' || (sink.kind === 'tool' && !source.words) || sending),
    );
    if (near.length === 0) continue;
    const urls = near.filter((sink) => sink.kind === 'url');
    const comments = near.some((sink) => sink.kind === 'comment');
    const untrustedUrl = urls.some((sink) => !sink.trusted);
    const untrusted =
      untrustedUrl || comments || (urls.length === 0 && near.some((sink) => sink.kind === 'tool'));
    const onlyTrusted = !untrusted;
    const sourceInCode = view.inCode(offset);
    const rule = near.every((sink) => sink.kind === 'comment') ? 'secret-to-comment' : 'secret-to-network';
    let severity: Severity;
    if (!sourceInCode && near.some((sink) => !sink.code)) {
      severity = onlyTrusted ? 'low' : discussed() ? 'medium' : 'critical';
    } else {
      severity = onlyTrusted || discussed() || !untrusted ? 'low' : 'high';
    }
    hits.push({ rule, severity, offset, length: source.length });
    lastReported = offset;
  }
  return hits;
}

/** True when `text` pairs a secret with a way out (for decoded blobs and hidden regions). */
export function hasExfiltration(text: string): boolean {
  return scan({ text, prose: text, hasCode: false, inCode: () => false }).some(
    (hit) => hit.severity !== 'low',
  );
}

export const exfiltration: Scanner = {
  id: 'exfiltration',
  summary: 'environment, tokens, SSH keys, .netrc or cloud credentials sent to a URL or posted on GitHub',
  scan,
};
