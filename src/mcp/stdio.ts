/**
 * The Model Context Protocol over stdio, server side: JSON-RPC 2.0 messages, one per line (UTF-8,
 * no embedded newline) on stdin and stdout. We answer `initialize` (protocol version negotiated),
 * `ping`, `tools/list` and `tools/call`; notifications need no answer; anything else is "method not
 * found". Nothing but protocol messages is ever written to `output`: logs go elsewhere.
 *
 * Facts from the MCP specification (lifecycle, tools, stdio transport; versions 2024-11-05 to
 * 2025-11-25): a tool result is `{ content: [{ type: "text", text }], isError?, structuredContent? }`;
 * an unknown tool is a JSON-RPC error (-32602), a tool that failed is a result with `isError`.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { z as zod } from 'zod';
import { redactedJson } from '../security/redact.js';

/** The protocol versions we speak, newest first: a client asking for another gets the newest. */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

/** JSON-RPC error codes. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/** What a tool answers: text for the model, the same as data for a program, and whether it failed. */
export interface ToolAnswer {
  text: string;
  data?: Record<string, unknown>;
  isError?: boolean;
}

export interface McpTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** The arguments, checked before `call` runs; its JSON Schema is what `tools/list` shows. */
  input: S;
  call(args: z.output<S>): Promise<ToolAnswer>;
}

/** A tool with its argument type checked where it is written. */
export function tool<S extends z.ZodType>(definition: McpTool<S>): McpTool {
  return definition as unknown as McpTool;
}

export interface ServerInfo {
  name: string;
  version: string;
  instructions?: string;
}

type Id = string | number;

interface Message {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function isId(value: unknown): value is Id {
  return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));
}

function inputSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = zod.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _drop, ...rest } = json;
  return { type: 'object', ...rest };
}

/** Zod's problems with a tool's arguments, one line each, as the model can act on them. */
function argumentProblems(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
    .join('; ');
}

/**
 * Serves `tools` on `input`/`output` until `input` ends; resolves once every answer is written.
 * Tool calls run one at a time, in the order they came (a create then a list sees the create).
 */
export async function serveStdio(
  input: Readable,
  output: { write(text: string): unknown },
  tools: readonly McpTool[],
  info: ServerInfo,
  onError: (error: unknown) => void = () => {},
): Promise<void> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  let queue: Promise<unknown> = Promise.resolve();
  const write = (message: Record<string, unknown>) => {
    // Every string is redacted before serializing: a token quoted in a transcript never leaves.
    output.write(`${redactedJson({ jsonrpc: '2.0', ...message })}\n`);
  };
  /** An answer that needs no work, written in its turn (answers keep the order of the requests). */
  const send = (message: Record<string, unknown>) => {
    queue = queue.then(() => write(message));
  };

  async function answer(method: string, params: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      case 'initialize': {
        const asked = params.protocolVersion;
        const version =
          typeof asked === 'string' && (PROTOCOL_VERSIONS as readonly string[]).includes(asked)
            ? asked
            : PROTOCOL_VERSIONS[0];
        return {
          protocolVersion: version,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: info.name, version: info.version },
          ...(info.instructions ? { instructions: info.instructions } : {}),
        };
      }
      case 'ping':
        return {};
      case 'tools/list':
        return {
          tools: tools.map((t) => ({
            name: t.name,
            description: t.description,
            inputSchema: inputSchemaOf(t.input),
          })),
        };
      case 'tools/call': {
        const name = params.name;
        const found = typeof name === 'string' ? byName.get(name) : undefined;
        if (!found) throw new RpcError(RPC.invalidParams, `unknown tool: ${String(name)}`);
        const parsed = found.input.safeParse(params.arguments ?? {});
        if (!parsed.success)
          return toolResult({ text: `invalid arguments: ${argumentProblems(parsed.error)}`, isError: true });
        try {
          return toolResult(await found.call(parsed.data));
        } catch (error) {
          onError(error);
          return toolResult({
            text: `error: ${error instanceof Error ? error.message : String(error)}`,
            isError: true,
          });
        }
      }
      default:
        throw new RpcError(RPC.methodNotFound, `method not found: ${method}`);
    }
  }

  function handle(line: string): void {
    if (line.trim() === '') return;
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      send({ id: null, error: { code: RPC.parseError, message: 'parse error: not JSON' } });
      return;
    }
    if (message === null || typeof message !== 'object' || Array.isArray(message)) {
      send({
        id: null,
        error: { code: RPC.invalidRequest, message: 'invalid request: one JSON object per line' },
      });
      return;
    }
    const hasId = 'id' in message && message.id !== undefined;
    if (typeof message.method !== 'string') {
      // A response to a request of ours (we send none) or garbage: only garbage with an id is answered.
      if (hasId && !('result' in message) && !('error' in message))
        send({
          id: isId(message.id) ? message.id : null,
          error: { code: RPC.invalidRequest, message: 'invalid request: no method' },
        });
      return;
    }
    if (!hasId) return; // a notification (initialized, cancelled, …): nothing to answer
    if (!isId(message.id) || message.jsonrpc !== '2.0') {
      send({
        id: isId(message.id) ? message.id : null,
        error: { code: RPC.invalidRequest, message: 'invalid request' },
      });
      return;
    }
    const id = message.id;
    const method = message.method;
    const params =
      message.params !== null && typeof message.params === 'object' && !Array.isArray(message.params)
        ? (message.params as Record<string, unknown>)
        : {};
    queue = queue.then(async () => {
      try {
        write({ id, result: await answer(method, params) });
      } catch (error) {
        if (error instanceof RpcError) write({ id, error: { code: error.code, message: error.message } });
        else {
          onError(error);
          write({ id, error: { code: RPC.internalError, message: 'internal error' } });
        }
      }
    });
  }

  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) handle(line);
  await queue;
}

function toolResult(answer: ToolAnswer): Record<string, unknown> {
  return {
    content: [{ type: 'text', text: answer.text }],
    ...(answer.data ? { structuredContent: answer.data } : {}),
    ...(answer.isError ? { isError: true } : {}),
  };
}
