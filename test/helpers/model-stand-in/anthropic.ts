/**
 * A local stand-in for Anthropic's Messages API, for tests that drive the real Claude Code CLI
 * without the network. It answers as the real service does (shapes from Anthropic's published API
 * reference): `POST /v1/messages` with a `message` object, or with `stream: true` the server-sent
 * events `message_start`, `content_block_start`, `ping`, `content_block_delta` (`text_delta`,
 * `input_json_delta`), `content_block_stop`, `message_delta` (stop reason and output usage) and
 * `message_stop`; `POST /v1/messages/count_tokens` with `{ input_tokens }`; anything else a 404
 * with Anthropic's error envelope (`{"type":"error","error":{"type":"not_found_error",…}}`).
 *
 * What the model says is the test's script: a function from the request body to the blocks of
 * the answer (text, or a `tool_use` of one of the tools the request offers). Every request is
 * recorded with the key it carried (`x-api-key`, or the bearer of `Authorization`).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type ReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; name: string; input: Record<string, unknown> };

export interface MessagesRequest {
  model?: string;
  stream?: boolean;
  max_tokens?: number;
  system?: unknown;
  tools?: { name: string }[];
  messages: { role: 'user' | 'assistant'; content: string | ContentBlock[] }[];
}

export interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** The key the request carried: `x-api-key`, else the bearer token of `Authorization`. */
  key: string | undefined;
  headers: IncomingMessage['headers'];
  body: MessagesRequest | undefined;
}

/** The test's script: the blocks of the answer; `hold` keeps the request open until closed. */
export type Script = (request: MessagesRequest, recorded: RecordedRequest) => ReplyBlock[] | 'hold';

export interface AnthropicStandIn {
  url: string;
  requests: RecordedRequest[];
  /** The requests that asked the model for an answer (`POST /v1/messages`). */
  messages(): RecordedRequest[];
  /** Requests held open by a `hold` answer (each settled when the client goes or on close). */
  held(): number;
  setScript(script: Script): void;
  close(): Promise<void>;
}

/** Every tool_result block of the conversation, oldest first (how far the script has got). */
export function toolResults(request: MessagesRequest): ContentBlock[] {
  return request.messages.flatMap((message) =>
    typeof message.content === 'string' ? [] : message.content.filter((b) => b.type === 'tool_result'),
  );
}

/** The plain text of every user message (strings and text blocks). */
export function userText(request: MessagesRequest): string {
  return request.messages
    .filter((m) => m.role === 'user')
    .flatMap((m) =>
      typeof m.content === 'string' ? [m.content] : m.content.flatMap((b) => (b.text ? [b.text] : [])),
    )
    .join('\n');
}

function id(prefix: string): string {
  return `${prefix}_01${randomBytes(12).toString('hex')}`;
}

function keyOf(headers: IncomingMessage['headers']): string | undefined {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string') return apiKey;
  const auth = headers.authorization;
  return typeof auth === 'string' ? auth.replace(/^Bearer\s+/i, '') : undefined;
}

function error(res: ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}

/** A rough token count (what count_tokens and usage report): four characters a token. */
function tokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));
}

function contentOf(blocks: readonly ReplyBlock[]): ContentBlock[] {
  return blocks.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'tool_use', id: id('toolu'), name: block.name, input: block.input },
  );
}

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export async function startAnthropicStandIn(initial: Script): Promise<AnthropicStandIn> {
  let script = initial;
  const requests: RecordedRequest[] = [];
  const holding = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      let body: MessagesRequest | undefined;
      try {
        body = chunks.length
          ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as MessagesRequest)
          : undefined;
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        key: keyOf(req.headers),
        headers: req.headers,
        body,
      };
      requests.push(recorded);
      if (!recorded.key) return error(res, 401, 'authentication_error', 'x-api-key header is required');
      if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') {
        if (!body) return error(res, 400, 'invalid_request_error', 'invalid JSON body');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: tokens(body.messages) + tokens(body.system) }));
        return;
      }
      if (req.method !== 'POST' || url.pathname !== '/v1/messages')
        return error(res, 404, 'not_found_error', `Not found: ${req.method} ${url.pathname}`);
      if (!body || !Array.isArray(body.messages))
        return error(res, 400, 'invalid_request_error', 'messages: Field required');
      const answer = script(body, recorded);
      if (answer === 'hold') {
        holding.add(res);
        res.on('close', () => holding.delete(res));
        return;
      }
      const content = contentOf(answer);
      const stopReason = content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
      const usage = { input_tokens: tokens(body.messages), output_tokens: tokens(content) };
      const message = {
        id: id('msg'),
        type: 'message',
        role: 'assistant',
        model: body.model ?? 'claude-sonnet-4-5',
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': id('req') });
        res.end(JSON.stringify(message));
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'request-id': id('req'),
      });
      sse(res, 'message_start', {
        type: 'message_start',
        message: {
          ...message,
          content: [],
          stop_reason: null,
          usage: { ...message.usage, output_tokens: 1 },
        },
      });
      content.forEach((block, index) => {
        if (block.type === 'text') {
          sse(res, 'content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { type: 'text', text: '' },
          });
          if (index === 0) sse(res, 'ping', { type: 'ping' });
          sse(res, 'content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'text_delta', text: block.text },
          });
        } else {
          sse(res, 'content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
          });
          if (index === 0) sse(res, 'ping', { type: 'ping' });
          const json = JSON.stringify(block.input);
          // In two pieces, as the real service streams partial JSON.
          const half = Math.floor(json.length / 2);
          for (const part of [json.slice(0, half), json.slice(half)])
            sse(res, 'content_block_delta', {
              type: 'content_block_delta',
              index,
              delta: { type: 'input_json_delta', partial_json: part },
            });
        }
        sse(res, 'content_block_stop', { type: 'content_block_stop', index });
      });
      sse(res, 'message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      });
      sse(res, 'message_stop', { type: 'message_stop' });
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    messages: () => requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages'),
    held: () => holding.size,
    setScript(next) {
      script = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of holding) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
