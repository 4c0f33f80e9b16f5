import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../types.js';
import { createPiDriver } from './index.js';

function parse(lines: string[]): AgentEvent[] {
  const parser = createPiDriver().createParser();
  return [...lines.flatMap((l) => parser.parseLine(l)), ...parser.end()];
}

const SID = 'ccd569e0-4e1b-4c7d-a981-637ed4107310';
const USAGE =
  '"usage":{"input":12,"output":40,"cacheRead":3000,"cacheWrite":200,"totalTokens":3252,"cost":{"input":0.00004,"output":0.0006,"cacheRead":0.0009,"cacheWrite":0.00075,"total":0.00229}}';

describe('pi stream parser', () => {
  it('takes the session from the header and reads messages and tool executions', () => {
    expect(
      parse([
        `{"type":"session","version":3,"id":"${SID}","timestamp":"2026-01-13T00:33:34.702Z","cwd":"/repo"}`,
        '{"type":"agent_start"}',
        '{"type":"turn_start"}',
        '{"type":"message_start","message":{"role":"user","content":[{"type":"text","text":"Fix it"}],"timestamp":1}}',
        '{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"Fix it"}],"timestamp":1}}',
        '{"type":"message_update","message":{"role":"assistant","content":[]},"assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Look"}}',
        `{"type":"message_end","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Read the file first."},{"type":"text","text":"Looking at the code."},{"type":"toolCall","id":"toolu_7","name":"read","arguments":{"path":"a.ts"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",${USAGE},"stopReason":"toolUse","timestamp":2}}`,
        '{"type":"tool_execution_start","toolCallId":"toolu_7","toolName":"read","args":{"path":"a.ts"}}',
        '{"type":"tool_execution_end","toolCallId":"toolu_7","toolName":"read","result":{"content":[{"type":"text","text":"export const a = 1;"}],"details":{}},"isError":false}',
        '{"type":"turn_end","message":{"role":"assistant","content":[]},"toolResults":[]}',
        `{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",${USAGE},"stopReason":"stop","timestamp":3}}`,
        '{"type":"agent_end","messages":[]}',
      ]),
    ).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'thinking', text: 'Read the file first.' },
      { kind: 'assistant', text: 'Looking at the code.' },
      {
        kind: 'usage',
        inputTokens: 12 + 3000 + 200,
        outputTokens: 40,
        cachedInputTokens: 3000,
        costUsd: 0.00229,
      },
      { kind: 'tool_call', id: 'toolu_7', name: 'read', input: '{"path":"a.ts"}' },
      { kind: 'tool_result', id: 'toolu_7', name: 'read', output: 'export const a = 1;', isError: false },
      { kind: 'assistant', text: 'Done.' },
      {
        kind: 'usage',
        inputTokens: 12 + 3000 + 200,
        outputTokens: 40,
        cachedInputTokens: 3000,
        costUsd: 0.00229,
      },
      { kind: 'done', isError: false, result: 'Done.' },
    ]);
  });

  it('reports an assistant message that stopped on an error', () => {
    expect(
      parse([
        '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"401 invalid x-api-key","timestamp":4}}',
        '{"type":"agent_end","messages":[]}',
      ]),
    ).toEqual([
      { kind: 'error', message: '401 invalid x-api-key' },
      { kind: 'done', isError: true },
    ]);
  });

  it('ignores lines that are not its JSON', () => {
    expect(parse(['', 'pi v0.50.0', '{"type":"auto_retry_start","attempt":1}'])).toEqual([]);
  });
});
