import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../types.js';
import { createClaudeDriver } from './index.js';

function parse(lines: string[]): AgentEvent[] {
  const parser = createClaudeDriver().createParser();
  return [...lines.flatMap((l) => parser.parseLine(l)), ...parser.end()];
}

const SID = '8f2d6c1e-4b7a-4e0c-9d1f-2a3b4c5d6e7f';
const RUN = [
  `{"type":"system","subtype":"init","cwd":"/w/tree","session_id":"${SID}","tools":["Task","Bash","Read","Edit"],"mcp_servers":[],"model":"claude-sonnet-4-5-20250929","permissionMode":"acceptEdits","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.0.22","uuid":"0d9c0b4e-1f1e-4c39-bd3b-1c6f7b0e9a10"}`,
  `{"type":"assistant","message":{"id":"msg_01Qx","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"thinking","thinking":"The failing test expects a trimmed title.","signature":"EuYBCkYIBRgC"}],"stop_reason":null,"usage":{"input_tokens":9,"cache_creation_input_tokens":4821,"cache_read_input_tokens":11875,"output_tokens":3}},"parent_tool_use_id":null,"session_id":"${SID}","uuid":"4b1f8a52-6a53-4f0e-a1e2-6c1f0f5b7d21"}`,
  `{"type":"assistant","message":{"id":"msg_01Qy","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"I'll run the tests first."},{"type":"tool_use","id":"toolu_01AbCdEf","name":"Bash","input":{"command":"npm test","description":"Run the test suite"}}],"stop_reason":null,"usage":{"input_tokens":9,"output_tokens":61}},"parent_tool_use_id":null,"session_id":"${SID}","uuid":"a5c3e2d1-0000-4000-8000-00000000000a"}`,
  `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01AbCdEf","type":"tool_result","content":"1 failing\\n  title › trims spaces","is_error":true}]},"parent_tool_use_id":null,"session_id":"${SID}","uuid":"e0b7d9f4-0000-4000-8000-00000000000b"}`,
  `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_02","type":"tool_result","content":[{"type":"text","text":"export function title(s) {"},{"type":"text","text":"  return s;"}]}]},"parent_tool_use_id":null,"session_id":"${SID}","uuid":"e0b7d9f4-0000-4000-8000-00000000000c"}`,
  `{"type":"result","subtype":"success","is_error":false,"duration_ms":15234,"duration_api_ms":14002,"num_turns":6,"result":"Fixed the failing test.","session_id":"${SID}","total_cost_usd":0.0842,"usage":{"input_tokens":18,"cache_creation_input_tokens":4821,"cache_read_input_tokens":31002,"output_tokens":912,"server_tool_use":{"web_search_requests":0},"service_tier":"standard"},"permission_denials":[],"uuid":"9f8e7d6c-0000-4000-8000-00000000000d"}`,
];

describe('claude stream parser', () => {
  it('turns a recorded run into session, thinking, messages, tools, usage and done', () => {
    expect(parse(RUN)).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'thinking', text: 'The failing test expects a trimmed title.' },
      { kind: 'assistant', text: "I'll run the tests first." },
      {
        kind: 'tool_call',
        id: 'toolu_01AbCdEf',
        name: 'Bash',
        input: '{"command":"npm test","description":"Run the test suite"}',
      },
      {
        kind: 'tool_result',
        id: 'toolu_01AbCdEf',
        name: 'Bash',
        output: '1 failing\n  title › trims spaces',
        isError: true,
      },
      {
        kind: 'tool_result',
        id: 'toolu_02',
        output: 'export function title(s) {\n  return s;',
        isError: false,
      },
      {
        kind: 'usage',
        inputTokens: 18 + 4821 + 31002,
        outputTokens: 912,
        cachedInputTokens: 31002,
        costUsd: 0.0842,
      },
      { kind: 'done', isError: false, result: 'Fixed the failing test.' },
    ]);
  });

  it('reports a failed run as an error and a failed done', () => {
    const events = parse([
      `{"type":"result","subtype":"error_max_turns","is_error":true,"duration_ms":90210,"num_turns":10,"session_id":"${SID}","total_cost_usd":0.31,"usage":{"input_tokens":40,"output_tokens":3000}}`,
    ]);
    expect(events).toContainEqual({ kind: 'error', message: 'agent reported error_max_turns' });
    expect(events.at(-1)).toEqual({ kind: 'done', isError: true });
  });

  it('uses the result text as the error when the API failed', () => {
    const events = parse([
      `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 {\\"type\\":\\"overloaded_error\\"}","session_id":"${SID}"}`,
    ]);
    expect(events).toContainEqual({ kind: 'error', message: 'API Error: 529 {"type":"overloaded_error"}' });
  });

  it('ignores lines that are not its JSON and never throws on them', () => {
    expect(parse(['', 'Warning: update available', '[1,2]', '{"type":', 'null', '{"no":"type"}'])).toEqual(
      [],
    );
  });
});
