/**
 * What the fleet acceptance tests (issue 17) read back: the dispatch rows of a test schema, runs
 * of the shared store, and the checks that no task ever had two live dispatches or two live agents.
 */
import pg from 'pg';
import type { RunRecord } from '../../src/core/types.js';
import type { DispatchRow } from '../../src/fleet/fleet-db.js';
import type { TestFleet } from './fleet.js';
import { agentHostPid, agentRunning, type FakeInvocation, fakeAgentProcesses } from './harness.js';

/** A `fleet_dispatches` row as the database returns it (src/fleet/fleet-db.ts). */
export type { DispatchRow };

/** Every row of `fleet_dispatches`, oldest first. */
export async function dispatchRows(fleet: TestFleet): Promise<DispatchRow[]> {
  const client = new pg.Client({ connectionString: fleet.schema.serverUrl });
  await client.connect();
  try {
    const result = await client.query<DispatchRow>(
      `SELECT * FROM ${fleet.schema.schema}.fleet_dispatches ORDER BY enqueued_at, id`,
    );
    return result.rows;
  } finally {
    await client.end();
  }
}

/** Every run in the fleet's store. */
export async function allRuns(fleet: TestFleet): Promise<RunRecord[]> {
  const store = await fleet.openStore();
  try {
    return await store.listRuns({ limit: Number.POSITIVE_INFINITY });
  } finally {
    await store.close();
  }
}

/** Finished runs in the fleet's store. */
export async function finishedRuns(fleet: TestFleet): Promise<RunRecord[]> {
  return (await allRuns(fleet)).filter((run) => run.finishedAt !== null);
}

/**
 * Tasks whose dispatches overlapped in time: one started (or was still queued) before the
 * previous one ended. A dispatch with no end yet counts as open until now.
 */
export function overlappingDispatches(rows: readonly DispatchRow[]): string[] {
  const byTask = new Map<string, DispatchRow[]>();
  for (const row of rows) byTask.set(row.task_key, [...(byTask.get(row.task_key) ?? []), row]);
  const bad: string[] = [];
  for (const [task, list] of byTask) {
    const intervals = list
      .map((row) => ({
        start: (row.started_at ?? row.enqueued_at).getTime(),
        end: (row.finished_at ?? new Date()).getTime(),
      }))
      .sort((a, b) => a.start - b.start);
    for (let i = 1; i < intervals.length; i += 1) {
      if (intervals[i]!.start < intervals[i - 1]!.end) bad.push(task);
    }
  }
  return bad;
}

/**
 * Watches agent processes: every `everyMs`, notes which recorded agent invocations are alive, so
 * a test can tell whether two agents of one item ever ran at once. `key` maps an invocation to
 * its item (e.g. from its prompt).
 */
export interface AgentWatch {
  /** Items that had two live agents at one sample, with the pids. */
  concurrent(): { item: string; pids: number[] }[];
  /** When an invocation's pid was last seen alive (epoch ms), if ever. */
  lastSeenAlive(call: FakeInvocation): number | undefined;
  stop(): void;
}

export function watchAgents(
  invocations: () => FakeInvocation[],
  key: (call: FakeInvocation) => string,
  everyMs = 100,
): AgentWatch {
  const found: { item: string; pids: number[] }[] = [];
  const lastAlive = new Map<string, number>();
  const idOf = (call: FakeInvocation): string => `${call.time} ${call.cwd} ${call.pid}`;
  const timer = setInterval(() => {
    const live = new Map<string, number[]>();
    const running = fakeAgentProcesses();
    for (const call of invocations()) {
      const pid = agentHostPid(call, running);
      if (pid === undefined) continue;
      lastAlive.set(idOf(call), Date.now());
      const item = key(call);
      live.set(item, [...(live.get(item) ?? []), pid]);
    }
    for (const [item, pids] of live) {
      const seen = found.some((f) => f.item === item && f.pids.join() === pids.join());
      if (pids.length > 1 && !seen) found.push({ item, pids });
    }
  }, everyMs);
  return {
    concurrent: () => [...found],
    lastSeenAlive: (call) => lastAlive.get(idOf(call)),
    stop: () => clearInterval(timer),
  };
}

/** True while the invocation's fake agent runs (not a later process that reused its pid). */
export function agentAlive(
  call: Pick<FakeInvocation, 'pid' | 'cwd'> & Partial<Pick<FakeInvocation, 'time'>>,
): boolean {
  return agentRunning(call);
}

/**
 * Items with more than one run, each run as `status host reason`, and what the fleet's processes
 * logged about those items (lines naming the item or its runs) and every warning or error they
 * logged from a few seconds before the item's first run to its last one's end: shown when a test
 * that expects one run per item finds more.
 */
export function extraRunsReport(
  runs: readonly RunRecord[],
  processes: readonly { name: string; output(): string }[] = [],
): string {
  const byItem = new Map<string, RunRecord[]>();
  for (const run of runs) byItem.set(run.itemId, [...(byItem.get(run.itemId) ?? []), run]);
  const lines: string[] = [];
  for (const [item, list] of byItem) {
    if (list.length < 2) continue;
    lines.push(`item ${item}: ${list.length} runs`);
    for (const run of list)
      lines.push(
        `  ${run.id} ${run.status} host=${run.host ?? '-'} created=${run.createdAt} started=${run.startedAt ?? '-'} finished=${run.finishedAt ?? '-'} reason=${run.reason ?? '-'}`,
      );
    const from = Math.min(...list.map((run) => Date.parse(run.createdAt))) - 5000;
    const to = Math.max(...list.map((run) => Date.parse(run.finishedAt ?? new Date().toISOString()))) + 1000;
    const names = new RegExp(`\\bid=${item}(\\s|$)|${list.map((run) => run.id).join('|')}`);
    for (const p of processes) {
      const hits = p
        .output()
        .split('\n')
        .filter((line) => {
          if (names.test(line)) return true;
          const at = Date.parse(line.slice(0, 24));
          return /^\S+ (WARN|ERROR)/.test(line) && at >= from && at <= to;
        });
      if (hits.length > 0)
        lines.push(`  --- ${p.name}`, ...hits.slice(-40).map((line) => `    ${line.slice(0, 400)}`));
    }
  }
  return lines.join('\n');
}
