/**
 * instruction-override: text that tells the model to drop its instructions or take a new role,
 * in English, Spanish, Portuguese, French, German, Russian, Chinese, Japanese (plus Italian and
 * Korean basics).
 *
 * - `ignore-previous` (critical): "ignore previous instructions", "ignora las instrucciones
 *   anteriores", "ignoriere alle vorherigen Anweisungen", "忽略之前的指令", "以前の指示を無視して"…
 * - `new-role` (high): "you are now…", "from now on you…", "a partir de ahora eres", "你现在是",
 *   "new instructions:", "developer mode", "your real task is…".
 * - `conceal` (high): "do not tell the user / maintainers".
 *
 * Context: prose at full severity. Inside code, and in prose that is quoted ("…", `> …`) in a text
 * that discusses prompt injection, the finding is kept at medium (a warning): a report or a doc
 * citing the phrase is not blocked; a bare code block with no discussion around it is a warning too,
 * because the model still reads it. In code with a discussion around it: low.
 */
import { DISCUSSION_CUE, isQuoted, spaced } from '../lexicon.js';
import type { Hit, Scanner, Severity, TextView } from '../types.js';

interface Rule {
  rule: string;
  severity: Severity;
  /** A cheap test that must pass before the full pattern runs (most text has none of these words). */
  gate: RegExp;
  /** A second cheap test (the noun side), when the rule has one. */
  noun?: RegExp;
  pattern: RegExp;
}

const EN_VERB = String.raw`(?:ignore|disregard|forget|override|overrule|bypass|discard|abandon|neglect|set aside|throw out|stop following|do not follow|don't follow|never mind)`;
const EN_QUALIFIER = String.raw`(?:previous|prior|preceding|above|earlier|former|original|initial|system|given|safety|developer)`;
const EN_NOUN = String.raw`(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|programming|guardrails|system prompt|orders)`;

const OVERRIDES: Rule[] = (
  [
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /ignor|disregard|forget|overr|bypass|discard|abandon|neglect|set aside|throw out|stop following|not follow|n't follow|never mind/i,
      noun: /instruction|prompt|rules|direction|directive|guideline|guidance|programming|guardrail|orders|everything|anything|\ball\b/i,
      pattern: new RegExp(
        String.raw`\b${EN_VERB}\s+(?:(?:all|any|every|each|of|the|your|my|these|those|its|whatever)\s+){0,3}${EN_QUALIFIER}\s+(?:[\w-]+\s+){0,2}?${EN_NOUN}\b`,
        'giu',
      ),
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /ignor|disregard|forget|overr|bypass|discard|abandon|neglect|set aside|throw out|stop following|not follow|n't follow|never mind/i,
      noun: /instruction|prompt|rules|direction|directive|guideline|guidance|programming|guardrail|orders|everything|anything|\ball\b/i,
      pattern: new RegExp(
        String.raw`\b${EN_VERB}\s+(?:(?:all|any|every)\s+(?:of\s+)?(?:your\s+|the\s+)?|your\s+)${EN_NOUN}\b|\b${EN_VERB}\s+(?:everything|anything|all)\s+(?:above|before|(?:that\s+)?(?:you\s+)?(?:were|have been|was)\s+(?:told|given|instructed)|you\s+(?:know|were told))`,
        'giu',
      ),
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /ignor|olvid|descart|omit|desobedec|caso omiso/i,
      noun: /instruc|indicac|órdenes|ordenes|reglas|directrices|consignas/i,
      pattern:
        /\b(?:ignora|ignore|ignorad|ignoren|olvida|olvide|olvidad|olviden|descarta|descarte|omite|omita|desobedece|haz caso omiso (?:a|de))\s+(?:(?:tod[ao]s\s+)?(?:l[ao]s\s+)?(?:instrucciones|indicaciones|órdenes|ordenes|reglas|directrices|instrucción|consignas)\s+(?:anteriores|previas|precedentes|de arriba|originales|del sistema|recibidas|que (?:te|le) (?:dieron|di|han dado))|(?:tod[ao]s\s+)?(?:tus|sus)\s+(?:instrucciones|indicaciones|órdenes|reglas|directrices)|tod[ao]s\s+l[ao]s\s+(?:instrucciones|indicaciones|órdenes|directrices))/giu,
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /ignor|esque[cç]|desconsider|descart|desprez/i,
      noun: /instru|orienta|regras|diretrizes|ordens/i,
      pattern:
        /\b(?:ignore|ignora|ignorem|ignorar|esqueça|esqueca|esqueçam|esquece|desconsidere|desconsidera|descarte|despreze)\s+(?:(?:tod[ao]s\s+)?(?:[ao]s\s+)?(?:instruções|instrucoes|orientações|orientacoes|regras|diretrizes|ordens|instrução)\s+(?:anteriores|prévias|previas|acima|originais|do sistema|recebidas)|(?:tod[ao]s\s+)?(?:as\s+|os\s+)?(?:suas|tuas|seus)\s+(?:instruções|instrucoes|orientações|regras|diretrizes)|tod[ao]s\s+[ao]s\s+(?:instruções|instrucoes|orientações|diretrizes))/giu,
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /ignor|oubli|néglig|tenez pas|tiens pas|abstraction/i,
      noun: /instructions|consignes|directives|règles|regles|ordres|indications/i,
      pattern:
        /\b(?:ignore[zs]?|ignorer|oublie[zs]?|oublier|néglige[zs]?|ne tiens pas compte|ne tenez pas compte|fais abstraction|faites abstraction)\s+(?:de\s+|des\s+|d'|du\s+)?(?:(?:toutes\s+)?(?:les\s+)?(?:instructions|consignes|directives|règles|regles|ordres|indications)\s+(?:précédentes|precedentes|antérieures|anterieures|ci-dessus|initiales|originales|du système|reçues)|(?:toutes\s+)?(?:tes|vos)\s+(?:instructions|consignes|directives|règles)|toutes\s+les\s+(?:instructions|consignes|directives))/giu,
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /ignor|vergi|vergess|missacht|übergeh|verwirf|systemanweis/i,
      noun: /anweisung|instruktion|befehl|regeln|vorgaben|anordnung/i,
      pattern:
        /\b(?:ignoriere|ignorier|ignorieren sie|ignoriert|vergiss|vergessen sie|vergesst|missachte|missachten sie|übergehe|verwirf)\s+(?:bitte\s+)?(?:(?:alle\s+|sämtliche\s+)?(?:deine\s+|ihre\s+|die\s+|eure\s+)?(?:vorherigen|vorigen|bisherigen|früheren|fruheren|obigen|vorangegangenen|ursprünglichen|vorhergehenden|gegebenen)\s+(?:Anweisungen|Instruktionen|Befehle|Regeln|Vorgaben|Anordnungen)|(?:alle\s+)?(?:deine|Ihre|eure)\s+(?:Anweisungen|Instruktionen|Vorgaben|Regeln)|(?:alle|sämtliche)\s+(?:Anweisungen|Instruktionen|Vorgaben)|Systemanweisungen)/giu,
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /ignorieren|vergessen|missachten/i,
      noun: /anweisung|instruktion|vorgaben/i,
      pattern:
        /\b(?:vorherigen|vorigen|bisherigen|früheren|obigen|alle)\s+(?:Anweisungen|Instruktionen|Vorgaben)\s+(?:\S+\s+){0,3}?(?:ignorieren|vergessen|missachten)/giu,
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /игнор|забуд|обращ|отброс|пренебр|отмен/i,
      noun: /инструкц|указан|команд|правил|распоряж|установк/i,
      pattern:
        /(?<!\p{L})(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|не обращай внимания на|не обращайте внимания на|отбрось|отбросьте|пренебреги|отмени|отмените)\s+(?:(?:все\s+)?(?:свои\s+|твои\s+|ваши\s+|эти\s+)?(?:предыдущие|прежние|предшествующие|вышеуказанные|вышеприведённые|вышеприведенные|изначальные|исходные|системные|прошлые|старые|данные\s+ранее|полученные)\s+(?:инструкции|указания|команды|правила|распоряжения|инструкций|указаний|установки)|(?:все\s+)?(?:свои|твои|ваши)\s+(?:инструкции|указания|правила|установки)|все\s+(?:инструкции|указания))/giu,
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /忽|无视|無視|不要理|不用理|别管|忘|抛弃|放弃|不要遵/,
      noun: /指令|指示|说明|說明|提示|规则|規則|命令|要求|设定|設定/,
      pattern:
        /(?:忽略|忽视|無視|无视|不要理会|不要理會|不用理会|别管|忘记|忘記|忘掉|抛弃|放弃|不要遵守|不要遵循)\s*(?:掉)?\s*(?:你|您)?(?:的)?\s*(?:之前|以前|先前|此前|上面|上述|前面|原来|原有|原先|所有|全部|一切|系统)(?:的)?\s*(?:所有|全部)?(?:的)?\s*(?:指令|指示|说明|說明|提示词|提示|规则|規則|命令|要求|设定|設定)/gu,
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /無視|忘れ|破棄/,
      noun: /指示|命令|指令|インストラクション|ルール|プロンプト|設定/,
      pattern:
        /(?:以前|前|これまで|先ほど|上記|上|今まで|元|最初|システム)の(?:すべての|全ての|全部の)?(?:指示|命令|指令|インストラクション|ルール|プロンプト|設定)(?:は|を|も)?\s*(?:すべて|全て|全部)?\s*(?:無視|忘れ|破棄)|(?:すべての|全ての)?指示を(?:すべて|全て)?無視/gu,
    },
    {
      rule: 'ignore-previous',
      severity: 'critical',
      gate: /ignora|dimentica|trascura|무시/i,
      noun: /istruzioni|regole|indicazioni|지시|지침|명령|규칙/i,
      pattern:
        /\b(?:ignora|dimentica|trascura)\s+(?:tutte\s+)?(?:le\s+)?(?:istruzioni|regole|indicazioni)\s+(?:precedenti|sopra|iniziali)|이전(?:의)?\s*(?:모든\s*)?(?:지시|지침|명령|규칙)(?:을|를|은|는)?\s*(?:모두\s*)?무시/giu,
    },
    {
      rule: 'new-role',
      severity: 'high',
      gate: /now|mode|your (?:real|actual|true|new)|instructions (?:are|were)/i,
      pattern:
        /\b(?:from now on,?\s+you\s+(?:are|will|must|shall|should)|you\s+are\s+now\s+(?:an?\s+|in\s+|the\s+|dan\b|free|unrestricted|jailbroken)|(?:enter|enable|activate|switch to)\s+(?:developer|god|dan|jailbreak|admin|unrestricted|debug)\s+mode|your\s+(?:real|actual|true|new)\s+(?:task|job|goal|objective|instructions?|purpose)\s+(?:is|are)\b|(?:the\s+)?(?:previous|above|earlier)\s+instructions\s+(?:are|were)\s+(?:fake|wrong|outdated|a test|cancelled|canceled|void|revoked))/giu,
    },
    {
      rule: 'new-role',
      severity: 'high',
      gate: /instructions?\s*[:：]|partir|désormais|jetzt|nun an|sofort|anweisungen\s*[:：]|теперь|отныне|момента|инструкции\s*[:：]|现在|現在|新的指令|今から|これから|新しい指示/i,
      pattern:
        /^[#>*_ \t]*(?:new|updated|real|actual|revised|override)\s+(?:system\s+)?instructions?\s*[:：]|\ba\s+partir\s+de\s+ahora,?\s+(?:eres|serás|seras|debes|vas a|tu tarea)|\bnuevas\s+instrucciones\s*[:：]|\ba\s+partir\s+de\s+agora,?\s+(?:você|voce|tu)\s+(?:é|e|será|sera|deve|vai)|\bnovas\s+instruções\s*[:：]|\bà\s+partir\s+de\s+maintenant,?\s+(?:tu|vous)\s+(?:es|êtes|dois|devez|vas|allez)|\bdésormais,?\s+(?:tu|vous)\s+(?:es|êtes|dois|devez)|\bnouvelles\s+(?:instructions|consignes)\s*[:：]|\b(?:ab\s+jetzt|von\s+nun\s+an|ab\s+sofort)\s+(?:bist|musst|sollst|wirst)\s+du|\bneue\s+Anweisungen\s*[:：]|(?<!\p{L})(?:теперь|отныне|с\s+этого\s+момента)\s+ты\s+(?:—\s*)?(?:являешься|должен|будешь|-)?|(?<!\p{L})новые\s+инструкции\s*[:：]|你现在是|你現在是|从现在开始[，,]?\s*你|從現在開始[，,]?\s*你|新的指令\s*[:：]|今からあなたは|これからあなたは|新しい指示\s*[:：]/gimu,
    },
    {
      rule: 'conceal',
      severity: 'high',
      gate: /(?:not|n't|never) (?:tell|inform|notify|alert|mention|reveal|let)|without (?:telling|informing|notifying)|digas|cuentes|menciones/i,
      pattern:
        /\b(?:do not|don't|never)\s+(?:tell|inform|notify|alert|mention\s+(?:this|it)\s+to|reveal\s+(?:this|these instructions)\s+to|let)\s+(?:the\s+)?(?:user|users|maintainers?|owner|reviewers?|humans?|anyone)\b|\bwithout\s+(?:telling|informing|notifying)\s+(?:the\s+)?(?:user|maintainers?|owner|reviewers?|anyone)\b|\bno\s+(?:le\s+)?(?:digas|cuentes|menciones)\s+(?:nada\s+)?(?:a(?:l)?\s+)?(?:usuario|nadie|mantenedores)/giu,
    },
  ] satisfies Rule[]
).map((rule) => ({ ...rule, pattern: spaced(rule.pattern) }));

function scan(view: TextView): Hit[] {
  const hits: Hit[] = [];
  // Whether the field discusses an attack: asked only when a hit needs it (the cue list is long).
  let cue: boolean | undefined;
  const discussed = () => (cue ??= DISCUSSION_CUE.test(view.text));
  for (const { rule, severity, gate, noun, pattern } of OVERRIDES) {
    if (!gate.test(view.text) || (noun && !noun.test(view.text))) continue;
    for (const match of view.text.matchAll(pattern)) {
      const offset = match.index;
      let level: Severity = severity;
      if (view.inCode(offset)) level = discussed() ? 'low' : 'medium';
      else if (discussed() && isQuoted(view.text, offset)) level = 'medium';
      hits.push({ rule, severity: level, offset, length: match[0].length });
    }
  }
  return hits;
}

/** True when `text` (e.g. a decoded blob or a hidden comment) contains an override phrase. */
export function hasOverride(text: string): boolean {
  return OVERRIDES.some(({ gate, noun, pattern }) => {
    if (!gate.test(text) || (noun && !noun.test(text))) return false;
    pattern.lastIndex = 0;
    const found = pattern.test(text);
    pattern.lastIndex = 0;
    return found;
  });
}

export const instructionOverride: Scanner = {
  id: 'instruction-override',
  summary: '"ignore previous instructions" and role reassignment, in eight languages and more',
  scan,
};
