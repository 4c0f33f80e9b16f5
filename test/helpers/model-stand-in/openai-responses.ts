/**
 * A local stand-in for OpenAI's Responses API (`POST /v1/responses` with `stream: true`), for runs
 * of the real Codex CLI that reach no network. It answers with server-sent events in the order and
 * shape OpenAI streams them (`response.created`, `response.in_progress`,
 * `response.output_item.added`, `response.function_call_arguments.delta` / `.done` or
 * `response.content_part.added`, `response.output_text.delta` / `.done`, `response.content_part.done`,
 * `response.output_item.done`, `response.completed`).
 *
 * Scripted: a request whose last input item is a user message (a new prompt, or the prompt of a
 * resumed session) gets a call of the CLI's shell tool running the next scripted command; a
 * request that carries a tool's output gets a closing message. The tool is the one the request
 * offers (`exec_command` with `{cmd}`, `shell_command` with `{command}`, or `shell` with
 * `{command: ["bash", "-lc", …]}`), so the CLI runs the command in its own way.
 *
 * It records every request (method, path, the Authorization header, the parsed body). The Responses
 * WebSocket transport is not offered: an upgrade request gets 426, and the CLI falls back to HTTPS.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  websocket: boolean;
  /** The parsed JSON body of a POST (undefined otherwise). */
  body: ResponsesRequest | undefined;
  /** The raw body text. */
  text: string;
}

export interface ResponsesRequest {
  model?: string;
  stream?: boolean;
  tools?: { type?: string; name?: string }[];
  input?: { type?: string; role?: string; call_id?: string; output?: unknown }[];
}

export interface ShellCall {
  /** The tool's name, as the request offered it. */
  tool: string;
  command: string;
}

export interface OpenAiStandIn {
  /** The base URL a provider's `base_url` takes (`http://127.0.0.1:PORT/v1`). */
  baseUrl: string;
  port: number;
  requests: RecordedRequest[];
  /** The shell calls handed out, in order. */
  calls: ShellCall[];
  /** Queues commands: each request that starts a turn takes the next one. */
  script(...commands: string[]): void;
  /** The text of every closing message from now on (default: a short sentence). */
  say(text: string): void;
  /** Every tool output the CLI sent back, in order (text). */
  toolOutputs(): string[];
  close(): Promise<void>;
}

/** The arguments of a shell call for the tool the request offers. */
export function shellCallFor(tools: readonly string[], command: string): { name: string; args: object } {
  if (tools.includes('exec_command')) return { name: 'exec_command', args: { cmd: command } };
  if (tools.includes('shell_command')) return { name: 'shell_command', args: { command } };
  if (tools.includes('shell')) return { name: 'shell', args: { command: ['bash', '-lc', command] } };
  throw new Error(`the request offers no shell tool (tools: ${tools.join(', ') || 'none'})`);
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output))
    return output.map((part) => (part as { text?: string }).text ?? JSON.stringify(part)).join('');
  return JSON.stringify(output);
}

export async function startOpenAiStandIn(): Promise<OpenAiStandIn> {
  const requests: RecordedRequest[] = [];
  const calls: ShellCall[] = [];
  const pending: string[] = [];
  let closing: string | undefined;
  let ids = 0;
  const nextId = (prefix: string): string => `${prefix}_${String(++ids).padStart(6, '0')}`;

  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const websocket = String(req.headers.upgrade ?? '').toLowerCase() === 'websocket';
      let body: ResponsesRequest | undefined;
      try {
        body = text ? (JSON.parse(text) as ResponsesRequest) : undefined;
      } catch {
        body = undefined;
      }
      requests.push({
        method: req.method ?? 'GET',
        path,
        authorization: req.headers.authorization,
        websocket,
        body,
        text,
      });
      if (websocket) {
        res.writeHead(426, { 'content-type': 'text/plain' }).end('websocket transport not offered\n');
        return;
      }
      if (req.method !== 'POST' || !path.endsWith('/responses') || !body) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' },
          }),
        );
        return;
      }
      const model = body.model ?? 'gpt-5';
      const responseId = nextId('resp');
      const created = Math.floor(Date.now() / 1000);
      let sequence = 0;
      const send = (event: Record<string, unknown>): void => {
        const full = { ...event, sequence_number: sequence++ };
        res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(full)}\n\n`);
      };
      const response = (status: string, output: unknown[], usage?: object): Record<string, unknown> => ({
        id: responseId,
        object: 'response',
        created_at: created,
        status,
        model,
        output,
        parallel_tool_calls: false,
        tool_choice: 'auto',
        usage: usage ?? null,
      });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      send({ type: 'response.created', response: response('in_progress', []) });
      send({ type: 'response.in_progress', response: response('in_progress', []) });

      const input = body.input ?? [];
      const last = input[input.length - 1];
      const startsTurn = last?.type === 'message' && last.role === 'user';
      const command = startsTurn ? pending.shift() : undefined;
      let item: Record<string, unknown>;
      if (command !== undefined) {
        const tools = (body.tools ?? []).flatMap((tool) => (tool.name ? [tool.name] : []));
        const call = shellCallFor(tools, command);
        calls.push({ tool: call.name, command });
        const args = JSON.stringify(call.args);
        const itemId = nextId('fc');
        const callId = nextId('call');
        const base = { id: itemId, type: 'function_call', call_id: callId, name: call.name };
        send({
          type: 'response.output_item.added',
          output_index: 0,
          item: { ...base, status: 'in_progress', arguments: '' },
        });
        // The arguments arrive in pieces, as OpenAI streams them.
        const half = Math.ceil(args.length / 2);
        for (const delta of [args.slice(0, half), args.slice(half)])
          send({ type: 'response.function_call_arguments.delta', item_id: itemId, output_index: 0, delta });
        send({
          type: 'response.function_call_arguments.done',
          item_id: itemId,
          output_index: 0,
          arguments: args,
        });
        item = { ...base, status: 'completed', arguments: args };
      } else {
        const words = closing ?? (startsTurn ? 'Nothing left to do.' : 'Done: the change is committed.');
        const itemId = nextId('msg');
        const part = { type: 'output_text', text: '', annotations: [] };
        send({
          type: 'response.output_item.added',
          output_index: 0,
          item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
        });
        send({
          type: 'response.content_part.added',
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          part,
        });
        send({
          type: 'response.output_text.delta',
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          delta: words,
        });
        send({
          type: 'response.output_text.done',
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          text: words,
        });
        send({
          type: 'response.content_part.done',
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          part: { ...part, text: words },
        });
        item = {
          id: itemId,
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ ...part, text: words }],
        };
      }
      send({ type: 'response.output_item.done', output_index: 0, item });
      send({
        type: 'response.completed',
        response: response('completed', [item], {
          input_tokens: 120,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 30,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 150,
        }),
      });
      res.end();
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    calls,
    script(...commands: string[]) {
      pending.push(...commands);
    },
    say(text: string) {
      closing = text;
    },
    toolOutputs() {
      return requests.flatMap((request) =>
        (request.body?.input ?? [])
          .filter((entry) => entry.type === 'function_call_output')
          .map((entry) => outputText(entry.output)),
      );
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
