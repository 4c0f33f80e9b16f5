/**
 * Word lists shared by several scanners, compiled once. Kept small and explicit: each entry is a
 * phrase a reader can check, not a learned weight. JavaScript's `\b` only knows ASCII words, so
 * non-Latin words use letter lookarounds (`(?<!\p{L})…(?!\p{L})`) or none (Chinese, Japanese).
 */

/**
 * Text that speaks *to* the agent: "Note to the AI:", "if you are an LLM", "AI agents reading this",
 * "dear assistant", "instructions for the bot", in the screened languages.
 */
export const AGENT_VOCATIVE = new RegExp(
  [
    String.raw`\b(?:note|message|instructions?|attention|reminder|hint)s?\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llm|assistant|agent|bot|copilot|claude|model|coding agent)s?\b`,
    String.raw`\b(?:dear|hey|hi|hello|attention|important(?:\s+for)?)\s+(?:the\s+)?(?:ai|llm|assistant|agent|bot|copilot|claude|model|coding agent)s?\b`,
    String.raw`\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|large language model|language model|assistant|agent|bot|automated|coding agent|copilot|claude)\b`,
    String.raw`\b(?:ai|llm|coding|automated)\s+(?:agents?|assistants?|bots?|models?)\s+(?:reading|processing|parsing|handling|working on|resolving|triaging)\b`,
    String.raw`^\s*(?:ai|llm|assistant|agent|bot|claude|copilot|codex|gemini)\s*[:,]`,
    String.raw`\b(?:ai|llm|coding|automated)\s+(?:agents?|assistants?|bots?|models?)\s*[:,]`,
    String.raw`\byou\s+are\s+(?:an?\s+)?(?:ai|llm|coding)\s+(?:agent|assistant|model)\b`,
    String.raw`\bas\s+an?\s+(?:ai|llm|coding agent|assistant)\b`,
    String.raw`\b(?:agente|asistente|assistente|assistent|IA|KI)\s*[:,]`,
    String.raw`\bsi\s+eres\s+(?:una?\s+)?(?:ia|agente|asistente|modelo)\b`,
    String.raw`\bse\s+voc[êe]\s+(?:é|for)\s+(?:uma?\s+)?(?:ia|agente|assistente|modelo)\b`,
    String.raw`\bsi\s+(?:tu\s+es|vous\s+[êe]tes)\s+(?:une?\s+)?(?:ia|agent|assistant|modèle)\b`,
    String.raw`\bwenn\s+du\s+(?:eine?\s+)?(?:ki|agent|assistent|sprachmodell)\s+bist\b`,
    String.raw`(?<!\p{L})(?:агент|ассистент|бот|ИИ)\s*[:,]`,
    String.raw`если\s+ты\s+(?:ии|агент|ассистент|бот|модель)(?!\p{L})`,
    String.raw`(?:致|给|对)?(?:AI|人工智能|智能体|助手|代理|模型|机器人)[：:，,]`,
    String.raw`如果你是(?:AI|人工智能|智能体|助手|代理|模型)`,
    String.raw`(?:AI|エージェント|アシスタント|ボット)(?:へ|に)?[：:、,]`,
    String.raw`あなたが(?:AI|エージェント|アシスタント)なら`,
  ].join('|'),
  'imu',
);

/**
 * Wording that marks text as *about* an attack rather than one: security reports, docs on prompt
 * injection. Used to lower the severity of quoted payloads, never to drop a finding.
 */
export const DISCUSSION_CUE =
  /prompt[- ]injection|injection attacks?|jailbreak|malicious (?:payload|issue|comment|input|text|instructions?)|\bpayloads?\b|\battackers?\b|\bexploit|security (?:report|advisory|issue|researcher)|\bred[- ]team|\bexample of (?:an? )?(?:attack|injection)|\bdo not run\b|\bdon't run\b|inyección de (?:prompt|instrucciones)|injeção de (?:prompt|instruções)|injection de (?:prompt|consignes)|prompt-injektion|инъекци[яи]|提示(?:词)?注入|プロンプトインジェクション/iu;

/** Second-person or imperative markers for natural-language instructions. */
export const DIRECTIVE =
  /\b(?:you must|you should|you need to|you will|you have to|make sure|be sure to|don't forget to|before (?:you|doing anything|fixing|anything else|starting)|first(?:,)? (?:run|execute|read|open|send|post)|then (?:run|execute|send|post|push|commit)|your (?:real |actual |new |true )?(?:task|job|goal|instructions?|objective))\b|\b(?:run|execute|create|add|write|delete|remove|send|post|print|reveal|ignore|disregard|follow|push|commit|upload|append|overwrite|modify|replace|bump|publish|close|merge|approve|disable|enable|force-push|rewrite|install|download|grant|mark|skip|change|update|rename|deploy|release|lower|raise|set|make|open|invite|transfer)\b|请|必须|执行|删除|运行|修改|添加|合并|发布|关闭|禁用|してください|マージ|公開|実行|削除|追加|(?<!\p{L})(?:ejecuta|borra|elimina|añade|debes|fusiona|publica|aprueba|cierra|desactiva|sube|cambia|faça|fusione|publique|aprove|feche|desative|fusionne|publie|approuve|ferme|désactive|merge|veröffentliche|genehmige|schließe|deaktiviere|смержи|опубликуй|закрой|отключи|одобри|execute|apague|exclua|adicione|deve|exécute|supprime|ajoute|dois|devez|führe|lösche|füge|musst|удали|выполни|запусти|добавь|должен)(?!\p{L})/iu;

/**
 * What may stand right before an imperative verb: the start of a sentence, a list bullet, or a
 * politeness / sequencing word ("please", "then", "bitte", "пожалуйста"…). Lets "print your token"
 * match while "the page should print the token" does not.
 */
export const IMPERATIVE_LEAD = String.raw`(?:^|[.!?;:\n>][\s*_]*|(?:^|\s)(?:[-*+]|\d+[.)])\s+|[(,]\s*|\b(?:please|pls|kindly|can you|could you|would you|will you|you must|you should|you need to|you have to|make sure to|be sure to|don't forget to|go ahead and|i need you to|i want you to|then|and|also|now|first|next|finally|just|simply|quickly|por favor|favor|bitte|dann|und|auch|puis|et|aussi|ensuite|luego|después|y|también|depois|e|também|então|s'il te plaît|s'il vous plaît)\s+|(?:^|\s)(?:пожалуйста|также|затем|потом|теперь|и|сначала),?\s+)`;

/** Quote characters that open an inline quotation. */
const OPENING_QUOTES = '"“«„「『‘';
const CLOSING_QUOTES: Record<string, string> = {
  '"': '"',
  '“': '”',
  '«': '»',
  '„': '“',
  '「': '」',
  '『': '』',
  '‘': '’',
};

/**
 * True when `offset` sits inside an inline quotation on its line ("…", “…”, «…», 「…」) or on a
 * markdown blockquote line (`> …`): the text is cited, not said.
 */
export function isQuoted(text: string, offset: number): boolean {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  let lineEnd = text.indexOf('\n', offset);
  if (lineEnd < 0) lineEnd = text.length;
  if (/^\s{0,3}>/.test(text.slice(lineStart, lineEnd))) return true;
  const before = text.slice(lineStart, offset);
  for (let i = before.length - 1; i >= 0; i--) {
    const char = before[i]!;
    if (!OPENING_QUOTES.includes(char)) continue;
    const closing = CLOSING_QUOTES[char]!;
    if (char === '"') {
      const count = before.split('"').length - 1;
      if (count % 2 === 0) continue;
    }
    if (text.indexOf(closing, offset + 1) > -1 && text.indexOf(closing, offset + 1) < lineEnd + 1)
      return true;
  }
  return false;
}

/**
 * `pattern` with every literal space outside a character class widened to `\s+`, so "from  now
 * on" and a phrase broken over two lines match like "from now on".
 */
export function spaced(pattern: RegExp): RegExp {
  let out = '';
  let inClass = false;
  const source = pattern.source;
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === '\\') {
      out += char + (source[i + 1] ?? '');
      i += 1;
      continue;
    }
    if (char === '[') inClass = true;
    else if (char === ']') inClass = false;
    if (char === ' ' && !inClass) {
      while (source[i + 1] === ' ') i += 1;
      out += String.raw`\s+`;
      continue;
    }
    out += char;
  }
  return new RegExp(out.replaceAll(String.raw`\s+\s+`, String.raw`\s+`), pattern.flags);
}

const LEAD_AT_END = new RegExp(`${IMPERATIVE_LEAD}$`, 'iu');

/**
 * True when the text right before `index` is an imperative position (see IMPERATIVE_LEAD).
 * Checked by looking back from a verb instead of trying the lead at every offset: much faster.
 */
export function hasImperativeLead(text: string, index: number): boolean {
  const lineStart = text.lastIndexOf('\n', index - 1) + 1;
  const from = Math.max(lineStart, index - 60);
  const before = (from > lineStart ? '\u0001' : '') + text.slice(from, index);
  return LEAD_AT_END.test(before);
}
