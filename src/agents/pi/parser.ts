/**
 * pi `--mode json`: a `{"type":"session","id":…}` header, then agent events: `agent_start`,
 * `turn_start`, `message_start` / `message_update` / `message_end` (an assistant message's
 * content blocks are `text`, `thinking` and `toolCall`; it carries `usage` and `stopReason`),
 * `tool_execution_start` / `_update` / `_end` (`toolCallId`, `toolName`, `args`, `result`,
 * `isError`), `turn_end`, and `agent_end` when the run is over.
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

export function createPiParser(): AgentStreamParser {
  let lastMessage: string | undefined;
  let failed = false;

  function assistantMessage(message: Record<string, unknown>): AgentEvent[] {
    const out: AgentEvent[] = [];
    const texts: string[] = [];
    for (const block of arr(message.content)) {
      if (!isObject(block)) continue;
      if (block.type === 'text' && str(block.text)) texts.push(str(block.text)!);
      if (block.type === 'thinking' && str(block.thinking))
        out.push({ kind: 'thinking', text: str(block.thinking)! });
    }
    if (texts.length > 0) {
      lastMessage = texts.join('\n');
      out.push({ kind: 'assistant', text: lastMessage });
    }
    const usage = obj(message.usage);
    if (Object.keys(usage).length > 0) {
      const cacheRead = num(usage.cacheRead);
      const cost = obj(usage.cost).total;
      out.push(
        usageEvent(
          num(usage.input) + cacheRead + num(usage.cacheWrite),
          num(usage.output),
          cacheRead,
          typeof cost === 'number' ? cost : undefined,
        ),
      );
    }
    if (message.stopReason === 'error' || message.stopReason === 'aborted') {
      failed = true;
      out.push({ kind: 'error', message: str(message.errorMessage) ?? `pi stopped: ${message.stopReason}` });
    }
    return out;
  }

  return jsonLinesParser({
    sessionOf: (event) => (event.type === 'session' ? event.id : undefined),
    handle(event, out) {
      switch (event.type) {
        case 'message_end': {
          const message = obj(event.message);
          if (message.role === 'assistant') out.push(...assistantMessage(message));
          break;
        }
        case 'tool_execution_start': {
          const id = str(event.toolCallId);
          out.push({
            kind: 'tool_call',
            ...(id ? { id } : {}),
            name: str(event.toolName) ?? 'tool',
            input: toText(event.args),
          });
          break;
        }
        case 'tool_execution_end': {
          const id = str(event.toolCallId);
          const result = event.result;
          out.push({
            kind: 'tool_result',
            ...(id ? { id } : {}),
            name: str(event.toolName) ?? 'tool',
            output: isObject(result) ? contentText(result.content) : toText(result),
            isError: event.isError === true,
          });
          break;
        }
        case 'agent_end':
          out.push({
            kind: 'done',
            isError: failed,
            ...(lastMessage !== undefined ? { result: lastMessage } : {}),
          });
          break;
      }
    },
  });
}
