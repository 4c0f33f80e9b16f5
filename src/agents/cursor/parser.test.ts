import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../types.js';
import { createCursorDriver } from './index.js';

function parse(lines: string[]): AgentEvent[] {
  const parser = createCursorDriver().createParser();
  return [...lines.flatMap((l) => parser.parseLine(l)), ...parser.end()];
}

const SID = '3f2a1b0c-9d8e-4f70-a6b5-c4d3e2f1a0b9';

describe('cursor stream parser', () => {
  it('turns a recorded stream-json run into normalised events', () => {
    expect(
      parse([
        `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"${SID}","model":"Auto","permissionMode":"default"}`,
        `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Fix the build"}]},"session_id":"${SID}"}`,
        `{"type":"thinking","subtype":"delta","text":"Need to ","session_id":"${SID}","timestamp_ms":1770823434041}`,
        `{"type":"thinking","subtype":"delta","text":"see the error.","session_id":"${SID}","timestamp_ms":1770823434042}`,
        `{"type":"thinking","subtype":"completed","session_id":"${SID}","timestamp_ms":1770823435070}`,
        `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Building first."}]},"session_id":"${SID}","model_call_id":"mc-1","timestamp_ms":1770823449274}`,
        `{"type":"tool_call","subtype":"started","call_id":"call_1","tool_call":{"shellToolCall":{"args":{"command":"npm run build","workingDirectory":"/w","timeout":30000}}},"model_call_id":"mc-1","session_id":"${SID}","timestamp_ms":1770823449274}`,
        `{"type":"tool_call","subtype":"completed","call_id":"call_1","tool_call":{"shellToolCall":{"args":{"command":"npm run build"},"result":{"success":{"command":"npm run build","exitCode":2,"stdout":"","stderr":"TS2304: Cannot find name 'x'","executionTime":812}}}},"model_call_id":"mc-1","session_id":"${SID}","timestamp_ms":1770823450086}`,
        `{"type":"tool_call","subtype":"started","call_id":"call_2","tool_call":{"readToolCall":{"args":{"path":"src/a.ts"}}},"session_id":"${SID}"}`,
        `{"type":"tool_call","subtype":"completed","call_id":"call_2","tool_call":{"readToolCall":{"args":{"path":"src/a.ts"},"result":{"success":{"content":"const y = 1;","totalLines":1}}}},"session_id":"${SID}"}`,
        `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Fixed the undefined name."}]},"session_id":"${SID}"}`,
        `{"type":"result","subtype":"success","duration_ms":4986,"duration_api_ms":4986,"is_error":false,"result":"Building first.Fixed the undefined name.","session_id":"${SID}","request_id":"r-1","usage":{"inputTokens":1500,"outputTokens":300,"cacheReadTokens":9000,"cacheWriteTokens":100}}`,
      ]),
    ).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'thinking', text: 'Need to see the error.' },
      { kind: 'assistant', text: 'Building first.' },
      {
        kind: 'tool_call',
        id: 'call_1',
        name: 'shell',
        input: '{"command":"npm run build","workingDirectory":"/w","timeout":30000}',
      },
      {
        kind: 'tool_result',
        id: 'call_1',
        name: 'shell',
        output: "TS2304: Cannot find name 'x'",
        isError: true,
      },
      { kind: 'tool_call', id: 'call_2', name: 'read', input: '{"path":"src/a.ts"}' },
      { kind: 'tool_result', id: 'call_2', name: 'read', output: 'const y = 1;', isError: false },
      { kind: 'assistant', text: 'Fixed the undefined name.' },
      { kind: 'usage', inputTokens: 1500 + 9000 + 100, outputTokens: 300, cachedInputTokens: 9000 },
      { kind: 'done', isError: false, result: 'Building first.Fixed the undefined name.' },
    ]);
  });

  it('reports a failed result', () => {
    expect(
      parse([
        `{"type":"result","subtype":"error","is_error":true,"result":"Model quota exhausted","session_id":"${SID}"}`,
      ]),
    ).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'error', message: 'Model quota exhausted' },
      { kind: 'done', isError: true, result: 'Model quota exhausted' },
    ]);
  });

  it('ignores lines that are not its JSON', () => {
    expect(parse(['Authenticating...', '', '{"type"'])).toEqual([]);
  });
});
