import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../core/types.js';
import type { Store } from '../store/types.js';
import { followRun, type RunStreamItem } from './run-events.js';

const dir = mkdtempSync(join(tmpdir(), 'curupira-run-events-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SESSION = '"session_id":"00000000-0000-4000-8000-000000000001"';
const transcript = join(dir, 'claude.jsonl');
writeFileSync(
  transcript,
  [
    `{"type":"system","subtype":"init",${SESSION},"model":"m"}`,
    `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"looking"}]},${SESSION}}`,
    `{"type":"result","subtype":"success","is_error":false,"result":"done",${SESSION}}`,
    '',
  ].join('\n'),
);

/** A store that answers one run, running for the first `runningReads` reads, and counts the reads. */
function countingStore(runningReads: number): { store: Store; reads: () => number } {
  let reads = 0;
  const store = {
    getRun: async (id: string) => {
      reads += 1;
      const status = reads <= runningReads ? 'running' : 'succeeded';
      return { id, status, provider: 'claude', transcriptPath: transcript } as unknown as RunRecord;
    },
  } as unknown as Store;
  return { store, reads: () => reads };
}

async function collect(stream: AsyncGenerator<RunStreamItem>): Promise<string[]> {
  const out: string[] = [];
  for await (const item of stream)
    out.push(
      item.kind === 'event' ? `event ${item.index} ${item.event.kind}` : `${item.kind} ${item.run.status}`,
    );
  return out;
}

describe('followRun', () => {
  it('streams of one run share its reads, and each starts where it asked', async () => {
    const { store, reads } = countingStore(6);
    const signal = new AbortController().signal;
    const followers = Array.from({ length: 10 }, (_, i) =>
      collect(followRun(store, 'r_1', { from: i === 0 ? 1 : 0, signal, pollMs: 20 })),
    );
    const [late, ...rest] = await Promise.all(followers);
    const all = rest[0]!;
    expect(all[0]).toBe('run running');
    expect(all.at(-1)).toBe('end succeeded');
    expect(all.filter((l) => l.startsWith('event')).length).toBeGreaterThan(1);
    for (const other of rest) expect(other).toEqual(all);
    // Reconnecting with `from`: the same events, minus the first.
    expect(late).toEqual(all.filter((l) => !l.startsWith('event 0 ')));
    // Ten streams, about seven polls: one read per poll (not one per stream and poll).
    expect(reads()).toBeLessThanOrEqual(10);
  });

  it('a run that is gone ends the stream', async () => {
    const store = { getRun: async () => undefined } as unknown as Store;
    const signal = new AbortController().signal;
    expect(await collect(followRun(store, 'r_gone', { from: 0, signal }))).toEqual([]);
  });
});
