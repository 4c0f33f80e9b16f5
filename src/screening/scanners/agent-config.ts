/**
 * agent-config: instructions to create or change the files that steer agents or run code on their
 * own: `.claude/`, `CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `.mcp.json`, `.cursor/` and
 * `.cursorrules`, `.github/copilot-instructions.md`, `.github/workflows/`, `.git/hooks/`,
 * `.husky/`, `.vscode/tasks.json`, and package install scripts (`preinstall`, `postinstall`,
 * `prepare`).
 *
 * - `agent-instructions-file`: an imperative create/modify/delete verb within 80 characters of an
 *   agent instruction or tool-configuration path, or of a git hook.
 * - `install-script`: the same for an install-time package script.
 * - `workflow-change`: the same for `.github/workflows/`.
 *
 * Severity: a request to touch these files is medium (a warning) on its own — contributors do ask
 * for an AGENTS.md with the test commands, a husky `prepare` script or Node 22 in the CI matrix.
 * It is high when the request itself (the rest of its paragraph) widens what runs or what is
 * allowed: permissions, approving or skipping review, "without confirmation", a URL, a shell
 * command, uploads, downloads, telemetry, secrets. For workflows, a payload anywhere in the text
 * counts (secrets, curl/wget, `pull_request_target`, write-all permissions, base64).
 *
 * The verb must stand in an imperative position ("please add…", "- create…", "then update…"), so
 * "the postinstall script fails" or "I removed CLAUDE.md locally" are not requests. Chinese and
 * Japanese put the verb after the path and are matched either way round. Context: prose only;
 * inside code, low.
 */
import { hasImperativeLead } from '../lexicon.js';
import type { Hit, Scanner, Severity, TextView } from '../types.js';

const AGENT_PATH = String.raw`(?:\.claude(?:\/[\w./*-]*)?|CLAUDE(?:\.local)?\.md|AGENTS?\.md|GEMINI\.md|QWEN\.md|\.mcp\.json|mcp\.json|\.cursor\/[\w./*-]*|\.cursor\b|\.cursorrules|\.windsurfrules|\.clinerules|\.github\/copilot-instructions\.md|\.github\/instructions\/[\w./-]*|\.codex\/[\w./-]*|\.gemini\/[\w./-]*|\.qwen\/[\w./-]*|\.opencode(?:\/[\w./-]*)?|opencode\.jsonc?|\.kilocode\/[\w./-]*|\.vscode\/(?:settings|tasks|mcp)\.json|\.git\/hooks(?:\/[\w.-]*)?|\.husky(?:\/[\w.-]*)?|\.pre-commit-config\.ya?ml|settings\.local\.json|\.aider[\w.]*)`;
const WORKFLOW_PATH = String.raw`(?:\.github\/workflows(?:\/[\w.*-]*)?|\.github\/actions\/[\w./-]*|\.gitlab-ci\.yml)`;
const INSTALL_SCRIPT = String.raw`(?:(?:(?:pre|post)install|prepare|prepublish(?:Only)?|prepack|postpack)\b(?:\s+(?:script|hook|step))?|install\s+(?:script|hook))`;

const EN_VERB = String.raw`(?:create|add|write|modify|edit|update|change|append|prepend|insert|replace|overwrite|delete|remove|put|commit|place|drop|set\s+up|configure|register|install|enable|disable|rewrite|rename|move|copy|save|inject|include|extend|patch|touch)`;
const OTHER_VERB = String.raw`(?:crea|crear|creá|añade|añadir|agrega|agregar|modifica|modificar|edita|editar|actualiza|actualizar|escribe|escribir|cambia|cambiar|elimina|borra|pon|coloca|crie|criar|adicione|adicionar|modifique|edite|atualize|escreva|altere|apague|remova|coloque|coloca|crée|créez|créer|ajoute|ajoutez|ajouter|modifie|modifiez|modifier|écris|écrivez|supprime|supprimez|remplace|remplacez|mets|mettez|erstelle|erstellen|füge|hinzufügen|ändere|ändern|bearbeite|bearbeiten|schreibe|schreiben|lösche|löschen|aktualisiere|ersetze|lege)`;
const RU_VERB = String.raw`(?:создай|создайте|добавь|добавьте|измени|измените|отредактируй|отредактируйте|запиши|запишите|удали|удалите|обнови|обновите|перепиши|замени|положи|помести)`;
const CJK_VERB = String.raw`(?:创建|新建|添加|加入|修改|编辑|写入|写到|删除|更新|覆盖|替换|作成|追加|変更|編集|書き込|書き換え|削除|更新|上書き|置き換え)`;

interface PathRule {
  rule: string;
  /** English: the verb must stand in an imperative position. */
  english: RegExp;
  /** Other languages (verb first) and Chinese/Japanese (either order). */
  other: RegExp;
}

function rule(id: string, path: string): PathRule {
  return {
    rule: id,
    english: new RegExp(String.raw`\b${EN_VERB}\b[^\n]{0,80}?(?<![\w/.-])${path}`, 'giu'),
    other: new RegExp(
      [
        String.raw`(?<![\p{L}])${OTHER_VERB}\b[^\n]{0,80}?(?<![\w/.-])${path}`,
        String.raw`(?<![\p{L}])${RU_VERB}(?!\p{L})[^\n]{0,80}?(?<![\w/.-])${path}`,
        String.raw`(?<![\w/.-])${path}[^\n]{0,30}?${CJK_VERB}|${CJK_VERB}[^\n]{0,30}?${path}`,
      ].join('|'),
      'giu',
    ),
  };
}

const RULES: PathRule[] = [
  rule('agent-instructions-file', AGENT_PATH),
  rule('install-script', INSTALL_SCRIPT),
  rule('workflow-change', WORKFLOW_PATH),
];

/** Cheap gate: none of the paths or script names appear at all. */
const ANY_PATH =
  /claude|agents?\.md|gemini\.md|qwen\.md|mcp\.json|\.cursor|rules|copilot|\.github|\.codex|\.gemini|\.qwen|opencode|kilocode|\.vscode|\.git\/hooks|husky|pre-commit|settings\.local|\.aider|install|prepare|prepublish|prepack|postpack|gitlab-ci/i;

/** What turns a config request into an attack: more permissions, less review, remote code. */
const CONFIG_PAYLOAD =
  /\b(?:allow(?:s|ing|ed)?|permissions?|Bash\(|approv(?:e|es|ed|al)|auto-?approve|skip(?:s|ped|ping)?|bypass|without\s+(?:confirmation|review|asking|approval|prompting)|never\s+ask|no\s+longer\s+ask|optional|disable[sd]?|trust(?:ed)?|yolo|dangerously|full\s+access|any\s+command|every\s+command|all\s+commands|curl|wget|nc|sh\s+-c|bash|node\s+scripts?\/|upload(?:s|ed)?|telemetry|download(?:s|ed)?|exfiltrate|secrets?|tokens?|passwords?|https?:\/\/|runs?\s+`|on\s+folder\s+open)\b|sin\s+revisión|permit(?:a|ir|e)|sem\s+revisão|sans\s+(?:relecture|confirmation)|autoris|ohne\s+(?:Review|Bestätigung)|überspr|erlaub|без\s+(?:ревью|подтверждения)|пропуск|разреш|跳过|无需|允许|权限|スキップ|許可|権限/iu;

const WORKFLOW_PAYLOAD =
  /\$\{\{\s*secrets\.|\b(?:curl|wget)\b|pull_request_target|permissions:\s*write-all|contents:\s*write|id-token:\s*write|\bbase64\b|\btoJSON\(\s*secrets\s*\)|ACTIONS_RUNTIME_TOKEN|\bnc\s+-/iu;

function scan(view: TextView): Hit[] {
  const hits: Hit[] = [];
  if (!ANY_PATH.test(view.text)) return hits;
  for (const { rule: id, english, other } of RULES) {
    const matches = [
      ...[...view.text.matchAll(english)].filter((match) => hasImperativeLead(view.text, match.index)),
      ...view.text.matchAll(other),
    ];
    for (const match of matches) {
      const request = match[0];
      const offset = match.index;
      let end = view.text.indexOf('\n\n', offset + request.length);
      if (end < 0 || end > offset + request.length + 300) end = offset + request.length + 300;
      const paragraph = view.text.slice(offset, end);
      const payload =
        id === 'workflow-change' ? WORKFLOW_PAYLOAD.test(view.text) : CONFIG_PAYLOAD.test(paragraph);
      const level: Severity = payload ? 'high' : 'medium';
      hits.push({ rule: id, severity: view.inCode(offset) ? 'low' : level, offset, length: request.length });
    }
  }
  return hits;
}

/** True when `text` asks to change agent config, a hook or an install script in a way that blocks. */
export function hasAgentConfigRequest(text: string): boolean {
  return scan({ text, prose: text, hasCode: false, inCode: () => false }).some(
    (hit) => hit.severity === 'high',
  );
}

export const agentConfig: Scanner = {
  id: 'agent-config',
  summary:
    'requests to create or change agent instruction files, MCP config, workflows, git hooks or install scripts',
  scan,
};
