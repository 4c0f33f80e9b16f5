import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../types.js';
import { createCodexDriver } from './index.js';

function parse(lines: string[]): AgentEvent[] {
  const parser = createCodexDriver().createParser();
  return [...lines.flatMap((l) => parser.parseLine(l)), ...parser.end()];
}

const TID = '0199a213-81c0-7800-8aa1-bbab2a035a53';

describe('codex stream parser', () => {
  it('turns a recorded exec --json run into normalised events', () => {
    expect(
      parse([
        `{"type":"thread.started","thread_id":"${TID}"}`,
        '{"type":"turn.started"}',
        '{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Scanning the repository**"}}',
        '{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"README.md\\nsrc\\n","exit_code":0,"status":"completed"}}',
        '{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"bash -lc \'npm test\'","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"bash -lc \'npm test\'","aggregated_output":"1 failing\\n","exit_code":1,"status":"failed"}}',
        '{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"src/app.ts","kind":"update"},{"path":"src/new.ts","kind":"add"}],"status":"completed"}}',
        '{"type":"item.started","item":{"id":"item_4","type":"mcp_tool_call","server":"github","tool":"get_issue","arguments":{"number":12},"result":null,"error":null,"status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_4","type":"mcp_tool_call","server":"github","tool":"get_issue","arguments":{"number":12},"result":{"content":[{"type":"text","text":"Issue 12: crash on empty title"}],"structured_content":null},"error":null,"status":"completed"}}',
        '{"type":"item.completed","item":{"id":"item_5","type":"agent_message","text":"Updated src/app.ts and added a test."}}',
        '{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}',
      ]),
    ).toEqual([
      { kind: 'session', sessionId: TID },
      { kind: 'thinking', text: '**Scanning the repository**' },
      { kind: 'tool_call', id: 'item_1', name: 'shell', input: 'bash -lc ls' },
      { kind: 'tool_result', id: 'item_1', name: 'shell', output: 'README.md\nsrc\n', isError: false },
      { kind: 'tool_call', id: 'item_2', name: 'shell', input: "bash -lc 'npm test'" },
      { kind: 'tool_result', id: 'item_2', name: 'shell', output: '1 failing\n', isError: true },
      { kind: 'tool_call', id: 'item_3', name: 'file_change', input: 'update src/app.ts\nadd src/new.ts' },
      { kind: 'tool_result', id: 'item_3', name: 'file_change', output: 'applied', isError: false },
      { kind: 'tool_call', id: 'item_4', name: 'github.get_issue', input: '{"number":12}' },
      {
        kind: 'tool_result',
        id: 'item_4',
        name: 'github.get_issue',
        output: 'Issue 12: crash on empty title',
        isError: false,
      },
      { kind: 'assistant', text: 'Updated src/app.ts and added a test.' },
      { kind: 'usage', inputTokens: 24763, outputTokens: 122, cachedInputTokens: 24448 },
      { kind: 'done', isError: false, result: 'Updated src/app.ts and added a test.' },
    ]);
  });

  it('reports stream errors and a failed turn', () => {
    expect(
      parse([
        `{"type":"thread.started","thread_id":"${TID}"}`,
        '{"type":"error","message":"Reconnecting... 1/5"}',
        '{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}',
      ]),
    ).toEqual([
      { kind: 'session', sessionId: TID },
      { kind: 'error', message: 'Reconnecting... 1/5' },
      { kind: 'error', message: 'stream disconnected before completion' },
      { kind: 'done', isError: true },
    ]);
  });

  it('ignores lines that are not its JSON', () => {
    expect(parse(['Reading prompt from stdin...', '', '{"type":"todo_list"}'])).toEqual([]);
  });
});
