/**
 * A local stand-in for the OpenAI Chat Completions API (`POST …/chat/completions`), for tests that
 * drive a real agent CLI with no network. It streams `chat.completion.chunk` events over SSE and
 * ends with `data: [DONE]` (or answers one JSON object when the request does not ask to stream).
 *
 * It is scripted by the test: a request that offers tools, while a command is pending (`pending`),
 * gets one call of the CLI's shell tool running that command (the tool and its arguments read
 * from the `tools` the CLI sent); a request whose last message is a tool result, or with nothing
 * pending, gets a short closing text. Requests without tools (titles, summaries) get a short text.
 * Every request is recorded with its `Authorization` header, so a test can say which key arrived.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatTool {
  type?: string;
  function?: {
    name?: string;
    parameters?: { properties?: Record<string, { type?: string }>; required?: string[] };
  };
}

export interface ChatRequestRecord {
  path: string;
  authorization: string | undefined;
  model: string | undefined;
  stream: boolean;
  tools: string[];
  /** The role of the last message. */
  lastRole: string | undefined;
  /** How many messages the request carried (a resumed session carries its history). */
  messages: number;
  /** What the stand-in answered: the shell tool it called, `text`, `held` or `404`. */
  answer: string;
}

export interface ChatStandIn {
  /** `http://127.0.0.1:PORT/v1` */
  baseUrl: string;
  requests: ChatRequestRecord[];
  /** The command the next tool-offering request is asked to run (taken once). */
  pending: string | undefined;
  /**
   * A tool the next request offering one whose name ends with `suffix` is asked to call with
   * `args` (taken once; before `pending`): an MCP server's tool, whatever prefix the CLI gives it.
   */
  pendingTool: { suffix: string; args: object } | undefined;
  /** The closing text for a request given its last user message's text (default `Done.`). */
  say: ((lastUserText: string) => string) | undefined;
  /** Requests it matches are never answered (the agent is mid-turn when a test kills it). */
  hold: ((request: { lastRole: string | undefined }) => boolean) | undefined;
  close(): Promise<void>;
}

/**
 * The `provider` section of an OpenCode or Kilo configuration that reaches this stand-in: a custom
 * OpenAI-compatible provider `standin` with one model `m1` (profile model `standin/m1`), whose base
 * URL and key come from OPENAI_BASE_URL and OPENAI_API_KEY (what the key proxy sets in a sandbox).
 */
export function standInProvider(): Record<string, unknown> {
  return {
    standin: {
      npm: '@ai-sdk/openai-compatible',
      name: 'stand-in',
      options: { baseURL: '{env:OPENAI_BASE_URL}', apiKey: '{env:OPENAI_API_KEY}' },
      models: { m1: { name: 'm1', tool_call: true } },
    },
  };
}

/** Shell tools of the CLIs we drive, with the argument that carries the command. */
const SHELL_TOOLS: Record<string, string> = {
  bash: 'command', // OpenCode
  run_shell_command: 'command', // Qwen Code, Gemini CLI
  shell: 'command',
  shell_command: 'command',
};

/** The shell tool among `tools`, and arguments for it running `command`. */
export function shellCall(
  tools: readonly ChatTool[],
  command: string,
): { name: string; args: object } | undefined {
  for (const tool of tools) {
    const name = tool.function?.name ?? '';
    const field = SHELL_TOOLS[name];
    if (!field) continue;
    const args: Record<string, unknown> = { [field]: command };
    const properties = tool.function?.parameters?.properties ?? {};
    for (const required of tool.function?.parameters?.required ?? []) {
      if (required in args) continue;
      const type = properties[required]?.type;
      args[required] =
        type === 'boolean' ? false : type === 'number' || type === 'integer' ? 120000 : 'run it';
    }
    return { name, args };
  }
  return undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** A message's text: a string, or the text parts of an array of content parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : ''))
    .join('');
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function answer(
  res: ServerResponse,
  stream: boolean,
  model: string,
  call?: { name: string; args: object },
  closing = 'Done.',
): void {
  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const toolCall = call
    ? {
        id: `call_${Date.now()}`,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      }
    : undefined;
  const text = call ? '' : closing;
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: call ? null : text,
              ...(toolCall ? { tool_calls: [toolCall] } : {}),
            },
            finish_reason: call ? 'tool_calls' : 'stop',
          },
        ],
        usage: USAGE,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: object, finish: string | null, extra: object = {}): void => {
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`,
    );
  };
  chunk({ role: 'assistant', content: '' }, null);
  if (toolCall) {
    chunk(
      {
        tool_calls: [
          {
            index: 0,
            id: toolCall.id,
            type: 'function',
            function: { name: toolCall.function.name, arguments: '' },
          },
        ],
      },
      null,
    );
    chunk({ tool_calls: [{ index: 0, function: { arguments: toolCall.function.arguments } }] }, null);
    chunk({}, 'tool_calls');
  } else {
    chunk({ content: text }, null);
    chunk({}, 'stop');
  }
  res.write(
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: USAGE })}\n\n`,
  );
  res.end('data: [DONE]\n\n');
}

export async function startOpenAiChatStandIn(): Promise<ChatStandIn> {
  const state: {
    pending: string | undefined;
    pendingTool: ChatStandIn['pendingTool'];
    say: ChatStandIn['say'];
    hold: ChatStandIn['hold'];
  } = {
    pending: undefined,
    pendingTool: undefined,
    say: undefined,
    hold: undefined,
  };
  const requests: ChatRequestRecord[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const path = req.url ?? '/';
      if (req.method === 'GET' && /\/models\/?$/.test(path)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ object: 'list', data: [{ id: 'stand-in', object: 'model', owned_by: 'local' }] }),
        );
        return;
      }
      if (!/\/chat\/completions\/?$/.test(path.split('?')[0] ?? '')) {
        requests.push({
          path,
          authorization: req.headers.authorization,
          model: undefined,
          stream: false,
          tools: [],
          lastRole: undefined,
          messages: 0,
          answer: '404',
        });
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no ${path} here` } }));
        return;
      }
      let request: {
        model?: string;
        stream?: boolean;
        tools?: ChatTool[];
        messages?: { role?: string; content?: unknown }[];
      } = {};
      try {
        request = JSON.parse(body);
      } catch {
        res.writeHead(400).end();
        return;
      }
      const tools = request.tools ?? [];
      const lastRole = request.messages?.at(-1)?.role;
      let call: { name: string; args: object } | undefined;
      const wanted = state.pendingTool;
      const named = wanted && tools.find((tool) => tool.function?.name?.endsWith(wanted.suffix));
      if (named && lastRole !== 'tool') {
        call = { name: named.function!.name!, args: wanted.args };
        state.pendingTool = undefined;
      } else if (tools.length > 0 && lastRole !== 'tool' && state.pending !== undefined) {
        call = shellCall(tools, state.pending);
        if (call) state.pending = undefined;
      }
      const record: ChatRequestRecord = {
        path,
        authorization: req.headers.authorization,
        model: request.model,
        stream: request.stream === true,
        tools: tools.map((tool) => tool.function?.name ?? '?'),
        lastRole,
        messages: request.messages?.length ?? 0,
        answer: call ? call.name : 'text',
      };
      requests.push(record);
      if (!call && state.hold?.(record)) {
        record.answer = 'held';
        return;
      }
      const lastUser = [...(request.messages ?? [])].reverse().find((m) => m.role === 'user');
      const closing = state.say?.(textOf(lastUser?.content));
      answer(res, request.stream === true, request.model ?? 'stand-in', call, closing);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get pending() {
      return state.pending;
    },
    set pending(command: string | undefined) {
      state.pending = command;
    },
    get pendingTool() {
      return state.pendingTool;
    },
    set pendingTool(tool: ChatStandIn['pendingTool']) {
      state.pendingTool = tool;
    },
    get say() {
      return state.say;
    },
    set say(reply: ChatStandIn['say']) {
      state.say = reply;
    },
    get hold() {
      return state.hold;
    },
    set hold(match: ChatStandIn['hold']) {
      state.hold = match;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
