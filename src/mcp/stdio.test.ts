import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PROTOCOL_VERSIONS, RPC, serveStdio, tool } from './stdio.js';

const echo = tool({
  name: 'echo',
  description: 'Says the word back.',
  input: z.object({ word: z.string().min(1) }),
  async call({ word }) {
    return { text: word, data: { word } };
  },
});
const broken = tool({
  name: 'broken',
  description: 'Always throws.',
  input: z.object({}),
  async call() {
    throw new Error('disk on fire');
  },
});

/** Sends `lines` to a server and returns every message it wrote, parsed. */
async function exchange(lines: string[]): Promise<Record<string, unknown>[]> {
  const input = new PassThrough();
  let written = '';
  const done = serveStdio(input, { write: (text) => (written += text) }, [echo, broken], {
    name: 'test',
    version: '1.2.3',
  });
  for (const line of lines) input.write(`${line}\n`);
  input.end();
  await done;
  return written
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const request = (id: number, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

describe('MCP over stdio', () => {
  it('negotiates the protocol version: the one asked when spoken, else the newest', async () => {
    const answers = await exchange([
      request(1, 'initialize', {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 'c', version: '1' },
      }),
      request(2, 'initialize', {
        protocolVersion: '1999-01-01',
        capabilities: {},
        clientInfo: { name: 'c', version: '1' },
      }),
    ]);
    expect(answers[0]).toMatchObject({
      id: 1,
      result: {
        protocolVersion: '2025-03-26',
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: 'test', version: '1.2.3' },
      },
    });
    expect(answers[1]).toMatchObject({ id: 2, result: { protocolVersion: PROTOCOL_VERSIONS[0] } });
  });

  it('answers requests in order, never a notification, and lists tools with their JSON Schema', async () => {
    const answers = await exchange([
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      request(1, 'ping'),
      request(2, 'tools/list'),
    ]);
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[0]).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    const tools = (answers[1]!.result as { tools: { name: string; inputSchema: Record<string, unknown> }[] })
      .tools;
    expect(tools.map((t) => t.name)).toEqual(['echo', 'broken']);
    expect(tools[0]!.inputSchema).toMatchObject({
      type: 'object',
      properties: { word: { type: 'string', minLength: 1 } },
      required: ['word'],
    });
  });

  it('a tool call answers text and data; bad arguments and a throwing tool are tool errors, an unknown tool a protocol error', async () => {
    const answers = await exchange([
      request(1, 'tools/call', { name: 'echo', arguments: { word: 'hi' } }),
      request(2, 'tools/call', { name: 'echo', arguments: { word: 3 } }),
      request(3, 'tools/call', { name: 'broken', arguments: {} }),
      request(4, 'tools/call', { name: 'nope', arguments: {} }),
    ]);
    expect(answers[0]!.result).toEqual({
      content: [{ type: 'text', text: 'hi' }],
      structuredContent: { word: 'hi' },
    });
    expect(answers[1]!.result).toMatchObject({ isError: true, content: [{ type: 'text' }] });
    expect(JSON.stringify(answers[1]!.result)).toContain('invalid arguments: word:');
    expect(answers[2]!.result).toEqual({
      content: [{ type: 'text', text: 'error: disk on fire' }],
      isError: true,
    });
    expect(answers[3]).toMatchObject({
      id: 4,
      error: { code: RPC.invalidParams, message: 'unknown tool: nope' },
    });
  });

  it('says what is wrong with a line that is not a request', async () => {
    const answers = await exchange([
      '{not json',
      '[1,2]',
      request(7, 'resources/list'),
      JSON.stringify({ id: 8, method: 'ping' }),
    ]);
    expect(answers).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: RPC.parseError, message: 'parse error: not JSON' } },
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: RPC.invalidRequest, message: 'invalid request: one JSON object per line' },
      },
      {
        jsonrpc: '2.0',
        id: 7,
        error: { code: RPC.methodNotFound, message: 'method not found: resources/list' },
      },
      { jsonrpc: '2.0', id: 8, error: { code: RPC.invalidRequest, message: 'invalid request' } },
    ]);
  });
});
