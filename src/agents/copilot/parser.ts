/**
 * Copilot CLI `--output-format=json`: its session events, one per line, as
 * `{type, data, id, timestamp, parentId}`: `session.start` (`data.sessionId`),
 * `assistant.message` (`data.content`, `data.toolRequests`), `assistant.reasoning`,
 * `tool.execution_start` (`toolCallId`, `toolName`, `arguments`), `tool.execution_complete`
 * (`success`, `result.content` or `error.message`), `assistant.usage` where emitted,
 * `session.error`, and a closing `result` line with `sessionId`, `exitCode` and `usage`
 * (premium requests and durations; token counts are not part of it).
 */
import { num, obj, parseJsonObject, SessionIds, str, toText, usageEvent } from '../driver-kit.js';
import type { AgentEvent, AgentStreamParser } from '../types.js';

export function createCopilotParser(): AgentStreamParser {
  const sessions = new SessionIds();
  const toolNames = new Map<string, string>();
  let lastMessage: string | undefined;

  return {
    parseLine(line) {
      const event = parseJsonObject(line);
      if (!event) return [];
      const data = obj(event.data);
      const out: AgentEvent[] = [];
      switch (event.type) {
        case 'session.start':
          out.push(...sessions.take(data.sessionId));
          break;
        case 'assistant.message': {
          const reasoning = str(data.reasoningText);
          if (reasoning) out.push({ kind: 'thinking', text: reasoning });
          const text = str(data.content);
          if (text) {
            lastMessage = text;
            out.push({ kind: 'assistant', text });
          }
          break;
        }
        case 'assistant.reasoning': {
          const text = str(data.content);
          if (text) out.push({ kind: 'thinking', text });
          break;
        }
        case 'tool.execution_start': {
          const id = str(data.toolCallId);
          const name = str(data.toolName) ?? 'tool';
          if (id) toolNames.set(id, name);
          out.push({ kind: 'tool_call', ...(id ? { id } : {}), name, input: toText(data.arguments) });
          break;
        }
        case 'tool.execution_complete': {
          const id = str(data.toolCallId);
          const name = id ? toolNames.get(id) : undefined;
          const isError = data.success === false;
          const output = isError
            ? (str(obj(data.error).message) ?? toText(obj(data.result).content))
            : toText(obj(data.result).content);
          out.push({
            kind: 'tool_result',
            ...(id ? { id } : {}),
            ...(name ? { name } : {}),
            output,
            isError,
          });
          break;
        }
        case 'assistant.usage': {
          const cacheRead = num(data.cacheReadTokens);
          out.push(usageEvent(num(data.inputTokens), num(data.outputTokens), cacheRead));
          break;
        }
        case 'session.error':
          out.push({ kind: 'error', message: str(data.message) ?? 'copilot reported an error' });
          break;
        case 'result': {
          out.push(...sessions.take(event.sessionId));
          const isError = typeof event.exitCode === 'number' && event.exitCode !== 0;
          out.push({ kind: 'done', isError, ...(lastMessage !== undefined ? { result: lastMessage } : {}) });
          break;
        }
      }
      return out;
    },
    end: () => [],
  };
}
