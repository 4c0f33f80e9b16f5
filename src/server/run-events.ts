/**
 * A run's normalised agent events, read from its transcript file as the agent writes it: the same
 * parser as `runs show`, so every provider streams the same way. Event `i` is the i-th event the
 * transcript yields, so a client that reconnects with `Last-Event-ID: i` continues at `i + 1`.
 */
import { open } from 'node:fs/promises';
import { getDriver } from '../agents/registry.js';
import type { AgentEvent, AgentStreamParser } from '../agents/types.js';
import { isTerminal, type RunRecord } from '../core/types.js';
import type { Store } from '../store/types.js';

export type RunStreamItem =
  | { kind: 'event'; index: number; event: AgentEvent }
  | { kind: 'run'; run: RunRecord }
  | { kind: 'end'; run: RunRecord };

interface Reader {
  offset: number;
  partial: string;
  parser: AgentStreamParser;
}

async function readMore(path: string, reader: Reader): Promise<string[]> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch {
    return [];
  }
  try {
    const lines: string[] = [];
    const buffer = Buffer.alloc(64 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, reader.offset);
      if (bytesRead === 0) break;
      reader.offset += bytesRead;
      const text = reader.partial + buffer.subarray(0, bytesRead).toString('utf8');
      const parts = text.split('\n');
      reader.partial = parts.pop() ?? '';
      lines.push(...parts);
    }
    return lines;
  } finally {
    await handle.close();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Yields the run's events from `from` on, then its final record. Polls the file every `pollMs`
 * while the run goes on; stops when the signal aborts.
 */
export async function* followRun(
  store: Store,
  runId: string,
  options: { from: number; signal: AbortSignal; pollMs?: number },
): AsyncGenerator<RunStreamItem> {
  let reader: Reader | undefined;
  let index = 0;
  let lastStatus: string | undefined;
  while (!options.signal.aborted) {
    const run = await store.getRun(runId);
    if (!run) return;
    if (run.status !== lastStatus) {
      lastStatus = run.status;
      yield { kind: 'run', run };
    }
    if (!reader && run.provider && run.transcriptPath)
      reader = { offset: 0, partial: '', parser: getDriver(run.provider).createParser() };
    const finished = isTerminal(run.status);
    if (reader && run.transcriptPath) {
      const lines = await readMore(run.transcriptPath, reader);
      if (finished && reader.partial) lines.push(reader.partial);
      const events = lines.filter((l) => l.trim()).flatMap((l) => reader!.parser.parseLine(l));
      if (finished) events.push(...reader.parser.end());
      for (const event of events) {
        if (index >= options.from) yield { kind: 'event', index, event };
        index += 1;
      }
    }
    if (finished) {
      yield { kind: 'end', run };
      return;
    }
    await sleep(options.pollMs ?? 250, options.signal);
  }
}
