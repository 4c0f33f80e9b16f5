import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../types.js';
import { createCopilotDriver } from './index.js';

function parse(lines: string[]): AgentEvent[] {
  const parser = createCopilotDriver().createParser();
  return [...lines.flatMap((l) => parser.parseLine(l)), ...parser.end()];
}

const SID = '916524aa-24ae-406d-899a-698d2c19dd57';
const E = (type: string, data: string, id: string, parent: string | null) =>
  `{"type":"${type}","data":${data},"id":"${id}","timestamp":"2026-01-10T10:00:00.000Z","parentId":${parent ? `"${parent}"` : 'null'}}`;

describe('copilot stream parser', () => {
  it('turns recorded --output-format=json events into normalised events', () => {
    expect(
      parse([
        E(
          'session.start',
          `{"sessionId":"${SID}","version":1,"producer":"copilot-agent","copilotVersion":"0.0.400","startTime":"2026-01-10T10:00:00.000Z","selectedModel":"claude-sonnet-4.5"}`,
          'e1',
          null,
        ),
        E('user.message', '{"content":"Fix the flaky test","attachments":[]}', 'e2', 'e1'),
        E('assistant.turn_start', '{"turnId":"0"}', 'e3', 'e2'),
        E('assistant.reasoning', '{"reasoningId":"r1","content":"The test depends on time."}', 'e4', 'e3'),
        E(
          'assistant.message',
          '{"messageId":"m1","content":"Running it.","toolRequests":[{"toolCallId":"toolu_1","name":"bash","arguments":{"command":"npm test"},"type":"function"}]}',
          'e5',
          'e4',
        ),
        E(
          'tool.execution_start',
          '{"toolCallId":"toolu_1","toolName":"bash","arguments":{"command":"npm test"}}',
          'e6',
          'e5',
        ),
        E(
          'tool.execution_complete',
          '{"toolCallId":"toolu_1","success":true,"result":{"content":"3 passing","detailedContent":"3 passing"}}',
          'e7',
          'e6',
        ),
        E(
          'tool.execution_start',
          '{"toolCallId":"toolu_2","toolName":"edit","arguments":{"path":"x.ts"}}',
          'e8',
          'e7',
        ),
        E(
          'tool.execution_complete',
          '{"toolCallId":"toolu_2","success":false,"error":{"message":"Permission denied","code":"denied"}}',
          'e9',
          'e8',
        ),
        E(
          'assistant.message',
          '{"messageId":"m2","content":"The test is stable now.","toolRequests":[]}',
          'e10',
          'e9',
        ),
        E('assistant.turn_end', '{"turnId":"0"}', 'e11', 'e10'),
        `{"type":"result","timestamp":"2026-01-10T10:00:09.000Z","sessionId":"${SID}","exitCode":0,"usage":{"premiumRequests":1,"totalApiDurationMs":7000,"sessionDurationMs":9000,"codeChanges":{"linesAdded":3,"linesRemoved":1,"filesModified":["x.test.ts"]}}}`,
      ]),
    ).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'thinking', text: 'The test depends on time.' },
      { kind: 'assistant', text: 'Running it.' },
      { kind: 'tool_call', id: 'toolu_1', name: 'bash', input: '{"command":"npm test"}' },
      { kind: 'tool_result', id: 'toolu_1', name: 'bash', output: '3 passing', isError: false },
      { kind: 'tool_call', id: 'toolu_2', name: 'edit', input: '{"path":"x.ts"}' },
      { kind: 'tool_result', id: 'toolu_2', name: 'edit', output: 'Permission denied', isError: true },
      { kind: 'assistant', text: 'The test is stable now.' },
      { kind: 'done', isError: false, result: 'The test is stable now.' },
    ]);
  });

  it('reports a session error and a non-zero exit', () => {
    expect(
      parse([
        E(
          'session.error',
          '{"errorType":"authentication","message":"No valid GitHub token found"}',
          'e1',
          null,
        ),
        `{"type":"result","timestamp":"2026-01-10T10:00:01.000Z","sessionId":"${SID}","exitCode":1,"usage":{"premiumRequests":0}}`,
      ]),
    ).toEqual([
      { kind: 'error', message: 'No valid GitHub token found' },
      { kind: 'session', sessionId: SID },
      { kind: 'done', isError: true },
    ]);
  });

  it('ignores lines that are not its JSON', () => {
    expect(parse(['Welcome to GitHub Copilot CLI', ''])).toEqual([]);
  });
});
