/**
 * The store as a fleet process uses it: every statement survives a cut of the database.
 *
 * - A statement the database did not answer (a connection reset or refused, the server
 *   restarting, a session ended by an administrator) is sent again, with backoff, for up to
 *   `retryMs`: reads, and writes whose effect is the same when sent twice (updates, upserts,
 *   deletes). Two that are not are sent with a token of their call, which the store finds when the
 *   first try took effect: `takeAllowance` (a second try would use another allowance, or find none
 *   and block the run its person allowed) and `recordWebhookDelivery` (a second try would read the
 *   delivery as a redelivery and drop it).
 * - A write that is not so (`createRun`: the store picks the run's id) is not blindly sent again:
 *   the runs of the task are read to learn whether it took effect. Counters
 *   (`recordItemFailure`, `recordResumeFailure`) fail as they did: counted twice is worse.
 * - A run's result is kept on this host's disk (`dir`, beside the state folder) from the moment its
 *   agent exited (the `agentOutcome` patch) until the run's final record is in the database. A
 *   result the database does not take now is returned to the engine as if it had (the run goes on
 *   to its end here) and written by `replay` once the database answers: a run whose agent
 *   succeeded is never lost, cancelled or redone because the database was away at that moment.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, StateError } from '../core/errors.js';
import { isTerminal, type RunRecord } from '../core/types.js';
import type { Logger } from '../log.js';
import { isConnectionError } from '../store/postgres/errors.js';
import type { RunPatch, Store } from '../store/types.js';
import { retryDelayMs } from './fleet-db.js';

export interface DurableStoreOptions {
  /** How long a statement is tried again while the database does not answer (ms). */
  retryMs: number;
  /** The folder of results waiting for the database (created when first needed). */
  dir?: string;
  log: Logger;
  /** This host: where the runs it creates are looked for after an unanswered `createRun`. */
  host?: string;
}

/** The store, plus what its results on disk need. */
export interface DurableStore extends Store {
  /** Writes the results kept on disk; returns how many are still waiting (the database is away). */
  replay(): Promise<number>;
  /** Runs whose result is on disk and not yet in the database. */
  pendingResults(): string[];
  /**
   * When (epoch ms) a statement last went unanswered (the database away, or too busy to answer in
   * time); undefined while none did. A worker tells by it a run its engine stopped because a write
   * did not land from one stopped for a reason of its own.
   */
  unansweredAt(): number | undefined;
}

/** True when `error` says the database could not be reached (a retry later may cure it). */
export function unreachable(error: unknown): boolean {
  if (isConnectionError(error)) return true;
  return error instanceof StateError && error.cause !== undefined && isConnectionError(error.cause);
}

/** Methods never sent twice: a counter counts twice. */
const ONCE = new Set(['recordItemFailure', 'recordResumeFailure', 'close', 'exclusive']);

/**
 * A run closed while this host could not write (by a restart of this host from its saved outcome,
 * or taken back by the poller): that record stands, unless this host's agent succeeded, which wins
 * over a take-back.
 */
function closedMeanwhile(current: RunRecord, journal: Journal): boolean {
  if (!isTerminal(current.status)) return false;
  return !(current.status === 'cancelled' && journal.patch.agentOutcome?.status === 'succeeded');
}

interface Journal {
  /** A write of it was not answered. */
  failed?: boolean;
  runId: string;
  /** Every patch since the agent exited, merged in order. */
  patch: RunPatch;
  /** The record as last known, for the engine while the database is away. */
  record?: RunRecord;
}

export function durableStore(store: Store, options: DurableStoreOptions): DurableStore {
  const { log, retryMs, dir, host } = options;
  const known = new Map<string, RunRecord>();
  const journals = new Map<string, Journal>();
  const created = new Set<string>();
  /** Runs a write of which went unanswered: their final record is not sent over one closed meanwhile. */
  const unanswered = new Set<string>();
  let lastUnanswered: number | undefined;
  /** Notes an unanswered statement; true when `error` is one. */
  const isUnanswered = (error: unknown): boolean => {
    if (!unreachable(error)) return false;
    lastUnanswered = Date.now();
    return true;
  };

  const remember = (record: RunRecord): RunRecord => {
    known.set(record.id, record);
    // The cache only serves runs in flight here.
    if (isTerminal(record.status) && !journals.has(record.id)) known.delete(record.id);
    return record;
  };

  async function retried<T>(action: () => Promise<T>): Promise<T> {
    const until = Date.now() + retryMs;
    for (let failures = 0; ; failures += 1) {
      try {
        return await action();
      } catch (error) {
        if (!isUnanswered(error) || Date.now() >= until) throw error;
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs(failures)));
      }
    }
  }

  const file = (runId: string): string => join(dir!, `${runId}.json`);

  function save(journal: Journal): void {
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    const path = file(journal.runId);
    writeFileSync(`${path}.tmp`, JSON.stringify(journal));
    renameSync(`${path}.tmp`, path);
  }

  function drop(runId: string): void {
    journals.delete(runId);
    known.delete(runId);
    if (dir) rmSync(file(runId), { force: true });
  }

  // Results a previous process of this host kept (it died before the database took them).
  if (dir) {
    try {
      for (const name of readdirSync(dir)) {
        if (!name.endsWith('.json')) continue;
        try {
          const journal = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Journal;
          if (typeof journal.runId === 'string') journals.set(journal.runId, journal);
        } catch {
          // A torn file (a crash while writing it) was never the only copy: its .tmp was.
        }
      }
    } catch {
      // No folder yet: nothing kept.
    }
  }

  async function updateRun(id: string, patch: RunPatch): Promise<RunRecord> {
    let journal = journals.get(id);
    // Kept on disk: a success (a stopped or failed agent's run is closed by whoever can, as before).
    if (!journal && patch.agentOutcome?.status === 'succeeded') {
      journal = { runId: id, patch: {}, ...(known.get(id) ? { record: known.get(id)! } : {}) };
      journals.set(id, journal);
    }
    if (!journal) {
      return remember(
        await retried(async () => {
          // A final record sent again after an unanswered try: one closed meanwhile (taken back) stands.
          if (unanswered.has(id) && patch.status !== undefined && isTerminal(patch.status)) {
            const current = await store.getRun(id);
            if (current && isTerminal(current.status)) return current;
          }
          try {
            return await store.updateRun(id, patch);
          } catch (error) {
            unanswered.add(id);
            throw error;
          }
        }),
      );
    }
    // From the agent's exit on, the result is on disk before the database is asked.
    journal.patch = { ...journal.patch, ...patch };
    if (journal.record) journal.record = { ...journal.record, ...patch } as RunRecord;
    save(journal);
    try {
      const record = await retried(async () => {
        // After a write that was not answered, the record may have been closed meanwhile (taken
        // back by the poller while this host was cut off): that record stands (see `closedMeanwhile`).
        if (journal.failed) {
          const current = await store.getRun(id);
          if (current && closedMeanwhile(current, journal)) {
            drop(id);
            return current;
          }
        }
        try {
          return await store.updateRun(id, journal.patch);
        } catch (error) {
          journal.failed = true;
          throw error;
        }
      });
      if (!journals.has(id)) return remember(record);
      journal.record = record;
      if (isTerminal(record.status)) drop(id);
      else save(journal);
      return remember(record);
    } catch (error) {
      if (!unreachable(error) || !journal.record) throw error;
      log.warn(
        { run: id, error: errorMessage(error) },
        'The database is away: this run’s result is kept on this host and written when it answers',
      );
      return journal.record;
    }
  }

  async function createRun(
    init: Parameters<Store['createRun']>[0],
    options?: Parameters<Store['createRun']>[1],
  ) {
    const until = Date.now() + retryMs;
    const where = (host ?? init.host) ? { host: (host ?? init.host)! } : undefined;
    // An insert that went unanswered may have been recorded: it is sent again only once a read
    // that the database answered shows it was not (a read that fails too is tried again first;
    // sending the insert again then would leave two records of one run, one never finished).
    let maybeRecorded = false;
    for (let failures = 0; ; failures += 1) {
      try {
        if (maybeRecorded) {
          const found = await store.listUnfinishedRuns(where);
          // A run of this task on this host that this process did not see created is that one.
          const mine = found.find(
            (run) => run.taskKey === init.taskKey && run.status === init.status && !created.has(run.id),
          );
          if (mine) {
            created.add(mine.id);
            return remember(mine);
          }
          maybeRecorded = false;
        }
        const record = await store.createRun(init, options);
        created.add(record.id);
        return remember(record);
      } catch (error) {
        if (!isUnanswered(error) || Date.now() >= until) throw error;
        maybeRecorded = true;
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs(failures)));
      }
    }
  }

  async function replay(): Promise<number> {
    for (const journal of [...journals.values()]) {
      try {
        const current = await store.getRun(journal.runId);
        if (!current || closedMeanwhile(current, journal)) {
          drop(journal.runId);
          continue;
        }
        const record = await store.updateRun(journal.runId, journal.patch);
        if (isTerminal(record.status) || !journal.record) drop(journal.runId);
        log.info({ run: journal.runId, status: record.status }, 'Wrote a run’s result kept on this host');
      } catch (error) {
        if (!unreachable(error)) {
          log.warn({ run: journal.runId, error: errorMessage(error) }, 'Could not write a kept run result');
          drop(journal.runId);
        }
      }
    }
    return journals.size;
  }

  const wrapped: Record<string, unknown> = {
    updateRun,
    createRun,
    // Sent again after an unanswered try, as every write is; the token makes the try that took
    // effect (its answer lost) count, instead of taking a second allowance or reading this very
    // delivery as a redelivery.
    takeAllowance(taskKey: string, digest: string, token?: string) {
      const once = token ?? randomUUID();
      return retried(() => store.takeAllowance(taskKey, digest, once));
    },
    recordWebhookDelivery(delivery: Parameters<Store['recordWebhookDelivery']>[0]) {
      const once = { ...delivery, receipt: delivery.receipt ?? randomUUID() };
      return retried(() => store.recordWebhookDelivery(once));
    },
    replay,
    pendingResults: () => [...journals.keys()],
    unansweredAt: () => lastUnanswered,
    async getRun(id: string) {
      const record = await retried(() => store.getRun(id));
      const journal = journals.get(id);
      // The database has not got this host's result yet: the result wins.
      if (record && journal) return { ...record, ...journal.patch } as RunRecord;
      return record;
    },
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (typeof property === 'string' && property in wrapped) return wrapped[property];
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof property !== 'string' || ONCE.has(property)) return method.bind(target);
      return (...args: unknown[]) => {
        const first = method.apply(target, args);
        if (!(first instanceof Promise)) return first;
        let tried = false;
        return retried(() => {
          if (!tried) {
            tried = true;
            return first;
          }
          return method.apply(target, args) as Promise<unknown>;
        });
      };
    },
  }) as DurableStore;
}
