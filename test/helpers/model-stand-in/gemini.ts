/**
 * A local stand-in for Google's Gemini API (`POST …/models/{model}:streamGenerateContent?alt=sse`
 * and `:generateContent`), for tests that drive a real agent CLI with no network. Streamed answers
 * are SSE `data:` lines, each a `GenerateContentResponse`.
 *
 * Scripted like the OpenAI stand-in: a request that offers the shell tool (`run_shell_command`)
 * while a command is pending gets one call of it; a request whose last part is a function's
 * response, or with nothing pending, gets a short closing text. A non-streamed request (the CLI's
 * side questions: who speaks next, routing) gets a JSON text saying the user speaks next. Every
 * request is recorded with the key it carried (`x-goog-api-key`, or `key=` in the query).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Part {
  text?: string;
  functionCall?: unknown;
  functionResponse?: unknown;
}

interface GeminiRequest {
  contents?: { role?: string; parts?: Part[] }[];
  tools?: {
    functionDeclarations?: {
      name?: string;
      parameters?: { properties?: Record<string, { type?: string }>; required?: string[] };
      parametersJsonSchema?: { properties?: Record<string, { type?: string }>; required?: string[] };
    }[];
  }[];
}

export interface GeminiRequestRecord {
  path: string;
  /** The key the request carried, as `Bearer <key>` (the shape the suites compare). */
  authorization: string | undefined;
  stream: boolean;
  tools: string[];
  /** `tool` when the last content is a function's response, else its role. */
  lastRole: string | undefined;
  /** How many contents the request carried (a resumed session carries its history). */
  messages: number;
  answer: string;
  /** The function responses the request carried, in order (what each tool answered). */
  functionResponses?: unknown[];
  /** The request's body as sent (what the CLI told the model: its system instruction, memory). */
  body?: string;
}

export interface GeminiStandIn {
  /** `http://127.0.0.1:PORT` (the CLI adds `/v1beta/models/…`). */
  baseUrl: string;
  requests: GeminiRequestRecord[];
  pending: string | undefined;
  hold: ((request: { lastRole: string | undefined }) => boolean) | undefined;
  /**
   * Answers a streamed request that offers tools with one function call of the tool it names, when
   * it returns one (checked before `pending`): the request's record, and how many of its contents
   * are function responses so far.
   */
  script:
    | ((request: GeminiRequestRecord, responses: number) => { name: string; args: object } | undefined)
    | undefined;
  close(): Promise<void>;
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

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

function response(parts: Part[]): object {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: USAGE,
    modelVersion: 'stand-in',
  };
}

function send(res: ServerResponse, stream: boolean, parts: Part[]): void {
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response(parts)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`data: ${JSON.stringify(response(parts))}\r\n\r\n`);
}

export async function startGeminiStandIn(): Promise<GeminiStandIn> {
  const state: { pending: string | undefined; hold: GeminiStandIn['hold']; script: GeminiStandIn['script'] } =
    {
      pending: undefined,
      hold: undefined,
      script: undefined,
    };
  const requests: GeminiRequestRecord[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? undefined;
      const authorization = typeof key === 'string' ? `Bearer ${key}` : req.headers.authorization;
      const method = /:(\w+)$/.exec(url.pathname)?.[1];
      if (req.method !== 'POST' || (method !== 'streamGenerateContent' && method !== 'generateContent')) {
        requests.push({
          path: url.pathname,
          authorization,
          stream: false,
          tools: [],
          lastRole: undefined,
          messages: 0,
          answer: '404',
        });
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { code: 404, message: `no ${url.pathname} here`, status: 'NOT_FOUND' } }),
        );
        return;
      }
      let request: GeminiRequest = {};
      try {
        request = JSON.parse(body);
      } catch {
        res.writeHead(400).end();
        return;
      }
      const stream = method === 'streamGenerateContent';
      const declarations = (request.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
      const last = request.contents?.at(-1);
      const lastRole = last?.parts?.some((part) => part.functionResponse) ? 'tool' : last?.role;
      const record: GeminiRequestRecord = {
        path: url.pathname,
        authorization,
        stream,
        tools: declarations.map((d) => d.name ?? '?'),
        lastRole,
        messages: request.contents?.length ?? 0,
        answer: 'text',
        functionResponses: (request.contents ?? []).flatMap((content) =>
          (content.parts ?? []).flatMap((part) => (part.functionResponse ? [part.functionResponse] : [])),
        ),
        body,
      };
      requests.push(record);
      if (stream && declarations.length > 0 && state.script) {
        const call = state.script(record, record.functionResponses?.length ?? 0);
        if (call) {
          record.answer = call.name;
          send(res, true, [{ functionCall: { name: call.name, args: call.args } }]);
          return;
        }
      }
      const shell = declarations.find((d) => d.name === 'run_shell_command');
      if (stream && shell && lastRole !== 'tool' && state.pending !== undefined) {
        const args: Record<string, unknown> = { command: state.pending };
        const schema = shell.parametersJsonSchema ?? shell.parameters ?? {};
        for (const name of schema.required ?? []) {
          if (name in args) continue;
          args[name] = schema.properties?.[name]?.type === 'boolean' ? false : 'run it';
        }
        state.pending = undefined;
        record.answer = 'run_shell_command';
        send(res, true, [{ functionCall: { name: 'run_shell_command', args } }]);
        return;
      }
      if (state.hold?.(record)) {
        record.answer = 'held';
        return;
      }
      if (!stream) {
        record.answer = 'json';
        send(res, false, [
          { text: JSON.stringify({ reasoning: 'The task is done.', next_speaker: 'user' }) },
        ]);
        return;
      }
      send(res, true, [{ text: 'Done.' }]);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    get pending() {
      return state.pending;
    },
    set pending(command: string | undefined) {
      state.pending = command;
    },
    get hold() {
      return state.hold;
    },
    get script() {
      return state.script;
    },
    set script(script: GeminiStandIn['script']) {
      state.script = script;
    },
    set hold(match: GeminiStandIn['hold']) {
      state.hold = match;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
