/**
 * intent: what a stranger wants the agent to do, whatever the wording. The other scanners know the
 * shapes of known attacks ("ignore previous instructions", a role token, a secret next to a URL);
 * this one reads a request (an imperative, a polite request, or words addressed to the agent) and
 * asks what it is for:
 *
 * - `reveal-secret`: show, paste, send, commit or upload a token, key, password, credentials
 *   file or the environment.
 * - `weaken-controls`: change CI or repository controls so more runs or less is checked:
 *   `pull_request_target`, write-all permissions, secrets in a workflow, turning off branch
 *   protection, required checks, reviews, 2FA, secret scanning, adding an admin, a self-hosted
 *   runner for forks; or agent configuration that allows everything or never asks.
 * - `remote-instructions`: fetch a page and follow, execute or apply what it says.
 * - `run-installer`: a download piped to a shell (`curl … | sh`, `bash <(curl …)`, `iex (iwr …)`),
 *   a package from a URL or an unknown index, asked to be run.
 * - `unreviewed-action`: merge, approve, publish, push to main or force-push without review, CI or
 *   the maintainers; or a claim of authority ("as the owner", "the security team has authorised",
 *   "you are cleared to") attached to such an action or to a secret.
 * - `conceal`: keep what was done out of the PR, the commit message or the maintainers' sight.
 * - `override`: drop the instructions, rules or task given (looser than instruction-override:
 *   "forget everything you were told", "the operator's instructions are revoked").
 *
 * English, Spanish, Portuguese, French, German, Russian, Chinese and Japanese. The driver also runs
 * every scanner on a normalised copy of the text (text.ts: NFKC, look-alike letters, tag
 * characters and URL-encoding decoded), so a payload in confusables or percent-escapes is read.
 *
 * Severity: high when the request is directed (an imperative position, "please", "could you",
 * words to the agent in the same paragraph); a request in code is high when its line (or the
 * one above, or the prose before inline code) speaks to the agent, and not reported otherwise. In
 * a text that discusses attacks, a quoted request is medium.
 */
import { AGENT_VOCATIVE, DISCUSSION_CUE, hasImperativeLead, isQuoted } from '../lexicon.js';
import type { Hit, Scanner, Severity, TextView } from '../types.js';

interface Rule {
  rule: string;
  gate: RegExp;
  pattern: RegExp;
  /** The match must be directed at someone (see `directed`). Default true. */
  directed?: boolean;
  /** A second test on the match's sentence (the payload that makes the request dangerous). */
  needs?: RegExp;
  /** A test on the 240 characters after the match (the action a claim of authority asks for). */
  after?: RegExp;
}

/** A word boundary for Latin and Cyrillic words (JavaScript's `\b` knows ASCII only); none for CJK. */
const B = String.raw`(?<![A-Za-z\u00C0-\u024F\u0400-\u04FF0-9_])`;
const E = String.raw`(?![A-Za-z\u00C0-\u024F\u0400-\u04FF0-9_])`;
const SECRET = String.raw`(?:(?:github|gh|npm|node_auth|pypi|aws|api|access|auth|deploy|ssh|secret|private|personal access|anthropic|openai)[ _-]?)?(?:tokens?|api[ _-]?keys?|secrets?|credentials?|passwords?|private[ _-]keys?|ssh[ _-]keys?|deploy[ _-]keys?)|\.env(?![\w.-])|env(?:ironment)?[ _-]?(?:vars?|variables)|\bprocess\.env\b|\benv\b(?=\s+output)|~\/\.(?:ssh|aws|netrc|npmrc|git-credentials|config\/gh)[\w./-]*|\.git-credentials|\.netrc|\.npmrc|hosts\.yml|id_(?:rsa|ed25519|ecdsa)|[A-Z][A-Z0-9_]*_(?:TOKEN|SECRET|API_KEY|KEY|PASSWORD)\b|secrets\.[A-Z_]+|toJSON\(secrets\)|variables de entorno|variáveis de ambiente|variables d['’]environnement|Umgebungsvariablen|переменн\w+ окружения|环境变量|環境変数|credenciais|credenciales|secretos|segredos|jetons?|identifiants|Zugangsdaten|токен\w*|ключ\w*|密钥|令牌|凭据|トークン|APIキー|認証情報`;
const REVEAL = String.raw`(?:print|echo|show|display|reveal|tell|give|share|paste|post|send|dump|expose|leak|disclose|email|e-mail|forward|upload|exfiltrate|steal|attach|reply with|respond with|read out|mostrar|enviar|publicar|pegar|compartir|revelar|compartilhar|colar|afficher|envoyer|montrer|révéler|partager|zeigen|senden|schicken|posten|verraten|показать|отправить|выложить|envía|envia|manda|muestra|mostre|mostra|pega|publica|comparte|cole|publique|compartilhe|envoie|envoyez|montre|affiche|colle|publie|schicke|sende|zeige|poste|выведи|покажи|отправь|пришли|вставь|скинь|发送|发到|贴|显示|打印|送信|貼り付け|表示|見せ)`;
const WEAK_PAYLOAD =
  /\bignore the (?:repository )?(?:owners?|maintainers?)|follow only|only (?:follow|obey|take orders)|always approve|approve (?:every|all)|merge without|(?:full|root|unrestricted) access|access to (?:the )?(?:filesystem|file system|root|home)|(?:repository|all|the|every) secrets|exfiltrat|pull_request_target|write-all|permissions\s*:\s*write|contents\s*:\s*write|\bsecrets\.|toJSON\(secrets\)|\$\{\{\s*secrets|branch protection|protection rules?|required (?:status )?checks?|\b2FA\b|two-factor|secret scanning|push protection|approval (?:gate|step)|environment approval|manual approval|self-hosted|\badmin\b|Bash\(\*\)|dangerously|without (?:asking|confirmation|confirming|review|approval|waiting)|never ask|no confirmation|allow (?:all|every|any)|(?:any|every) (?:command|push from any fork)|from (?:any )?forks?|curl|wget|https?:\/\/|sin pedir confirmación|sem pedir confirmação|sans (?:demander|confirmation)|ohne (?:Bestätigung|Rückfrage)|permisos de escritura|permissões de escrita|droits d['’]écriture|Schreibrechte/i;
const CONTROL_OBJECT = String.raw`(?:workflows?|\.github\/workflows[\w./*-]*|CI\b|pipeline|release (?:workflow|script|process)|branch protection|protection rules?|required (?:status )?checks?|status checks|2FA(?: requirement)?|two-factor|secret scanning|push protection|CODEOWNERS|runs-on|runner|AGENTS\.md|CLAUDE\.md|\.claude\/[\w./-]*|\.mcp\.json|copilot-instructions\.md|\.cursorrules|settings\.json|\.npmrc|package\.json|postinstall|prepare script|deploy keys?|collaborators?|the (?:CodeQL|dependency-review) workflow|el workflow|o workflow|le workflow|den Workflow|воркфлоу|工作流)`;
const URL_RE = String.raw`(?:https?:\/\/[^\s)>\]"'\x60]+|\b[\w-]+\.(?:com|net|org|io|dev|sh|cc|app|fr|de|ru|cn|txt|md)\/[^\s)>\]"'\x60]*)`;
const FETCH = String.raw`(?:fetch|read|open|load|download|get|visit|go to|check|retrieve|pull|curl|grab|see|baixe|baja|descarga|lee|leia|abra|récupère|télécharge|lis|lade|hole|lies|öffne|скачай|загрузи|открой|прочитай|下载|打开|读取|ダウンロード|読んで|開いて)`;
const FOLLOW = String.raw`(?:follow|execute|run|apply|obey|carry out|do (?:everything|what(?:ever)? it says|as it says)|treat (?:it|that|them) as|use (?:it|them) as|comply|implement (?:them|it|the steps)|perform|sigue|síguelas|ejecuta|aplica|siga|siga-as|execute|aplique|suis|suivez|applique|appliquez|exécute|befolge|befolgen|führe|wende|выполни|следуй|примени|执行|按照|遵循|照做|従って|実行)`;
const INSTALL_PIPE = String.raw`(?:curl|wget|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]{0,200}?(?:https?:\/\/|\b[\w-]+\.[a-z]{2,}\/?)[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|(?:curl|wget)[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:python3?|node|perl)\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)|\biex\s*\(\s*(?:iwr|irm|Invoke-WebRequest|New-Object)|\|\s*iex\b|npm\s+(?:install|i)\s+(?:-g\s+)?https?:\/\/\S+\.tgz|pip3?\s+install\s+(?:[^\n]*\s)?--(?:extra-)?index-url\s+https?:\/\/(?!pypi\.org)`;
const SENSITIVE_ACTION = String.raw`(?:merge|approve|publish|release|deploy|push (?:directly |straight )?to (?:main|master)|push\b[^.\n]{0,30}\bmain\b|force-push|--force|tag v?\d|skip (?:the )?(?:review|ci|checks?|tests|audit)|enable auto-merge|add (?:my|the|a|user|account)\b[^.\n]{0,40}\b(?:admin|collaborator|owner|deploy key)|remove branch protection|disable|delete|print|reveal|show|send|post|upload)`;
const AUTHORITY = String.raw`(?:(?:i am|i'm|this is|it's me|writing as|speaking as|as)\s+(?:\w+\s+)?(?:from\s+)?(?:the|a|one of the|your)?\s*(?:owner|maintainers?|admins?|administrator|security team|platform (?:security )?team|lead maintainer|release manager|cto|ceo|github staff|trust\s*&\s*safety|operator)|(?:approved|authori[sz]ed|sanctioned|signed off|cleared) by (?:the )?(?:repo(?:sitory)? )?(?:owner|maintainers?|admins?|security team|core team|lead|@[\w-]+(?:\/[\w-]+)?)|(?:i am|i'm|we are|we're)\s+(?:hereby\s+)?(?:authori[sz]ing|allowing|permitting|instructing)\s+you\s+to|(?:you are|you're|the (?:bot|agent|assistant|automation) is|agents? (?:are|is))\s+(?:hereby\s+)?(?:authori[sz]ed|cleared|allowed|permitted|approved)\s+to|has (?:admin )?approval to|official (?:instruction|request|notice|directive)|compliance notice|i take (?:full )?responsibility|(?:no need to|you do not need to|you don't need to|don't need to) (?:wait|confirm|ask|check)|tienes permiso para|tiene permiso para|você tem permissão para|tu es autorisé|vous êtes autorisé|du bist berechtigt|du darfst|у тебя есть разрешение|你有权|あなたには権限)`;

const RULES: Rule[] = [
  {
    rule: 'reveal-secret',
    gate: new RegExp(SECRET, 'iu'),
    pattern: new RegExp(
      String.raw`${B}${REVEAL}${E}[^.!?\n]{0,80}?(?:${SECRET})|(?:${SECRET})[^.!?\n]{0,60}?\b(?:to|into|in|as|à|a|an|para|auf|на|到)\s+(?:a\s+|the\s+|my\s+|this\s+|un\s+|une\s+|um\s+)?(?:${URL_RE}|[\w.+-]+@[\w-]+\.\w+|comment|reply|public gist|gist|file named|PR description|pull request description|commentaire|comentario|comentário|Kommentar|комментари)|what(?:'s| is) (?:the|your) (?:api key|token|password|secret)|\b(?:run|execute)\b[^\n]{0,20}?\b(?:cat|type|Get-Content|less|more|head)\s+[^\n]{0,60}?(?:${SECRET})[^\n]{0,100}?\b(?:include|paste|post|share|send|put|add|attach)\b[^\n]{0,40}?\b(?:output|result|it|them|contents?)\b`,
      'giu',
    ),
  },
  {
    rule: 'weaken-controls',
    gate: new RegExp(CONTROL_OBJECT, 'i'),
    pattern: new RegExp(
      String.raw`${B}(?:add|change|edit|modify|update|switch|set|disable|turn off|remove|delete|drop|register|append|write|create|replace|make sure|configure|give|allow|modifica|cambia|añade|desactiva|elimina|modifique|altere|adicione|desative|remova|modifie|change|ajoute|désactive|supprime|ändere|füge|deaktiviere|lösche|измени|добавь|отключи|удали|修改|添加|禁用|删除|変更|追加|無効)${E}[^.!?\n]{0,120}?${CONTROL_OBJECT}`,
      'giu',
    ),
    needs: WEAK_PAYLOAD,
  },
  {
    rule: 'weaken-controls',
    gate: /disable|turn off|remove|delete|drop|bypass/i,
    pattern:
      /\b(?:disable|turn off|remove|delete|drop|bypass)\s+(?:the\s+)?(?:required\s+(?:status\s+)?checks|branch protection(?:\s+rules?)?|the 2FA requirement|2FA|two-factor authentication|secret scanning|push protection|(?:the\s+)?(?:CodeQL|dependency-review|security|code scanning)\s+(?:workflows?|checks?|scans?))/giu,
  },
  {
    rule: 'remote-instructions',
    gate: /https?:\/\/|\.(?:com|net|org|io|dev|sh|cc|txt|md)\//i,
    pattern: new RegExp(
      String.raw`${B}${FETCH}${E}[^\n]{0,100}?${URL_RE}[^\n]{0,160}?${B}${FOLLOW}${E}|${URL_RE}[^\n]{0,60}?[.,;:]?\s*(?:and|then|y|e|et|und|и)?\s*${B}${FOLLOW}${E}[^\n]{0,40}?(?:instructions?|steps|commands?|them|it|everything|every|consignes|instrucciones|instruções|Anweisungen|инструкци|指示|说明)|(?:instructions?|steps|setup steps|tasks?|prompt|your (?:real |actual )?task)\s+(?:now\s+)?(?:live|lives|is|are|can be found)\s+(?:at|in)\s+(?:this gist:?\s*)?${URL_RE}`,
      'giu',
    ),
  },
  {
    rule: 'run-installer',
    gate: /curl|wget|iwr|irm|invoke-|iex|\.tgz|index-url/i,
    pattern: new RegExp(INSTALL_PIPE, 'giu'),
  },
  {
    rule: 'unreviewed-action',
    gate: /merge|approve|publish|release|push|review|admin|authori|cleared|allowed|permitted|owner|maintainer|security team|responsib|permiso|permissão|autoris|berechtigt|darfst|разреш|权|権限|official|compliance/i,
    pattern:
      /\b(?:merge|approve|publish|push|release)\b[^.!?\n]{0,60}?\b(?:without|skip(?:ping)?|no need (?:to|for)|bypass(?:ing)?)\s+(?:any\s+|the\s+|a\s+|human\s+|waiting\s+for\s+)*(?:human\s+)?(?:review|reviews|approval|ci|checks|tests|waiting|the maintainers|confirmation)|\b(?:approve|merge)\s+(?:it|this|the)\s+(?:pr|pull request)?\s*(?:yourself|now|immediately|right away)|\bapprove\s+(?:and\s+merge\s+)?(?:this|the)\s+(?:pr|pull request)\b|\bpush\b[^.!?\n]{0,40}\b(?:straight|directly)\s+to\s+(?:main|master)\b|\bskip(?:ping)?\s+(?:the\s+)?(?:tests|review|reviews|ci|checks)\s+and\s+(?:merge|publish|release|push)\b|\bmerge\s+(?:it\s+|this\s+|the\s+pr\s+)?(?:straight away|right away|immediately|directly)\b|\bmark\s+(?:it|this|the\s+(?:pr|pull request))\s+as\s+(?:approved|reviewed)\b|\bgit\s+push\s+(?:-f|--force)\s+origin\s+(?:main|master)\b|(?:merge|aprueba|fusiona|aprove|approuve|genehmige)\b[^.!?\n]{0,40}(?:sin revisión|sem revisão|sans (?:revue|relecture)|ohne (?:Review|Prüfung))/giu,
  },
  {
    rule: 'false-authority',
    gate: /owner|maintainer|admin|security|team|manager|staff|authori|cleared|allowed|permitted|approv|official|compliance|responsib|need to|permiso|permissão|autoris|berechtigt|darfst|разреш|权|権限/i,
    pattern: new RegExp(AUTHORITY, 'giu'),
    after: new RegExp(
      String.raw`(?:^\s*|please|kindly|you (?:can|may|should|must)|go ahead and|\bto|\band|\bthen|\bjust|[.:;!,]\s*)\s*(?:${SENSITIVE_ACTION}|mostrar|enviar|publicar|revelar|fusionar|aprobar|mostre|envie|publique|afficher|envoyer|publier|fusionner|zeigen|senden|veröffentlichen|показать|отправить)${E}`,
      'iu',
    ),
    directed: false,
  },
  {
    rule: 'conceal',
    gate: /mention|notice|out of|tell|between you|audit log|only says|nadie|ninguém|personne|niemand|никому|不要告诉|誰にも/i,
    pattern:
      /\b(?:do not|don't|never)\s+(?:mention|tell|say|report)\b[^.!?\n]{0,60}\b(?:maintainers?|owners?|reviewers?|anyone|the user|PR|pull request|description|summary)|\bkeep\s+(?:this|it|that)\s+(?:out of|off)\s+(?:the\s+)?(?:PR|pull request|summary|description|audit log|commit|changelog|log)|\bso\s+(?:that\s+)?(?:nobody|no one|reviewers|the maintainers)\s+(?:notices?|asks?|sees?|finds? out)|\bbetween you and me\b|\bwithout\s+(?:telling|informing|notifying)\s+(?:the\s+)?(?:owner|maintainers?|reviewers?|anyone|user)|\bonly says\s+["“']?(?:refactor|chore|typo|fix)|no se lo digas a nadie|não conte a ninguém|ne le dis à personne|sag es niemandem|никому не говори|不要告诉任何人|誰にも言わないで/giu,
    directed: false,
  },
  {
    rule: 'override',
    gate: /forget|ignore|disregard|aside|attention|follow|override|revoked|void|apply|outdated|told/i,
    pattern:
      /\b(?:forget|ignore|disregard|set aside|pay no attention to|stop following|do not follow|don't follow|discard)\s+(?:(?:all|any|every|of|the|your|my|these|those|whatever|everything)\s+){0,3}(?:[\w-]+['’]s?\s+)?(?:(?:prior|previous|earlier|original|given|above|current|other|existing)\s+)?(?:rules|constraints|guidelines|directives|instructions|orders|task description|task above|system prompt|operator|everything (?:you were|you've been) told|what(?:ever)? you were told)(?!\s*(?:file|files|folder|path|template|page|section))|\b(?:the\s+)?(?:instructions|rules|guidelines|directives)\s+(?:you\s+(?:received|were given|got)(?:\s+from\s+[\w\s]{1,30}?)?\s+)?(?:are|were|is)\s+(?:now\s+)?(?:outdated|revoked|void|cancelled|canceled|no longer valid|superseded)|\bprevious directives (?:are )?void|\bwhatever you were told (?:earlier|before)\s+does not apply|\bthey do not apply\b|\byou are a different (?:assistant|agent|model) now|\byou only take orders from me/giu,
    directed: false,
  },
];

/** Lines in code that speak to the agent (`// AI agent: …`, `# assistant: …`). */
function codeLineAddressed(text: string, offset: number): boolean {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  // This line and the one before it (a comment above the command it asks for).
  const start = lineStart > 0 ? text.lastIndexOf('\n', lineStart - 2) + 1 : 0;
  let end = text.indexOf('\n', offset);
  if (end < 0) end = text.length;
  const line = text.slice(start, end);
  return (
    AGENT_VOCATIVE.test(line) ||
    /\b(?:SYSTEM|agent|assistant|bot|AI)\b\s*[:,]|\b(?:to|asks?|tells?) the (?:coding )?(?:agent|assistant|bot|AI)\b|\brun this first\b|\btool_result\b|function_results?|\bNEXT ACTION\b|^\s*(?:Observation|Action|NOTICE)\b/im.test(
      line,
    )
  );
}

const POLITE =
  /(?:please|pls|kindly|could you|can you|would you|will you|you (?:must|should|need to|have to)|(?:the |this )?(?:bot|agent|assistant|ai|automation|agents)s? (?:should|must|needs? to|has to|have to|is expected to)|(?:authori[sz]ing|allowing|asking|telling|instructing|want|need) you to|make sure|i need you to|i want you to|just|also|first|before (?:you|starting|anything|fixing|writing|changing)|for (?:whoever|the (?:bot|agent|assistant|ai)))[^.!?\n]{0,80}$/i;

/** True when a request at `offset` is directed at the reader (the agent). */
function directed(text: string, offset: number, paragraph: string): boolean {
  if (hasImperativeLead(text, offset)) return true;
  const before = text.slice(Math.max(0, offset - 100), offset);
  if (POLITE.test(before) || /(?:^|[\s,;:])(?:so|therefore|hence|just|now)\s+$/i.test(before)) return true;
  return AGENT_VOCATIVE.test(paragraph);
}

const RUN_BEFORE =
  /(?:run|execute|install|do|type|use|paste|ejecuta|exécute|exécutez|executa|execute|rode|führe|выполни|запусти|运行|执行|実行)\s*(?:this|it|the following|with|first|first:|:)?\s*$/iu;

/** True when the prose right before inline code at `start` asks for it to be run ("Run `…`"). */
function askedToRun(text: string, start: number): boolean {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const before = text.slice(lineStart, start);
  const verb = RUN_BEFORE.exec(before);
  if (!verb) return directed(text, start, paragraphAround(text, start));
  const at = lineStart + verb.index;
  return directed(text, at, paragraphAround(text, at)) || /\b(?:first|before)\b/i.test(before);
}

/** An imperative verb of fetching, following or running at a sentence start inside a match. */
const IMPERATIVE_INSIDE =
  /(?:^|[.!?:;]\s+|\b(?:please|then|and|first)\s+)(?:fetch|download|read|open|load|follow|execute|run|apply|obey|carry out)\b/i;

function paragraphAround(text: string, offset: number): string {
  const start = Math.max(0, text.lastIndexOf('\n\n', offset - 1), offset - 400);
  let end = text.indexOf('\n\n', offset);
  if (end < 0 || end - offset > 400) end = Math.min(text.length, offset + 400);
  return text.slice(start, end);
}

function sentenceAround(text: string, offset: number, length: number): string {
  const from = Math.max(0, offset - 200);
  const to = Math.min(text.length, offset + length + 200);
  return text.slice(from, to);
}

function scan(view: TextView): Hit[] {
  const hits: Hit[] = [];
  const { text } = view;
  let cue: boolean | undefined;
  const discussed = () => (cue ??= DISCUSSION_CUE.test(text));
  for (const { rule, gate, pattern, needs, after, directed: mustDirect = true } of RULES) {
    if (!gate.test(text)) continue;
    for (const match of text.matchAll(pattern)) {
      const offset = match.index;
      const length = match[0].length;
      if (needs && !needs.test(sentenceAround(text, offset, length))) continue;
      if (after && !after.test(text.slice(offset + length, offset + length + 240))) continue;
      const code = view.inCode(offset);
      let severity: Severity;
      if (code) {
        // Inline code is read with the prose that asks for it ("Run `curl … | sh` first").
        let start = offset;
        while (start > 0 && view.inCode(start - 1) && text[start - 1] !== '\n') start -= 1;
        const asked = start > 0 && text[start - 1] !== '\n' && askedToRun(text, start);
        // Unasked code (a log, a reproduction, a script) is not a request: nothing to report.
        if (!asked && !codeLineAddressed(text, offset)) continue;
        severity = 'high';
      } else if (
        !mustDirect ||
        directed(text, offset, paragraphAround(text, offset)) ||
        IMPERATIVE_INSIDE.test(text.slice(offset, offset + length + 100))
      )
        severity = 'high';
      else severity = 'medium';
      if (severity === 'high' && discussed() && (isQuoted(text, offset) || code)) severity = 'medium';
      hits.push({ rule, severity, offset, length });
    }
  }
  return hits;
}

export const intent: Scanner = {
  id: 'intent',
  summary:
    'requests to reveal secrets, weaken CI or agent configuration, follow remote instructions, run an installer, act without review or on claimed authority, or hide what was done',
  scan,
};

/** True when `text` (a decoded blob, a hidden region) carries a directed request with one of these intents. */
export function hasIntent(text: string): boolean {
  return scan({ text, prose: text, hasCode: false, inCode: () => false }).some(
    (hit) => hit.severity === 'high',
  );
}
