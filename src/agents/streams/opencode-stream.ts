/**
 * OpenCode's `run --format json` (also spoken by Kilo): one JSON object per line with `type`,
 * `timestamp`, `sessionID` and a `part`. `text` and `reasoning` carry finished text parts,
 * `tool_use` a tool part whose `state` holds input, output or error, `step_finish` the step's token
 * counts and cost (the last step of a run ends with reason `stop`), and `error` a session error.
 */
import { num, obj, parseJsonObject, SessionIds, str, toText, usageEvent } from '../driver-kit.js';
import type { AgentEvent, AgentStreamParser } from '../types.js';

function errorMessage(event: Record<string, unknown>): string {
  const error = event.error;
  if (typeof error === 'string') return error;
  const e = obj(error);
  return (
    str(obj(e.data).message) ??
    str(e.message) ??
    str(event.message) ??
    str(e.name) ??
    'opencode reported an error'
  );
}

export function createOpenCodeStreamParser(): AgentStreamParser {
  const sessions = new SessionIds();
  const announcedTools = new Set<string>();
  let lastText: string | undefined;

  function tool(part: Record<string, unknown>): AgentEvent[] {
    const out: AgentEvent[] = [];
    const state = obj(part.state);
    const id = str(part.callID) ?? str(part.id);
    const name = str(part.tool) ?? 'tool';
    if (!id || !announcedTools.has(id)) {
      if (id) announcedTools.add(id);
      out.push({ kind: 'tool_call', ...(id ? { id } : {}), name, input: toText(state.input) });
    }
    if (state.status === 'completed' || state.status === 'error') {
      const isError = state.status === 'error';
      out.push({
        kind: 'tool_result',
        ...(id ? { id } : {}),
        name,
        output: isError ? toText(state.error ?? state.output) : toText(state.output),
        isError,
      });
    }
    return out;
  }

  return {
    parseLine(line) {
      const event = parseJsonObject(line);
      if (!event) return [];
      const part = obj(event.part);
      const out = sessions.take(event.sessionID ?? part.sessionID);
      switch (event.type) {
        case 'text': {
          const text = str(part.text);
          if (text) {
            lastText = text;
            out.push({ kind: 'assistant', text });
          }
          break;
        }
        case 'reasoning': {
          const text = str(part.text);
          if (text) out.push({ kind: 'thinking', text });
          break;
        }
        case 'tool_use':
          out.push(...tool(part));
          break;
        case 'step_finish': {
          const tokens = obj(part.tokens);
          const cache = obj(tokens.cache);
          const cost = typeof part.cost === 'number' ? part.cost : undefined;
          out.push(
            usageEvent(
              num(tokens.input) + num(cache.read) + num(cache.write),
              num(tokens.output) + num(tokens.reasoning),
              num(cache.read),
              cost,
            ),
          );
          if (part.reason === 'stop')
            out.push({
              kind: 'done',
              isError: false,
              ...(lastText !== undefined ? { result: lastText } : {}),
            });
          break;
        }
        case 'error':
          out.push({ kind: 'error', message: errorMessage(event) }, { kind: 'done', isError: true });
          break;
      }
      return out;
    },
    end: () => [],
  };
}
