/**
 * `codex exec --json`: `thread.started` (the `thread_id` is the session), `turn.started`, then
 * `item.started` / `item.updated` / `item.completed` for thread items (`agent_message`,
 * `reasoning`, `command_execution`, `file_change`, `mcp_tool_call`, `web_search`, `todo_list`,
 * `error`), and `turn.completed` with `usage` or `turn.failed` with `error`. A top-level `error`
 * event reports a stream problem (Codex also uses it while reconnecting).
 */
import { arr, isObject, jsonLinesParser, num, obj, str, toText, usageEvent } from '../driver-kit.js';
import type { AgentEvent, AgentStreamParser } from '../types.js';

interface ToolView {
  name: string;
  input: string;
}

function toolView(item: Record<string, unknown>): ToolView | undefined {
  switch (item.type) {
    case 'command_execution':
      return { name: 'shell', input: toText(item.command) };
    case 'mcp_tool_call':
      return {
        name: `${str(item.server) ?? 'mcp'}.${str(item.tool) ?? 'tool'}`,
        input: toText(item.arguments),
      };
    case 'web_search':
      return { name: 'web_search', input: toText(item.query) };
    case 'file_change':
      return {
        name: 'file_change',
        input: arr(item.changes)
          .map((c) => `${str(obj(c).kind) ?? 'update'} ${str(obj(c).path) ?? ''}`.trim())
          .join('\n'),
      };
    default:
      return undefined;
  }
}

function toolOutput(item: Record<string, unknown>): { output: string; isError: boolean } {
  const failed = item.status === 'failed' || item.status === 'declined';
  switch (item.type) {
    case 'command_execution': {
      const exit = item.exit_code;
      return {
        output: toText(item.aggregated_output),
        isError: failed || (typeof exit === 'number' && exit !== 0),
      };
    }
    case 'mcp_tool_call': {
      const error = obj(item.error);
      if (str(error.message)) return { output: str(error.message)!, isError: true };
      const result = obj(item.result);
      const blocks = arr(result.content)
        .map((b) => (isObject(b) ? (str(b.text) ?? toText(b)) : toText(b)))
        .join('\n');
      return { output: blocks || toText(result.structured_content), isError: failed };
    }
    case 'file_change':
      return { output: failed ? 'patch failed' : 'applied', isError: failed };
    default:
      return { output: '', isError: failed };
  }
}

export function createCodexParser(): AgentStreamParser {
  const announced = new Set<string>();
  let lastMessage: string | undefined;

  function started(item: Record<string, unknown>): AgentEvent[] {
    const view = toolView(item);
    const id = str(item.id);
    if (!view || (id && announced.has(id))) return [];
    if (id) announced.add(id);
    return [{ kind: 'tool_call', ...(id ? { id } : {}), name: view.name, input: view.input }];
  }

  function completed(item: Record<string, unknown>): AgentEvent[] {
    switch (item.type) {
      case 'agent_message': {
        const text = str(item.text);
        if (!text) return [];
        lastMessage = text;
        return [{ kind: 'assistant', text }];
      }
      case 'reasoning': {
        const text = str(item.text);
        return text ? [{ kind: 'thinking', text }] : [];
      }
      case 'error':
        return [{ kind: 'error', message: str(item.message) ?? 'codex reported an error' }];
    }
    const view = toolView(item);
    if (!view) return [];
    const id = str(item.id);
    const { output, isError } = toolOutput(item);
    return [
      ...started(item),
      { kind: 'tool_result', ...(id ? { id } : {}), name: view.name, output, isError },
    ];
  }

  return jsonLinesParser({
    sessionOf: (event) => event.thread_id,
    handle(event, out) {
      switch (event.type) {
        case 'item.started':
          out.push(...started(obj(event.item)));
          break;
        case 'item.completed':
          out.push(...completed(obj(event.item)));
          break;
        case 'turn.completed': {
          const usage = obj(event.usage);
          out.push(
            usageEvent(num(usage.input_tokens), num(usage.output_tokens), num(usage.cached_input_tokens)),
            { kind: 'done', isError: false, ...(lastMessage !== undefined ? { result: lastMessage } : {}) },
          );
          break;
        }
        case 'turn.failed':
          out.push(
            { kind: 'error', message: str(obj(event.error).message) ?? 'codex turn failed' },
            { kind: 'done', isError: true },
          );
          break;
        case 'error':
          out.push({ kind: 'error', message: str(event.message) ?? 'codex reported an error' });
          break;
      }
    },
  });
}
