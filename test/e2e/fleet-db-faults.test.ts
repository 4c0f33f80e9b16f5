/**
 * Issue 33: a fleet that survives its database. One poller and a standby, three workers and 60
 * items on PostgreSQL, with the built CLI, the simulator and fake agents; mid-way the database
 * misbehaves: every connection of the fleet is ended again and again for 10 s, the database refuses
 * connections for 10 s and for 60 s (through a TCP proxy), and a cluster of the test's own is
 * stopped and started. After each, every item's agent succeeded exactly once, no run came after a
 * success, no run was left unfinished, no task ran twice at once, and every process still answers
 * (a SIGTERM ends it cleanly). The time from the database's return to the last success is printed.
 *
 * Each fault runs with the fast heartbeat settings of the other fleet tests (1 s / 4 s / 2 s):
 * every fault is then longer than heartbeat_timeout, so each ends in the documented path (a cut-off
 * worker stops its agents and resumes their sessions when the database answers; nothing is taken
 * back because the poller could not see the workers either). Each runs again with the default
 * settings (5 s / 30 s / 120 s, slow): the sessions cut for 10 s, the 10 s refusal and the cluster
 * restart are shorter than heartbeat_timeout and must change nothing visible (no run interrupted,
 * nothing taken back, one agent call per item); the 60 s refusal is longer and ends as above.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestFleet, type FleetProcess, type TestFleet } from '../helpers/fleet.js';
import { allRuns, dispatchRows, watchAgents } from '../helpers/fleet-checks.js';
import { issueAutomation, unfenced, waitFor } from '../helpers/harness.js';
import { type PrivateCluster, postgresBin, startPrivateCluster } from '../helpers/pg-cluster.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

let fleet: TestFleet | undefined;
let proxy: TcpProxy | undefined;
let cluster: PrivateCluster | undefined;

afterEach(async () => {
  await fleet?.cleanup().catch(() => undefined);
  fleet = undefined;
  await proxy?.close();
  proxy = undefined;
  await cluster?.destroy();
  cluster = undefined;
});

const ITEMS = 60;

function itemOf(prompt: string | undefined): string {
  return /Fix #(\d+)/.exec(unfenced(prompt ?? ''))?.[1] ?? '?';
}

function logged(process: FleetProcess, text: string, timeoutMs = 60_000): Promise<boolean> {
  return waitFor(`${process.name} to log '${text}'`, () => process.output().includes(text), timeoutMs, 100);
}

/** Waits `ms` while checking, every 200 ms, that no fleet process died meanwhile. */
async function holdFor(ms: number, processes: FleetProcess[]): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    for (const p of processes) expect(p.child.exitCode, `${p.name} exited during the fault`).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.max(0, until - Date.now()))));
  }
}

interface Fault {
  /** Connect the fleet through the TCP proxy (the fault uses it). */
  viaProxy: boolean;
  /** The fault; resolves when the database is back (epoch ms). */
  apply(processes: FleetProcess[]): Promise<number>;
}

/**
 * Runs the fleet through `fault` and checks the outcome. With `unseen`, the fault is shorter than
 * heartbeat_timeout and must change nothing visible: no run interrupted, nothing taken back, one
 * agent call per item.
 */
async function survives(label: string, fault: Fault, { items = ITEMS, unseen = false } = {}): Promise<void> {
  const f = fleet!;
  const server = new URL(f.schema.serverUrl);
  proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(server.port || 5432) });
  const viaProxy = f.schema.url.replace(`127.0.0.1:${server.port || 5432}`, `127.0.0.1:${proxy.port}`);
  const host = fault.viaProxy ? { stateDbUrl: viaProxy } : {};
  const agents = watchAgents(
    () => f.harness.agentRuns('claude'),
    (call) => itemOf(call.prompt),
  );
  const processes: FleetProcess[] = [];
  const startedAt = Date.now();
  try {
    // The workers start with the first poller (they wait for its jobs); the standby once the first
    // holds the lock, and the fleet works meanwhile: no process start is waited out alone.
    const p1 = f.start('poller', 'p1', host);
    processes.push(p1);
    for (const name of ['w1', 'w2', 'w3']) processes.push(f.start('worker', name, host));
    await logged(p1, 'This process is the poller now');
    const p2 = f.start('poller', 'p2', host);
    processes.push(p2);
    await Promise.all([
      logged(p2, 'Another process is the poller; standing by to take over'),
      waitFor(
        'a dozen finished runs, and some running',
        async () => {
          const runs = await allRuns(f);
          const done = runs.filter((r) => r.finishedAt !== null).length;
          return done >= 12 && runs.length > done ? true : undefined;
        },
        120_000,
        200,
      ),
    ]);
    const faultAt = Date.now();
    const returnedAt = await fault.apply(processes);
    const runs = await waitFor(
      `${items} succeeded runs`,
      async () => {
        const all = await allRuns(f).catch(() => undefined);
        if (!all) return undefined;
        return all.filter((r) => r.status === 'succeeded').length >= items ? all : undefined;
      },
      240_000,
      300,
    ).catch((error: unknown) => {
      for (const p of processes) console.error(`--- ${p.name}\n${p.output().slice(-5000)}`);
      throw error;
    });
    const successTimes = runs.filter((r) => r.status === 'succeeded').map((r) => Date.parse(r.finishedAt!));
    const lastSuccess = Math.max(...successTimes);
    const firstAfter = Math.min(...successTimes.filter((t) => t >= returnedAt));
    const leftAtReturn = successTimes.filter((t) => t >= returnedAt).length;
    // A few polls later, still nothing more.
    await waitFor('a few polls more', () => Date.now() - lastSuccess > 3000 || undefined, 10_000, 100);
    const final = await allRuns(f);
    const succeeded = final.filter((r) => r.status === 'succeeded');
    // Every item's agent succeeded exactly once.
    expect(succeeded).toHaveLength(items);
    expect(new Set(succeeded.map((r) => r.itemId)).size).toBe(items);
    // No run left unfinished.
    expect(final.filter((r) => r.finishedAt === null).map((r) => `${r.itemId}:${r.status}`)).toEqual([]);
    // No run after a success (neither a run record nor an agent started after it).
    const calls = f.harness.agentRuns('claude');
    const after: string[] = [];
    for (const run of succeeded) {
      const finished = Date.parse(run.finishedAt!);
      for (const other of final)
        if (other.itemId === run.itemId && other.id !== run.id && Date.parse(other.createdAt) > finished)
          after.push(`run ${other.id} of #${run.itemId}`);
      for (const call of calls)
        if (itemOf(call.prompt) === run.itemId && Date.parse(call.time) > finished)
          after.push(`agent ${call.pid} of #${run.itemId}`);
    }
    expect(after).toEqual([]);
    // No concurrent duplicate: neither two live dispatches nor two live agents of one item.
    const rows = await dispatchRows(f);
    expect(rows.filter((row) => row.settled_at === null).map((row) => row.state)).toEqual([]);
    const live = new Map<string, number>();
    for (const row of rows.filter((r) => r.state !== 'taken_back'))
      live.set(row.task_key, (live.get(row.task_key) ?? 0) + 1);
    const twice = [...live].filter(([, n]) => n > 1).map(([task]) => task);
    if (twice.length > 0) {
      // What ran twice, as the rows, the runs and the logs tell it.
      for (const task of twice) {
        console.error(`--- dispatches of ${task}`);
        for (const row of rows.filter((r) => r.task_key === task))
          console.error(
            JSON.stringify({
              ...row,
              payload: undefined,
              resume: JSON.parse(row.payload).resume !== undefined,
            }),
          );
        for (const run of final.filter((r) => r.taskKey === task))
          console.error(
            JSON.stringify({
              id: run.id,
              status: run.status,
              reason: run.reason,
              host: run.host,
              createdAt: run.createdAt,
              startedAt: run.startedAt,
              finishedAt: run.finishedAt,
            }),
          );
        const ids = new Set(rows.filter((r) => r.task_key === task).flatMap((r) => [r.id, r.run_id]));
        for (const p of processes)
          for (const line of p.output().split('\n'))
            if (line.includes(task) || [...ids].some((id) => id && line.includes(id)))
              console.error(`${p.name}: ${line.slice(0, 600)}`);
      }
    }
    expect(twice).toEqual([]);
    expect(agents.concurrent()).toEqual([]);
    // No process wedged: each is alive, and a SIGTERM ends each cleanly and soon.
    for (const p of processes) expect(p.child.exitCode, `${p.name} exited`).toBeNull();
    for (const p of processes) p.child.kill('SIGTERM');
    const codes = await Promise.all(
      processes.map((p) =>
        Promise.race([
          p.done.then((r) => String(r.code ?? r.signal)),
          new Promise<string>((resolve) => setTimeout(() => resolve('wedged'), 30_000).unref()),
        ]),
      ),
    );
    codes.forEach((code, i) => {
      if (code === 'wedged')
        console.error(`--- ${processes[i]!.name}\n${processes[i]!.output().slice(-3000)}`);
    });
    expect(codes).toEqual(processes.map(() => expect.stringMatching(/^(0|130|143)$/)));
    for (const p of processes) expect(p.output()).not.toContain('Cannot use a pool');
    const restarted = final.filter((r) => r.status !== 'succeeded').length;
    const takenBack = rows.filter((r) => r.state === 'taken_back').length;
    if (unseen) {
      // Nothing visible changed: no run interrupted, nothing taken back, one agent per item.
      expect(final.filter((r) => r.status !== 'succeeded').map((r) => `${r.itemId}:${r.status}`)).toEqual([]);
      expect(takenBack).toBe(0);
      expect(calls).toHaveLength(items);
    }
    console.info(
      `fleet database faults (${label}): the fault began ${((faultAt - startedAt) / 1000).toFixed(1)} s after the fleet's start; the database was back ${((returnedAt - faultAt) / 1000).toFixed(1)} s after the fault began; first success ${((firstAfter - returnedAt) / 1000).toFixed(1)} s and last ${((lastSuccess - returnedAt) / 1000).toFixed(1)} s after its return (${leftAtReturn} items left then); ${final.length} runs (${restarted} interrupted and resumed), ${takenBack} dispatches taken back, ${calls.length} agent calls for ${items} items`,
    );
  } finally {
    agents.stop();
  }
}

async function newFleet({
  serverUrl,
  items = ITEMS,
  timing,
}: {
  serverUrl?: string;
  items?: number;
  timing?: 'defaults';
} = {}): Promise<TestFleet> {
  return createTestFleet({
    issues: Array.from({ length: items }, (_, i) => ({ title: `Item ${i + 1} [[fake:sleep=2]]` })),
    automation: issueAutomation('fix', { prompt: 'Fix #${issue_number}: ${issue_title}' }),
    maxActive: 9,
    ...(serverUrl ? { serverUrl } : {}),
    ...(timing ? { timing } : {}),
    settingsExtra: '\n[settings.polling]\nbatch_size = 100\npoll_interval_seconds = 2',
  });
}

/**
 * Every session of the fleet (those through the proxy) is ended with pg_terminate_backend every
 * 0.2 s for `seconds`; the server itself keeps accepting connections.
 */
function sessionsEnded(seconds: number): Fault {
  return {
    viaProxy: true,
    async apply(processes) {
      const admin = new pg.Client({ connectionString: fleet!.schema.serverUrl });
      await admin.connect();
      let ended = 0;
      try {
        const until = Date.now() + seconds * 1000;
        while (Date.now() < until) {
          const ports = proxy!.upstreamPorts();
          if (ports.length > 0) {
            const result = await admin.query<{ n: number }>(
              `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                WHERE client_addr = '127.0.0.1' AND client_port = ANY($1::int[]) AND pid <> pg_backend_pid()`,
              [ports],
            );
            ended += result.rows[0]?.n ?? 0;
          }
          await holdFor(200, processes);
        }
      } finally {
        await admin.end();
      }
      expect(ended).toBeGreaterThan(10);
      return Date.now();
    },
  };
}

/** The proxy refuses every connection (and resets those open) for `seconds`. */
function refused(seconds: number): Fault {
  return {
    viaProxy: true,
    async apply(processes) {
      proxy!.cut();
      await holdFor(seconds * 1000, processes);
      proxy!.restore();
      return Date.now();
    },
  };
}

/** The test's own cluster is stopped (fast shutdown: every session ended), and started 5 s later. */
function clusterRestart(): Fault {
  return {
    viaProxy: false,
    async apply(processes) {
      await cluster!.stop();
      await holdFor(5000, processes);
      await cluster!.start();
      return Date.now();
    },
  };
}

// Every case runs by default (no environment gate). On a quiet machine: 36-57 s a case, 90-92 s for
// the 60 s refusal, about 5 minutes for the fast-heartbeat cases; the default-heartbeat variants
// (slow) add about 4 minutes; on two busy shared cores up to 3 minutes a case. At a load average of
// 20-22 (2026-12-04, after the fleet checks scanned /proc once a tick instead of once per agent
// call): 56-76 s a case, 111-121 s for the 60 s refusals, 619 s the file; at 6-11, 36-50 s a case,
// 94 s for the 60 s refusals, 441 s the file.
describe.runIf(process.env.CURUPIRA_BUILT === '1')('a fleet that survives its database (issue 33)', () => {
  it('every connection of the fleet ended again and again for 10 s (pg_terminate_backend)', async () => {
    fleet = await newFleet();
    await survives('sessions terminated for 10 s', sessionsEnded(10));
  }, 400_000);

  it('the database refuses connections for 10 s', async () => {
    fleet = await newFleet();
    await survives('refused for 10 s', refused(10));
  }, 400_000);

  it('the database refuses connections for 60 s', async () => {
    fleet = await newFleet();
    await survives('refused for 60 s', refused(60));
  }, 480_000);

  // The machine's shared server is never stopped: a cluster of this test's own is.
  it.runIf(postgresBin() !== undefined)(
    'a PostgreSQL cluster of its own stopped and started',
    async () => {
      cluster = await startPrivateCluster();
      fleet = await newFleet({ serverUrl: cluster.url });
      await survives('cluster stopped and started', clusterRestart());
    },
    400_000,
  );

  // The same faults with the default heartbeat settings (5 s / 30 s / 120 s, none written to the
  // settings files). A cut shorter than heartbeat_timeout must change nothing visible: no run
  // interrupted, nothing taken back, one agent call per item. The 60 s refusal is longer: it ends
  // in the documented path (a cut-off worker stops its agents at heartbeat_timeout and resumes
  // their sessions when the database answers; the poller, cut off too, takes nothing back).
  describe('with the default heartbeat settings (slow)', () => {
    it('every connection ended again and again for 10 s changes nothing visible', async () => {
      fleet = await newFleet({ timing: 'defaults' });
      await survives('default heartbeat settings, sessions terminated for 10 s', sessionsEnded(10), {
        unseen: true,
      });
    }, 400_000);

    // Slow and sensitive to load: on two cores at a load average of 17-21 (other work beside the
    // suite), three runs were still finishing items when the 240 s wait for 60 successes ended. The
    // suite runs this file alone (vitest.config.ts), where they pass: on the quiet machine
    // (2026-12-04, after the store's split) 10 s refused, last success 24.9 s after the database's
    // return; 60 s, 33.1 s; 60 agent calls for 60 items, nothing taken back.
    it('the database refusing connections for 10 s changes nothing visible', async () => {
      fleet = await newFleet({ timing: 'defaults' });
      await survives('default heartbeat settings, refused for 10 s', refused(10), { unseen: true });
    }, 400_000);

    it('the database refuses connections for 60 s', async () => {
      fleet = await newFleet({ timing: 'defaults' });
      await survives('default heartbeat settings, refused for 60 s', refused(60));
    }, 480_000);

    it.runIf(postgresBin() !== undefined)(
      'a PostgreSQL cluster of its own stopped and started changes nothing visible',
      async () => {
        cluster = await startPrivateCluster();
        fleet = await newFleet({ serverUrl: cluster.url, timing: 'defaults' });
        await survives('default heartbeat settings, cluster stopped and started', clusterRestart(), {
          unseen: true,
        });
      },
      400_000,
    );
  });
});
