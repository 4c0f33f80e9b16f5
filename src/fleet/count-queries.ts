/**
 * Statement counting for the fleet benchmark (bench/fleet.mjs), off by default. With
 * `CURUPIRA_COUNT_QUERIES=FILE` in a fleet process's environment, every statement the process
 * sends to PostgreSQL is counted by its connection's `application_name` (`curupira`: the store,
 * `curupira-fleet`: the fleet tables, `curupira-queue`: pg-boss, `curupira-poller-lock`: the
 * election, whose sessions are named `curupira-poller <instance>`), and FILE is rewritten with the counts every 200 ms and when the role ends, as one
 * JSON object: `{ pid, at, statements: { name: n }, counters: { name: n } }`. A statement is one
 * `query` call on a connection, that is one round trip (`BEGIN` and `COMMIT` count as one each).
 * `counters` holds the process's own tallies (`FleetDb.queries`, `FleetQueue.calls`).
 */
import { renameSync, writeFileSync } from 'node:fs';
import pg from 'pg';

export const COUNT_QUERIES_ENV = 'CURUPIRA_COUNT_QUERIES';

export interface QueryCount {
  /** Adds a tally of this process to the file (read at each write). */
  also(name: string, read: () => number): void;
  /** Writes the file a last time and stops the timer. */
  stop(): void;
}

type QueryFn = (this: pg.Client, ...args: unknown[]) => unknown;

const statements: Record<string, number> = {};
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const proto = pg.Client.prototype as unknown as { query: QueryFn };
  const original = proto.query;
  proto.query = function counted(this: pg.Client, ...args: unknown[]): unknown {
    const params = (this as unknown as { connectionParameters?: { application_name?: string } })
      .connectionParameters;
    // The lock's session carries the process's instance id (src/fleet/election.ts): one name.
    const given = params?.application_name ?? 'other';
    const name = given.startsWith('curupira-poller ') ? 'curupira-poller-lock' : given;
    statements[name] = (statements[name] ?? 0) + 1;
    return original.apply(this, args);
  };
}

/** Starts counting when `file` is set (the value of CURUPIRA_COUNT_QUERIES); undefined otherwise. */
export function startQueryCount(file: string | undefined): QueryCount | undefined {
  if (!file) return undefined;
  install();
  const tallies = new Map<string, () => number>();
  const write = (): void => {
    const counters = Object.fromEntries([...tallies].map(([name, read]) => [name, read()]));
    const snapshot = { pid: process.pid, at: Date.now(), statements, counters };
    try {
      // Renamed into place, so a reader never sees half a file.
      writeFileSync(`${file}.tmp`, `${JSON.stringify(snapshot)}\n`);
      renameSync(`${file}.tmp`, file);
    } catch {
      // A benchmark's file that cannot be written changes nothing for the fleet.
    }
  };
  const timer = setInterval(write, 200);
  timer.unref();
  write();
  return {
    also(name, read) {
      tallies.set(name, read);
    },
    stop() {
      clearInterval(timer);
      write();
    },
  };
}
