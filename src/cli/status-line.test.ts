import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { EngineStatus } from '../engine/engine.js';
import { formatDuration, renderStatus, StatusLine } from './status-line.js';

const NOW = Date.parse('2026-03-02T10:00:00Z');

function status(overrides: Partial<EngineStatus> = {}): EngineStatus {
  return {
    mode: 'watch',
    running: [],
    queued: 0,
    maxActive: 2,
    stopping: false,
    draining: false,
    waiting: 0,
    ...overrides,
  };
}

describe('status line', () => {
  it('says when matching items wait beyond the batch', () => {
    expect(renderStatus(status({ waiting: 400, nextPollAt: NOW + 30_000 }), NOW)).toBe(
      '0/2 running · 400 waiting beyond the batch · next poll in 30s',
    );
  });

  it('says that a drain lets running agents finish, and how to stop them now', () => {
    const line = renderStatus(
      status({
        draining: true,
        running: [
          {
            automationId: 'fix',
            repo: 'acme/api',
            itemId: '12',
            item: 'acme/api#12',
            title: 't',
            status: 'running',
            startedAt: NOW - 5_000,
          },
        ],
      }),
      NOW,
    );
    expect(line).toBe('1/2 running · +1 more · finishing running agents (Ctrl+C again stops them now)');
  });

  it('formats durations', () => {
    expect([formatDuration(5_000), formatDuration(190_000), formatDuration(2 * 3600_000 + 60_000)]).toEqual([
      '5s',
      '3m10s',
      '2h01m',
    ]);
  });

  it('says what runs, for how long, what is queued and when the next poll is', () => {
    const line = renderStatus(
      status({
        running: [
          {
            automationId: 'fix',
            repo: 'acme/api',
            itemId: '12',
            item: 'acme/api#12',
            title: 't',
            status: 'running',
            startedAt: NOW - 190_000,
          },
          {
            automationId: 'fix',
            repo: 'acme/api',
            itemId: '15',
            item: 'acme/api#15',
            title: 't',
            status: 'preparing',
            startedAt: NOW - 1000,
          },
        ],
        queued: 3,
      }),
      NOW,
    );
    expect(line).toBe('2/2 running · fix acme/api#12 3m10s · fix acme/api#15 preparing · 3 queued');
    expect(renderStatus(status({ nextPollAt: NOW + 45_000 }), NOW)).toBe('0/2 running · next poll in 45s');
    expect(renderStatus(status({ stopping: true }), NOW)).toBe('0/2 running · stopping…');
  });

  it('fits 80 columns and keeps the queued count, dropping per-run details first', () => {
    const many = Array.from({ length: 6 }, (_, i) => ({
      automationId: 'a-rather-long-automation-name',
      repo: 'acme/a-rather-long-repository',
      itemId: String(i),
      item: `acme/a-rather-long-repository#${i}`,
      title: 't',
      status: 'running',
      startedAt: NOW,
    }));
    const line = renderStatus(status({ running: many, maxActive: 6, queued: 1234 }), NOW, 120);
    expect(line).toBe(
      '6/6 running · a-rather-long-automation-name acme/a-rather-long-repository#0 0s · +5 more · 1234 queued',
    );
    expect(renderStatus(status({ running: many, maxActive: 6, queued: 1234 }), NOW)).toBe(
      '6/6 running · +6 more · 1234 queued',
    );
    const stopping = renderStatus(
      status({ running: many, maxActive: 6, queued: 7, stopping: true }),
      NOW,
      44,
    );
    expect(stopping).toBe('6/6 running · +6 more · 7 queued · stopping…');
    expect(renderStatus(status({ running: many, maxActive: 6, queued: 7 }), NOW, 20)).toBe(
      '6/6 running · 7 que…',
    );
  });

  it('redraws in place and prints log lines above itself', () => {
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const line = new StatusLine(stream, () => NOW);
    line.update(status({ queued: 1 }));
    line.write('2026 INFO something happened\n');
    line.close();
    expect(out).toBe(
      '\r0/2 running · 1 queued\x1b[K' +
        '\r\x1b[K2026 INFO something happened\n' +
        '\r0/2 running · 1 queued\x1b[K' +
        '\r\x1b[K',
    );
  });
});
