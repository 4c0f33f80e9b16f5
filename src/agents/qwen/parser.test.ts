import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../types.js';
import { createQwenDriver } from './index.js';

function parse(lines: string[]): AgentEvent[] {
  const parser = createQwenDriver().createParser();
  return [...lines.flatMap((l) => parser.parseLine(l)), ...parser.end()];
}

const SID = 'c0ffee00-1234-4abc-9def-0123456789ab';

describe('qwen stream parser', () => {
  it('reads Claude-style stream-json, counting the whole prompt as input', () => {
    expect(
      parse([
        `{"type":"system","subtype":"init","uuid":"u1","session_id":"${SID}","cwd":"/w","tools":["read_file","run_shell_command"],"mcp_servers":[],"model":"qwen3-coder-plus","permission_mode":"default","qwen_code_version":"0.2.1"}`,
        `{"type":"assistant","uuid":"u2","session_id":"${SID}","parent_tool_use_id":null,"message":{"id":"m1","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"tool_use","id":"call_9","name":"run_shell_command","input":{"command":"ls"}}],"stop_reason":null,"usage":{"input_tokens":100,"output_tokens":5}}}`,
        `{"type":"user","uuid":"u3","session_id":"${SID}","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_9","content":"README.md","is_error":false}]}}`,
        `{"type":"assistant","uuid":"u4","session_id":"${SID}","parent_tool_use_id":null,"message":{"id":"m2","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"There is one file."}],"stop_reason":null,"usage":{"input_tokens":120,"output_tokens":6}}}`,
        `{"type":"result","subtype":"success","uuid":"u5","session_id":"${SID}","is_error":false,"duration_ms":3012,"duration_api_ms":2800,"num_turns":2,"result":"There is one file.","usage":{"input_tokens":220,"output_tokens":11,"cache_read_input_tokens":64,"total_tokens":231},"permission_denials":[]}`,
      ]),
    ).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'tool_call', id: 'call_9', name: 'run_shell_command', input: '{"command":"ls"}' },
      { kind: 'tool_result', id: 'call_9', name: 'run_shell_command', output: 'README.md', isError: false },
      { kind: 'assistant', text: 'There is one file.' },
      { kind: 'usage', inputTokens: 220, outputTokens: 11, cachedInputTokens: 64 },
      { kind: 'done', isError: false, result: 'There is one file.' },
    ]);
  });

  it('reports a failed run', () => {
    const events = parse([
      `{"type":"result","subtype":"error_during_execution","uuid":"u6","session_id":"${SID}","is_error":true,"duration_ms":10,"num_turns":0,"error":{"type":"api_error","message":"401 invalid api key"}}`,
    ]);
    expect(events).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'error', message: '401 invalid api key' },
      { kind: 'done', isError: true },
    ]);
  });
});
