/**
 * A run's normalised agent events, read from its transcript file as the agent writes it: the same
 * parser as `runs show`, so every provider streams the same way. Event `i` is the i-th event the
 * transcript yields, so a client that reconnects with `Last-Event-ID: i` continues at `i + 1`.
 */
import { open } from 'node:fs/promises';
import { loadDriver } from '../agents/registry.js';
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
 * One reading of a run's record and transcript, shared by every stream that follows the run: twenty
 * open run pages cost one read per poll, not twenty (bench/board/sse.mjs).
 */
class RunTail {
  run: RunRecord | undefined;
  readonly events: AgentEvent[] = [];
  finished = false;
  users = 0;
  private reader: Reader | undefined;
  private readAt = 0;
  private pending: Promise<void> | undefined;

  constructor(
    private readonly store: Store,
    private readonly runId: string,
  ) {}

  /** Reads on, unless a stream did less than `minGapMs` ago (or is reading now: then waits for it). */
  refresh(minGapMs: number): Promise<void> {
    if (this.pending) return this.pending;
    if (this.finished || Date.now() - this.readAt < minGapMs) return Promise.resolve();
    this.pending = this.read().finally(() => {
      this.readAt = Date.now();
      this.pending = undefined;
    });
    return this.pending;
  }

  private async read(): Promise<void> {
    const run = await this.store.getRun(this.runId);
    this.run = run;
    if (!run) return;
    if (!this.reader && run.provider && run.transcriptPath)
      this.reader = { offset: 0, partial: '', parser: (await loadDriver(run.provider)).createParser() };
    const finished = isTerminal(run.status);
    const reader = this.reader;
    if (reader && run.transcriptPath) {
      const lines = await readMore(run.transcriptPath, reader);
      if (finished && reader.partial) lines.push(reader.partial);
      const events = lines.filter((l) => l.trim()).flatMap((l) => reader.parser.parseLine(l));
      if (finished) events.push(...reader.parser.end());
      this.events.push(...events);
    }
    this.finished = finished;
  }
}

const tails = new WeakMap<Store, Map<string, RunTail>>();

function acquireTail(store: Store, runId: string): RunTail {
  const byRun = tails.get(store) ?? new Map<string, RunTail>();
  tails.set(store, byRun);
  const tail = byRun.get(runId) ?? new RunTail(store, runId);
  byRun.set(runId, tail);
  tail.users += 1;
  return tail;
}

function releaseTail(store: Store, runId: string, tail: RunTail): void {
  tail.users -= 1;
  if (tail.users === 0) tails.get(store)?.delete(runId);
}

/**
 * Yields the run's events from `from` on, then its final record. Polls the file every `pollMs`
 * while the run goes on (one read per poll for all the streams of a run); stops when the signal
 * aborts.
 */
export async function* followRun(
  store: Store,
  runId: string,
  options: { from: number; signal: AbortSignal; pollMs?: number },
): AsyncGenerator<RunStreamItem> {
  const pollMs = options.pollMs ?? 250;
  const tail = acquireTail(store, runId);
  let next = options.from;
  let lastStatus: string | undefined;
  try {
    while (!options.signal.aborted) {
      await tail.refresh(pollMs * 0.8);
      const run = tail.run;
      if (!run) return;
      if (run.status !== lastStatus) {
        lastStatus = run.status;
        yield { kind: 'run', run };
      }
      for (; next < tail.events.length; next += 1)
        yield { kind: 'event', index: next, event: tail.events[next]! };
      if (tail.finished) {
        yield { kind: 'end', run };
        return;
      }
      await sleep(pollMs, options.signal);
    }
  } finally {
    releaseTail(store, runId, tail);
  }
}
