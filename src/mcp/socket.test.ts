/**
 * The per-run tools socket and the relay a sandboxed agent's CLI starts (src/sandbox/relay.ts),
 * run here as the CLI runs it: `node mcp-relay.cjs SOCKET RUN_ID`, MCP's stdio on its stdin and
 * stdout.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RELAY_FILE, RELAY_SOURCE, relayCommand, TOOLS_SOCKET } from '../sandbox/relay.js';
import { type RunSocket, serveRunSocket } from './socket.js';
import { tool } from './stdio.js';

const dirs: string[] = [];
const servers: RunSocket[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function setUp(runId: string, calls: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'cur-relay-'));
  dirs.push(dir);
  writeFileSync(join(dir, RELAY_FILE), RELAY_SOURCE, { mode: 0o444 });
  const socketPath = join(dir, TOOLS_SOCKET);
  const errors: unknown[] = [];
  servers.push(
    await serveRunSocket({
      socketPath,
      runId,
      session: async () => ({
        tools: [
          tool({
            name: 'echo',
            description: 'Echoes',
            input: z.object({ text: z.string() }),
            call: async ({ text }) => {
              calls.push(text);
              return { text: `${runId}: ${text}` };
            },
          }),
        ],
        info: { name: 'curupira', version: '0.0.0' },
      }),
      onError: (error) => errors.push(error),
    }),
  );
  return { dir, socketPath, errors };
}

/** Starts the relay as a CLI would; returns a way to send a line and read the answers. */
function relay(dir: string, runId: string) {
  const { command, args } = relayCommand(process.execPath, dir, runId);
  const child = spawn(command, args, { stdio: 'pipe' }) as ChildProcessWithoutNullStreams;
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exit,
    send: (message: Record<string, unknown>) =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`),
    next: async () => JSON.parse(String((await lines.next()).value)) as Record<string, unknown>,
  };
}

describe('the tools socket and its relay', () => {
  it('serves one MCP session per connection through the relay, for the run it names', async () => {
    const calls: string[] = [];
    const { dir, socketPath } = await setUp('run-1', calls);
    // Only curupira's user may connect.
    expect(statSync(socketPath).mode & 0o777).toBe(0o600);
    const agent = relay(dir, 'run-1');
    agent.send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18' } });
    expect(await agent.next()).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
    agent.send({ method: 'notifications/initialized' });
    agent.send({ id: 2, method: 'tools/list' });
    expect(await agent.next()).toMatchObject({ id: 2, result: { tools: [{ name: 'echo' }] } });
    agent.send({ id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
    expect(await agent.next()).toMatchObject({
      id: 3,
      result: { content: [{ type: 'text', text: 'run-1: hi' }] },
    });
    expect(calls).toEqual(['hi']);
    // The CLI closes the server's stdin: the last answers are out, the relay ends.
    agent.send({ id: 4, method: 'ping' });
    agent.child.stdin.end();
    expect(await agent.next()).toMatchObject({ id: 4, result: {} });
    expect(await agent.exit).toBe(0);

    // A second session on the same socket (a CLI that restarts its server).
    const again = relay(dir, 'run-1');
    again.send({ id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'again' } } });
    expect(await again.next()).toMatchObject({ id: 1, result: { content: [{ text: 'run-1: again' }] } });
    again.child.stdin.end();
    expect(await again.exit).toBe(0);
    expect(calls).toEqual(['hi', 'again']);
  });

  it('refuses a connection naming another run: no tool of it runs', async () => {
    const calls: string[] = [];
    const { dir } = await setUp('run-1', calls);
    const other = relay(dir, 'run-2');
    other.send({ id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'sneak' } } });
    expect(await other.next()).toMatchObject({
      id: null,
      error: { message: 'this socket serves the tools of run run-1 only' },
    });
    expect(await other.exit).toBe(0);
    expect(calls).toEqual([]);
  });

  it('refuses a connection that does not name the run first', async () => {
    const calls: string[] = [];
    const { socketPath } = await setUp('run-1', calls);
    const { connect } = await import('node:net');
    const socket = connect(socketPath);
    socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`);
    const [line] = await new Promise<string[]>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += String(chunk);
      });
      socket.on('end', () => resolve(text.split('\n')));
    });
    expect(JSON.parse(line!)).toMatchObject({ id: null, error: { code: -32600 } });
    expect(calls).toEqual([]);
  });

  it('ends with an error when no socket answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cur-relay-'));
    dirs.push(dir);
    writeFileSync(join(dir, RELAY_FILE), RELAY_SOURCE);
    const agent = relay(dir, 'run-1');
    let stderr = '';
    agent.child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    expect(await agent.exit).toBe(1);
    expect(stderr).toContain('curupira relay:');
  });

  it('the relay script holds no secret: it reads nothing but its arguments and stdio', () => {
    expect(RELAY_SOURCE).not.toMatch(/process\.env|readFile|require\('node:fs'\)|child_process/);
    expect(relayCommand('/usr/bin/node', '/run/curupira', 'run-1')).toEqual({
      command: '/usr/bin/node',
      args: ['/run/curupira/mcp-relay.cjs', '/run/curupira/tools.sock', 'run-1'],
    });
  });
});
