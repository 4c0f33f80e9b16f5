/**
 * role-spoofing: text dressed up as the conversation's own structure, so the model takes an issue
 * for a system message, another turn, or a tool's answer.
 *
 * - `chat-template-token` (critical): `<|im_start|>`, `<|system|>`, `<|eot_id|>`, `<|endoftext|>`…
 * - `inst-tag` (critical): `[INST]`, `[/INST]`, `<<SYS>>`.
 * - `role-header` (high): `### System:` / `## Assistant:` headings followed by an instruction, and
 *   Alpaca-style `### Instruction:` / `### Response:`.
 * - `role-tag` (high): `<system>`, `</system>`, `<system-reminder>`, `<instructions>`, `<admin>`…
 * - `dialogue-turns` (high): lines starting `Human:` and `Assistant:` (or `User:` and `AI:`) in one
 *   field; a `SYSTEM:` line followed by "you"; a lone `Assistant:` line is medium.
 * - `fake-tool-call` (critical): `<function_calls>`, `<invoke name=…>`, `<tool_result>`,
 *   `<function_results>`, `<tool_use>`, `<tool_call>`.
 * - `json-tool-call` (high): JSON shaped like a tool call or a chat message: `"tool_calls":`,
 *   `"function_call":`, `{"type": "tool_use"`, `"role": "system"`, `{"name": "bash", "arguments"…`.
 *
 * Context: prose at full severity; inside code every rule is low (a bug report about a chat
 * template or an LLM SDK quotes these tokens in code blocks all the time).
 */
import type { Hit, Scanner, Severity, TextView } from '../types.js';

interface Rule {
  rule: string;
  severity: Severity;
  pattern: RegExp;
}

const RULES: Rule[] = [
  {
    rule: 'chat-template-token',
    severity: 'critical',
    pattern:
      /<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|eom_id|start_header_id|end_header_id|begin_of_text|end_of_text|fim_prefix|fim_suffix|fim_middle|tool|ipython|python_tag|end|start|channel|message|return|constrain|call)\s*\|>/giu,
  },
  { rule: 'inst-tag', severity: 'critical', pattern: /\[\/?INST\]|<<\/?SYS>>/gu },
  {
    rule: 'role-header',
    severity: 'high',
    pattern:
      /^[ \t]{0,3}#{1,6}[ \t]*(?:system|assistant|developer|admin|root|operator)(?:[ \t]+(?:prompt|message|instructions?|override|note))?[ \t]*:[ \t]*(?:$|you\b|your\b|ignore|new\b|from now|the user)|^[ \t]{0,3}#{1,6}[ \t]*(?:instruction|response|input)[ \t]*:[ \t]*$/gimu,
  },
  {
    rule: 'role-tag',
    severity: 'high',
    pattern:
      /<\/?\s*(?:system|system[-_ ]?prompt|system[-_]message|system[-_]reminder|system[-_]instructions?|instructions|important[-_]instructions|admin|administrator|developer[-_]message|developer|assistant|user[-_]instructions|sudo|override|hidden[-_]instructions?)\s*>/giu,
  },
  {
    rule: 'fake-tool-call',
    severity: 'critical',
    pattern:
      /<\/?\s*(?:[a-z]+:)?(?:function_calls|invoke|function_results|function_result|tool_use|tool_result|tool_results|tool_call|tool_calls|tool_response|tool_output|function_call|antml:parameter)\b[^>]{0,200}>/giu,
  },
  {
    rule: 'json-tool-call',
    severity: 'high',
    pattern:
      /"(?:tool_calls|function_call|tool_use_id|tool_call_id)"\s*:|\{\s*"type"\s*:\s*"(?:tool_use|tool_result|function_call|function_call_output|tool_call)"|"role"\s*:\s*"(?:system|tool|assistant|developer)"|\{\s*"(?:name|tool|tool_name)"\s*:\s*"(?:bash|shell|terminal|run_terminal_cmd|run_shell_command|execute_command|exec|run_command|write_file|edit_file|str_replace_editor|str_replace_based_edit_tool|computer|create_file|delete_file|git_push|http_request|fetch_url)"\s*,\s*"(?:arguments|input|parameters|args|params)"/giu,
  },
  {
    rule: 'dialogue-turns',
    severity: 'high',
    pattern:
      /^[ \t>*_]*(?:system|SYSTEM|System)[ \t*_]*:[ \t*_]*(?:you|You|YOU|ignore|Ignore|from now|new instructions)/gmu,
  },
];

const HUMAN_TURN = /^[ \t>*_]*(?:human|user|h)[ \t*_]*:/gimu;
const ASSISTANT_TURN = /^[ \t>*_]*(?:assistant|ai|a|model|gpt|claude)[ \t*_]*:/gimu;

function scan(view: TextView): Hit[] {
  const hits: Hit[] = [];
  const push = (rule: string, severity: Severity, offset: number, length: number) =>
    hits.push({ rule, severity: view.inCode(offset) ? 'low' : severity, offset, length });
  for (const { rule, severity, pattern } of RULES) {
    for (const match of view.text.matchAll(pattern)) push(rule, severity, match.index, match[0].length);
  }
  // Turns only count in prose: a transcript in a code block is a quotation.
  const humans = [...view.prose.matchAll(HUMAN_TURN)];
  const assistants = [...view.prose.matchAll(ASSISTANT_TURN)].filter(
    (match) => !/^[ \t>*_]*a[ \t*_]*:/i.test(match[0]),
  );
  const fullAssistants = [...view.prose.matchAll(ASSISTANT_TURN)];
  if (humans.length > 0 && fullAssistants.length > 0) {
    const first = Math.min(humans[0]!.index, fullAssistants[0]!.index);
    const strong = humans.some((m) => /human/i.test(m[0])) || assistants.some((m) => /assistant/i.test(m[0]));
    if (strong) push('dialogue-turns', 'high', first, 40);
  } else if (assistants.some((m) => /assistant/i.test(m[0]))) {
    const lone = assistants.find((m) => /assistant/i.test(m[0]))!;
    push('dialogue-turns', 'medium', lone.index, lone[0].length);
  }
  return hits;
}

/** True when `text` carries a chat-template token, an `[INST]` tag or a fake tool call. */
export function hasRoleSpoof(text: string): boolean {
  return RULES.slice(0, 5).some(({ pattern }) => {
    pattern.lastIndex = 0;
    const found = pattern.test(text);
    pattern.lastIndex = 0;
    return found;
  });
}

export const roleSpoofing: Scanner = {
  id: 'role-spoofing',
  summary: 'chat-template tokens, fake system/assistant turns and fake tool calls or results',
  scan,
};
