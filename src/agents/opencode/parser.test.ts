import { describe, expect, it } from 'vitest';
import { createKiloDriver } from '../kilo/index.js';
import type { AgentEvent } from '../types.js';
import { createOpenCodeDriver } from './index.js';

const SID = 'ses_494719016ffe85dkDMj0FPRbHK';
const part = (extra: string) =>
  `"part":{"id":"prt_b6b8e1","sessionID":"${SID}","messageID":"msg_b6b8e0",${extra}}`;
const RUN = [
  `{"type":"step_start","timestamp":1767036059338,"sessionID":"${SID}",${part('"type":"step-start","snapshot":"46358aa58bd4898e237354989cb72e503432508e"')}}`,
  `{"type":"reasoning","timestamp":1767036059400,"sessionID":"${SID}",${part('"type":"reasoning","text":"Check the failing test first.","time":{"start":1,"end":2}')}}`,
  `{"type":"text","timestamp":1767036059500,"sessionID":"${SID}",${part('"type":"text","text":"Running the tests.","time":{"start":1,"end":2}')}}`,
  `{"type":"tool_use","timestamp":1767036060100,"sessionID":"${SID}",${part('"type":"tool","callID":"toolu_01X","tool":"bash","state":{"status":"completed","input":{"command":"npm test","description":"Run tests"},"output":"2 passing","title":"npm test","metadata":{"exit":0},"time":{"start":1,"end":2}}')}}`,
  `{"type":"tool_use","timestamp":1767036060200,"sessionID":"${SID}",${part('"type":"tool","callID":"toolu_01Y","tool":"read","state":{"status":"error","input":{"filePath":"/w/missing.ts"},"error":"File not found: /w/missing.ts","time":{"start":1,"end":2}}')}}`,
  `{"type":"step_finish","timestamp":1767036060300,"sessionID":"${SID}",${part('"type":"step-finish","reason":"tool-calls","snapshot":"46358aa5","cost":0.0123,"tokens":{"input":210,"output":45,"reasoning":5,"cache":{"read":12000,"write":300}}')}}`,
  `{"type":"text","timestamp":1767036061000,"sessionID":"${SID}",${part('"type":"text","text":"All tests pass now.","time":{"start":1,"end":2}')}}`,
  `{"type":"step_finish","timestamp":1767036061100,"sessionID":"${SID}",${part('"type":"step-finish","reason":"stop","snapshot":"9a1b2c3d","cost":0,"tokens":{"input":20,"output":8,"reasoning":0,"cache":{"read":12300,"write":0}}')}}`,
];
const EXPECTED: AgentEvent[] = [
  { kind: 'session', sessionId: SID },
  { kind: 'thinking', text: 'Check the failing test first.' },
  { kind: 'assistant', text: 'Running the tests.' },
  {
    kind: 'tool_call',
    id: 'toolu_01X',
    name: 'bash',
    input: '{"command":"npm test","description":"Run tests"}',
  },
  { kind: 'tool_result', id: 'toolu_01X', name: 'bash', output: '2 passing', isError: false },
  { kind: 'tool_call', id: 'toolu_01Y', name: 'read', input: '{"filePath":"/w/missing.ts"}' },
  {
    kind: 'tool_result',
    id: 'toolu_01Y',
    name: 'read',
    output: 'File not found: /w/missing.ts',
    isError: true,
  },
  {
    kind: 'usage',
    inputTokens: 210 + 12000 + 300,
    outputTokens: 50,
    cachedInputTokens: 12000,
    costUsd: 0.0123,
  },
  { kind: 'assistant', text: 'All tests pass now.' },
  { kind: 'usage', inputTokens: 20 + 12300, outputTokens: 8, cachedInputTokens: 12300 },
  { kind: 'done', isError: false, result: 'All tests pass now.' },
];

describe('opencode stream parser', () => {
  it('turns a recorded run --format json stream into normalised events, the session once', () => {
    const parser = createOpenCodeDriver().createParser();
    expect([...RUN.flatMap((l) => parser.parseLine(l)), ...parser.end()]).toEqual(EXPECTED);
  });

  it('is also what kilo speaks', () => {
    const parser = createKiloDriver().createParser();
    expect(RUN.flatMap((l) => parser.parseLine(l))).toEqual(EXPECTED);
  });

  it('reports a session error as an error and a failed done', () => {
    const parser = createOpenCodeDriver().createParser();
    expect(
      parser.parseLine(
        `{"type":"error","timestamp":1767036062000,"sessionID":"${SID}","error":{"name":"APIError","data":{"message":"Rate limit exceeded","statusCode":429,"isRetryable":true}}}`,
      ),
    ).toEqual([
      { kind: 'session', sessionId: SID },
      { kind: 'error', message: 'Rate limit exceeded' },
      { kind: 'done', isError: true },
    ]);
  });

  it('ignores lines that are not its JSON', () => {
    const parser = createOpenCodeDriver().createParser();
    expect(['INFO  2025-01-01 service=server', '', '{'].flatMap((l) => parser.parseLine(l))).toEqual([]);
  });
});
