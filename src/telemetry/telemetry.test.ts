import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLog } from '../../test/helpers/log-lines.js';
import type { ExecutionSettings } from '../config/types.js';
import { loadTelemetry, parseOtlpHeaders } from './index.js';
import { pointsSpent } from './otel.js';

describe('parseOtlpHeaders', () => {
  it('reads key=value pairs separated by commas, decoding percent escapes', () => {
    expect(parseOtlpHeaders('api-key=abc%3D1, x-tenant = ops,broken,=nokey')).toEqual({
      'api-key': 'abc=1',
      'x-tenant': 'ops',
    });
    expect(parseOtlpHeaders(undefined)).toEqual({});
  });
});

describe('pointsSpent', () => {
  const rate = (used: number, resetAt: number, resource = 'graphql') => ({
    limit: 5000,
    remaining: 5000 - used,
    used,
    resetAt,
    resource,
  });

  it('counts the growth of used within a window, all of it in a new one, nothing on the first report', () => {
    const windows = new Map<string, { used: number; resetAt: number }>();
    expect(pointsSpent(windows, rate(40, 1000))).toBe(0);
    expect(pointsSpent(windows, rate(43, 1000))).toBe(3);
    expect(pointsSpent(windows, rate(43, 1000))).toBe(0);
    expect(pointsSpent(windows, rate(2, 2000))).toBe(2);
    // A late answer from the old window counts nothing; resources are separate budgets.
    expect(pointsSpent(windows, rate(50, 1000))).toBe(0);
    expect(pointsSpent(windows, rate(5, 2000))).toBe(3);
    expect(pointsSpent(windows, rate(7, 1000, 'core'))).toBe(0);
    expect(pointsSpent(windows, rate(9, 1000, 'core'))).toBe(2);
  });
});

describe('a stop of the telemetry', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
  });

  async function listening(onSocket: (socket: Socket) => void): Promise<number> {
    const server = createServer(onSocket);
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return (server.address() as AddressInfo).port;
  }

  it('does not wait for exports when no collector listens at the endpoint, and says so', async () => {
    // A port that was just free: nothing listens there.
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const port = (server.address() as AddressInfo).port;
    await new Promise((done) => server.close(done));
    const { log, messages } = captureLog();
    const telemetry = await loadTelemetry({
      execution: { otlp_endpoint: `http://127.0.0.1:${port}` } as ExecutionSettings,
      env: {},
      log,
      // Far beyond the test's own timeout: the stop ends only because nothing listens.
      shutdownLimitMs: 600_000,
    });
    telemetry?.poll('fix', Date.now(), 1);
    await telemetry?.shutdown();
    expect(messages()).toContain('No OpenTelemetry collector at the endpoint: the last exports are dropped');
  });

  it('waits, up to its limit, for a collector that is there but slow', async () => {
    const held: Socket[] = [];
    const port = await listening((socket) => {
      held.push(socket); // accepts, reads, never answers
      socket.resume();
    });
    const { log, messages } = captureLog();
    const telemetry = await loadTelemetry({
      execution: { otlp_endpoint: `http://127.0.0.1:${port}` } as ExecutionSettings,
      env: {},
      log,
      shutdownLimitMs: 1500,
    });
    telemetry?.poll('fix', Date.now(), 1);
    const stopping = telemetry?.shutdown().then(() => 'stopped');
    const first = await Promise.race([
      stopping,
      new Promise((done) => setTimeout(() => done('waiting'), 400)),
    ]);
    expect(first).toBe('waiting');
    expect(await stopping).toBe('stopped');
    expect(messages()).not.toContain(
      'No OpenTelemetry collector at the endpoint: the last exports are dropped',
    );
    for (const socket of held) socket.destroy();
  });
});
