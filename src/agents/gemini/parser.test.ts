import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../types.js';
import { createGeminiDriver } from './index.js';

function parse(lines: string[]): AgentEvent[] {
  const parser = createGeminiDriver().createParser();
  return [...lines.flatMap((l) => parser.parseLine(l)), ...parser.end()];
}

const SID = 'b2b90938-611f-4bd0-adf6-829e14549653';
const T = '"timestamp":"2025-10-10T12:00:00.000Z"';

describe('gemini stream parser', () => {
  it('takes the session from init and joins assistant deltas into one message', () => {
    expect(
      parse([
        `{"type":"init",${T},"session_id":"${SID}","model":"gemini-2.5-pro"}`,
        `{"type":"message",${T},"role":"user","content":"List the files"}`,
        `{"type":"message",${T},"role":"assistant","content":"Let me ","delta":true}`,
        `{"type":"message",${T},"role":"assistant","content":"look.","delta":true}`,
        `{"type":"tool_use",${T},"tool_name":"run_shell_command","tool_id":"run_shell_command-1760097600000-ab12","parameters":{"command":"ls"}}`,
        `{"type":"tool_result",${T},"tool_id":"run_shell_command-1760097600000-ab12","status":"success","output":"README.md"}`,
        `{"type":"tool_use",${T},"tool_name":"read_file","tool_id":"read_file-1760097600001-cd34","parameters":{"absolute_path":"/w/nope"}}`,
        `{"type":"tool_result",${T},"tool_id":"read_file-1760097600001-cd34","status":"error","output":"","error":{"type":"file_not_found","message":"File not found: /w/nope"}}`,
        `{"type":"error",${T},"severity":"warning","message":"Loop detected, continuing"}`,
        `{"type":"message",${T},"role":"assistant","content":"Only README.md.","delta":true}`,
        `{"type":"result",${T},"status":"success","stats":{"total_tokens":9120,"input_tokens":8900,"output_tokens":220,"cached":6000,"input":2900,"duration_ms":4210,"tool_calls":2}}`,
      ]),
    ).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'assistant', text: 'Let me look.' },
      {
        kind: 'tool_call',
        id: 'run_shell_command-1760097600000-ab12',
        name: 'run_shell_command',
        input: '{"command":"ls"}',
      },
      {
        kind: 'tool_result',
        id: 'run_shell_command-1760097600000-ab12',
        name: 'run_shell_command',
        output: 'README.md',
        isError: false,
      },
      {
        kind: 'tool_call',
        id: 'read_file-1760097600001-cd34',
        name: 'read_file',
        input: '{"absolute_path":"/w/nope"}',
      },
      {
        kind: 'tool_result',
        id: 'read_file-1760097600001-cd34',
        name: 'read_file',
        output: 'File not found: /w/nope',
        isError: true,
      },
      { kind: 'assistant', text: 'Only README.md.' },
      { kind: 'usage', inputTokens: 8900, outputTokens: 220, cachedInputTokens: 6000 },
      { kind: 'done', isError: false, result: 'Only README.md.' },
    ]);
  });

  it('flushes a message still streaming when the output ends', () => {
    expect(parse([`{"type":"message",${T},"role":"assistant","content":"cut sho","delta":true}`])).toEqual([
      { kind: 'assistant', text: 'cut sho' },
    ]);
  });

  it('reports errors and a failed result', () => {
    expect(
      parse([
        `{"type":"error",${T},"severity":"error","message":"Quota exceeded"}`,
        `{"type":"result",${T},"status":"error","error":{"type":"FatalTurnError","message":"Quota exceeded"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":10,"tool_calls":0}}`,
      ]),
    ).toEqual([
      { kind: 'error', message: 'Quota exceeded' },
      { kind: 'usage', inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 },
      { kind: 'error', message: 'Quota exceeded' },
      { kind: 'done', isError: true },
    ]);
  });

  it('ignores lines that are not its JSON', () => {
    expect(parse(['Loaded cached credentials.', '', '{"x":'])).toEqual([]);
  });
});
