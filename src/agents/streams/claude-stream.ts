/**
 * Claude Code's `--output-format stream-json` (also spoken by Qwen Code): one JSON object per line,
 * `system`/`init` first, then `assistant` messages whose content blocks are `text`, `thinking` and
 * `tool_use`, `user` messages carrying `tool_result` blocks, and a final `result` with the answer,
 * the totals and `is_error`. Every line carries `session_id`.
 */
import {
  arr,
  contentText,
  isObject,
  jsonLinesParser,
  num,
  obj,
  str,
  toText,
  usageEvent,
} from '../driver-kit.js';
import type { AgentEvent, AgentStreamParser } from '../types.js';

export interface ClaudeStreamOptions {
  /**
   * Whether `usage.input_tokens` already includes cached tokens. Anthropic counts cache reads and
   * writes apart from `input_tokens`; Qwen Code reports the whole prompt there.
   */
  inputIncludesCache: boolean;
}

function resultUsage(usage: unknown, options: ClaudeStreamOptions, cost: unknown): AgentEvent[] {
  if (!isObject(usage)) return [];
  const cacheRead = num(usage.cache_read_input_tokens);
  const cacheWrite = num(usage.cache_creation_input_tokens);
  const input = options.inputIncludesCache
    ? num(usage.input_tokens)
    : num(usage.input_tokens) + cacheRead + cacheWrite;
  const costUsd = typeof cost === 'number' ? cost : undefined;
  return [usageEvent(input, num(usage.output_tokens), cacheRead, costUsd)];
}

function resultError(event: Record<string, unknown>): string {
  const errors = arr(event.errors)
    .map((e) => (isObject(e) ? (str(e.message) ?? toText(e)) : toText(e)))
    .filter((e) => e !== '');
  if (errors.length > 0) return errors.join('; ');
  const error = event.error;
  if (isObject(error) && str(error.message)) return str(error.message)!;
  if (typeof error === 'string' && error !== '') return error;
  const result = str(event.result);
  if (result) return result;
  return `agent reported ${str(event.subtype) ?? 'an error'}`;
}

export function createClaudeStreamParser(options: ClaudeStreamOptions): AgentStreamParser {
  const toolNames = new Map<string, string>();

  function assistant(message: Record<string, unknown>): AgentEvent[] {
    const out: AgentEvent[] = [];
    for (const block of arr(message.content)) {
      if (!isObject(block)) continue;
      if (block.type === 'text' && str(block.text)) out.push({ kind: 'assistant', text: str(block.text)! });
      if (block.type === 'thinking' && str(block.thinking))
        out.push({ kind: 'thinking', text: str(block.thinking)! });
      if (block.type === 'tool_use') {
        const id = str(block.id);
        const name = str(block.name) ?? 'tool';
        if (id) toolNames.set(id, name);
        out.push({ kind: 'tool_call', ...(id ? { id } : {}), name, input: toText(block.input) });
      }
    }
    return out;
  }

  function toolResults(message: Record<string, unknown>): AgentEvent[] {
    const out: AgentEvent[] = [];
    for (const block of arr(message.content)) {
      if (!isObject(block) || block.type !== 'tool_result') continue;
      const id = str(block.tool_use_id);
      const name = id ? toolNames.get(id) : undefined;
      out.push({
        kind: 'tool_result',
        ...(id ? { id } : {}),
        ...(name ? { name } : {}),
        output: contentText(block.content),
        isError: block.is_error === true,
      });
    }
    return out;
  }

  return jsonLinesParser({
    sessionOf: (event) => event.session_id ?? event.sessionId,
    handle(event, out) {
      switch (event.type) {
        case 'assistant':
          out.push(...assistant(obj(event.message)));
          break;
        case 'user':
          out.push(...toolResults(obj(event.message)));
          break;
        case 'result': {
          const isError = event.is_error === true || (str(event.subtype)?.startsWith('error') ?? false);
          out.push(...resultUsage(event.usage, options, event.total_cost_usd));
          if (isError) out.push({ kind: 'error', message: resultError(event) });
          const result = str(event.result);
          out.push({ kind: 'done', isError, ...(result !== undefined ? { result } : {}) });
          break;
        }
      }
    },
  });
}
