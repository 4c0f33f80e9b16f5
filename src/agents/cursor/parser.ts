/**
 * Cursor agent `--print --output-format stream-json`: `system`/`init` with `session_id`, the
 * prompt echoed as `user`, `thinking` deltas closed by `thinking`/`completed`, `assistant`
 * messages, `tool_call` `started` / `completed` pairs whose payload is keyed by the tool kind
 * (`shellToolCall`, `readToolCall`, `editToolCall`…, or `function` for MCP tools), and a final
 * `result` with the answer, `is_error` and, in recent versions, token `usage`.
 */
import { contentText, isObject, jsonLinesParser, num, obj, str, toText, usageEvent } from '../driver-kit.js';
import type { AgentEvent, AgentStreamParser } from '../types.js';

interface CursorTool {
  name: string;
  args: unknown;
  result: Record<string, unknown> | undefined;
}

function readTool(toolCall: unknown): CursorTool {
  const call = obj(toolCall);
  const fn = obj(call.function);
  if (str(fn.name)) {
    return {
      name: str(fn.name)!,
      args: fn.arguments,
      result: isObject(call.result) ? call.result : undefined,
    };
  }
  const key = Object.keys(call)[0] ?? 'tool';
  const body = obj(call[key]);
  return {
    name: key.replace(/ToolCall$/, '') || key,
    args: body.args,
    result: isObject(body.result) ? body.result : undefined,
  };
}

function toolOutcome(result: Record<string, unknown> | undefined): { output: string; isError: boolean } {
  if (!result) return { output: '', isError: false };
  for (const key of ['error', 'failure', 'rejected'] as const) {
    if (key in result) {
      const failure = obj(result[key]);
      return { output: str(failure.message) ?? str(failure.error) ?? toText(result[key]), isError: true };
    }
  }
  const success = obj(result.success);
  if ('exitCode' in success || 'stdout' in success) {
    const text = [str(success.stdout), str(success.stderr)].filter((t) => t).join('\n');
    return { output: text, isError: num(success.exitCode) !== 0 };
  }
  if (typeof success.content === 'string') return { output: success.content, isError: false };
  return { output: toText(Object.keys(success).length > 0 ? success : result), isError: false };
}

export function createCursorParser(): AgentStreamParser {
  let thinking = '';

  function flushThinking(): AgentEvent[] {
    if (thinking === '') return [];
    const text = thinking;
    thinking = '';
    return [{ kind: 'thinking', text }];
  }

  return jsonLinesParser({
    sessionOf: (event) => event.session_id,
    handle(event, out) {
      if (event.type === 'thinking') {
        if (event.subtype === 'delta') thinking += str(event.text) ?? '';
        else out.push(...flushThinking());
        return;
      }
      out.push(...flushThinking());
      switch (event.type) {
        case 'assistant': {
          const text = contentText(obj(event.message).content);
          if (text) out.push({ kind: 'assistant', text });
          break;
        }
        case 'tool_call': {
          const id = str(event.call_id);
          const tool = readTool(event.tool_call);
          if (event.subtype === 'started') {
            out.push({ kind: 'tool_call', ...(id ? { id } : {}), name: tool.name, input: toText(tool.args) });
          } else if (event.subtype === 'completed') {
            const { output, isError } = toolOutcome(tool.result);
            out.push({ kind: 'tool_result', ...(id ? { id } : {}), name: tool.name, output, isError });
          }
          break;
        }
        case 'result': {
          const usage = obj(event.usage);
          if (Object.keys(usage).length > 0) {
            const cacheRead = num(usage.cacheReadTokens);
            out.push(
              usageEvent(
                num(usage.inputTokens) + cacheRead + num(usage.cacheWriteTokens),
                num(usage.outputTokens),
                cacheRead,
              ),
            );
          }
          const isError = event.is_error === true || event.subtype === 'error';
          const result = str(event.result);
          if (isError)
            out.push({ kind: 'error', message: result || str(event.error) || 'cursor agent failed' });
          out.push({ kind: 'done', isError, ...(result !== undefined ? { result } : {}) });
          break;
        }
      }
    },
    end: flushThinking,
  });
}
