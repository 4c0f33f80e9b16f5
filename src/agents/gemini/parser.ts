/**
 * Gemini CLI `--output-format stream-json`: `init` (with `session_id` and `model`), `message`
 * (user or assistant; assistant text arrives in `delta` chunks), `tool_use` (`tool_name`,
 * `tool_id`, `parameters`), `tool_result` (`tool_id`, `status`, `output` or `error`), `error`
 * (`severity`, `message`) and a final `result` (`status`, `stats` with token totals).
 */
import { num, obj, parseJsonObject, SessionIds, str, toText, usageEvent } from '../driver-kit.js';
import type { AgentEvent, AgentStreamParser } from '../types.js';

export function createGeminiParser(): AgentStreamParser {
  const sessions = new SessionIds();
  const toolNames = new Map<string, string>();
  let streaming = '';
  let lastMessage: string | undefined;

  /** Assistant deltas are held until something else happens, then reported as one message. */
  function flush(): AgentEvent[] {
    if (streaming === '') return [];
    const text = streaming;
    streaming = '';
    lastMessage = text;
    return [{ kind: 'assistant', text }];
  }

  return {
    parseLine(line) {
      const event = parseJsonObject(line);
      if (!event) return [];
      const out = sessions.take(event.session_id);
      if (event.type === 'message') {
        if (event.role !== 'assistant') return out;
        const text = str(event.content) ?? '';
        if (event.delta === true) {
          streaming += text;
          return out;
        }
        out.push(...flush());
        if (text) {
          lastMessage = text;
          out.push({ kind: 'assistant', text });
        }
        return out;
      }
      out.push(...flush());
      switch (event.type) {
        case 'tool_use': {
          const id = str(event.tool_id);
          const name = str(event.tool_name) ?? 'tool';
          if (id) toolNames.set(id, name);
          out.push({ kind: 'tool_call', ...(id ? { id } : {}), name, input: toText(event.parameters) });
          break;
        }
        case 'tool_result': {
          const id = str(event.tool_id);
          const name = id ? toolNames.get(id) : undefined;
          const isError = event.status === 'error';
          const output = isError
            ? (str(obj(event.error).message) ?? toText(event.output))
            : toText(event.output);
          out.push({
            kind: 'tool_result',
            ...(id ? { id } : {}),
            ...(name ? { name } : {}),
            output,
            isError,
          });
          break;
        }
        case 'error':
          if (event.severity !== 'warning')
            out.push({ kind: 'error', message: str(event.message) ?? 'gemini reported an error' });
          break;
        case 'result': {
          const stats = obj(event.stats);
          if (Object.keys(stats).length > 0) {
            out.push(
              usageEvent(
                num(stats.input_tokens) || num(stats.input),
                num(stats.output_tokens),
                num(stats.cached),
              ),
            );
          }
          const isError = event.status === 'error';
          if (isError)
            out.push({ kind: 'error', message: str(obj(event.error).message) ?? 'gemini run failed' });
          out.push({ kind: 'done', isError, ...(lastMessage !== undefined ? { result: lastMessage } : {}) });
          break;
        }
      }
      return out;
    },
    end: flush,
  };
}
