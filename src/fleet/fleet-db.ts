/**
 * The fleet's tables (src/store/postgres/fleet-schema.ts): host heartbeats and dispatches. Every
 * state change is one guarded statement (`WHERE state = … AND host = …`), so a host that lost a
 * dispatch (taken back while it was cut off) can never move it again, and the database's partial
 * unique index refuses a second live dispatch of a task whatever any poller believes.
 */
import pg from 'pg';
import { isConnectionError } from '../store/postgres/errors.js';
import { LOCK_HELD_BY, type PollerFence } from './election.js';
import type {
  DispatchRecord,
  DispatchState,
  FleetHost,
  FleetRole,
  FleetView,
  HostCapabilities,
  HostHealth,
  WaitingTask,
} from './types.js';
import { JOBS_CHANNEL, wakePayload } from './wakeups.js';

export interface FleetTiming {
  /** Seconds between heartbeats. */
  heartbeatInterval: number;
  /** Seconds without a heartbeat after which a host counts as gone. */
  heartbeatTimeout: number;
  /** Seconds a gone host's running jobs wait for it after the timeout. */
  resumeGrace: number;
}

export interface HostBeat {
  name: string;
  role: FleetRole;
  pid: number;
  instance: string;
  version: string;
  capacity: number;
  checkouts: readonly string[];
  polling: boolean;
  /** What it can run (src/fleet/placement.ts); null: nothing advertised. */
  capabilities: HostCapabilities | null;
  /** The operating system's host name of the machine it runs on. */
  machine: string;
}

/** A host row as a process claiming the name reads it (FleetDb.hostRow). */
export interface HostRow {
  instance: string;
  pid: number;
  machine: string | null;
  /** Database time of its last heartbeat (ISO). */
  heartbeatAt: string;
  /** Seconds since that heartbeat, by the database's clock. */
  silentFor: number;
  stopped: boolean;
}

export interface DispatchInit {
  id: string;
  taskKey: string;
  automationId: string;
  repo: string;
  host: string;
  payload: string;
  previousId: string | null;
}

/** A live dispatch whose host stopped answering, with how long ago it last did (seconds). */
export interface LostCandidate {
  dispatch: DispatchRecord;
  /** Seconds since the host's last heartbeat (null: no such host row). */
  silentFor: number | null;
  /** Seconds since the host stopped cleanly (null: it did not). */
  stoppedFor: number | null;
}

export interface DispatchRow {
  id: string;
  task_key: string;
  automation_id: string;
  repo: string;
  host: string;
  state: DispatchState;
  payload: string;
  run_id: string | null;
  enqueued_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  settled_at: Date | null;
  detail: string | null;
  previous_id: string | null;
  cancel_requested: boolean;
  refused: boolean;
}

function iso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

function dispatchFromRow(row: DispatchRow): DispatchRecord {
  return {
    id: row.id,
    taskKey: row.task_key,
    automationId: row.automation_id,
    repo: row.repo,
    host: row.host,
    state: row.state,
    runId: row.run_id,
    enqueuedAt: row.enqueued_at.toISOString(),
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    settledAt: iso(row.settled_at),
    detail: row.detail,
    previousId: row.previous_id,
    refused: row.refused === true,
  };
}

/** Health from the seconds since the last heartbeat. */
export function hostHealth(
  silentFor: number,
  stopped: boolean,
  timing: Pick<FleetTiming, 'heartbeatInterval' | 'heartbeatTimeout'>,
): HostHealth {
  if (stopped) return 'stopped';
  if (silentFor > timing.heartbeatTimeout) return 'gone';
  if (silentFor > timing.heartbeatInterval * 2) return 'late';
  return 'healthy';
}

const LIVE = `state IN ('queued', 'running')`;

/** Waits between the tries of a statement the database did not answer (ms): 0.25, 0.5, 1, 2, 2… s. */
export function retryDelayMs(failures: number): number {
  return Math.min(2000, 250 * 2 ** failures);
}

/**
 * The fleet's connection to its database: counts statements, notices when the database does not
 * answer, and sends again a statement whose effect is the same when it is. The fleet's tables are
 * read and written by the classes below, one per table group.
 */
class FleetConnection {
  /** Statements sent, for the benchmark's queries-per-run figure. */
  queries = 0;
  /** Since when (epoch ms) the database has not answered this process; undefined while it does. */
  private downSince: number | undefined;
  /** When (epoch ms) the database last answered again after it did not. */
  private upSince: number;
  /** Statements sent so far: numbers them in order. */
  private sent = 0;
  /** The latest statement (by its number) the database answered. */
  private answered = 0;
  /** The statement whose failure set `downSince`: only a later one's answer ends the cut. */
  private downAt = 0;

  constructor(
    private readonly pool: pg.Pool,
    protected readonly timing: FleetTiming,
    /** The state's schema: names the wake-up a host listens for (wakeups.ts). */
    protected readonly schema = 'curupira',
    /**
     * Since when this process counts the database as reached (epoch ms; default now): a process
     * just started cannot tell a host that stopped beating from one the database was away for.
     */
    connectedSince = Date.now(),
  ) {
    this.upSince = connectedSince;
  }

  protected async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    this.queries += 1;
    this.sent += 1;
    const sent = this.sent;
    try {
      const result = await this.pool.query<R>(text, values);
      // An answer to a statement sent before the one whose failure said "down" tells nothing new.
      this.answered = Math.max(this.answered, sent);
      if (this.downSince !== undefined && sent > this.downAt) {
        this.downSince = undefined;
        this.upSince = Date.now();
      }
      return result.rows;
    } catch (error) {
      // A failure of a statement sent before one that was answered is old news: it was sent into a
      // cut that has ended (its broken connection may report only now).
      if (isConnectionError(error) && sent > this.answered && this.downSince === undefined) {
        this.downSince = Date.now();
        this.downAt = sent;
      }
      throw error;
    }
  }

  /**
   * Since when this process has not reached the database (an ISO time), or undefined while it does:
   * what the board and `status` say.
   */
  unreachableSince(): string | undefined {
    return this.downSince === undefined ? undefined : new Date(this.downSince).toISOString();
  }

  /**
   * Seconds this process has reached the database without a break (since its start, or since the
   * database answered again after a cut): a host's silence is not counted beyond it, since its
   * heartbeats could not land while nobody could reach the database.
   */
  connectedFor(): number {
    if (this.downSince !== undefined) return 0;
    return (Date.now() - this.upSince) / 1000;
  }

  /**
   * A statement that may be sent again (its effect is the same when it is): tried again while the
   * database does not answer, for up to `withinMs`.
   */
  protected async retried<T>(
    action: () => Promise<T>,
    withinMs = this.timing.heartbeatTimeout * 1000,
  ): Promise<T> {
    const until = Date.now() + withinMs;
    for (let failures = 0; ; failures += 1) {
      try {
        return await action();
      } catch (error) {
        if (!isConnectionError(error) || Date.now() >= until) throw error;
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs(failures)));
      }
    }
  }
}

/** The hosts of the fleet (`fleet_hosts`): heartbeats, the claim of a host name, health, wake-ups. */
class FleetHostsDb extends FleetConnection {
  /** Records a heartbeat (database time); a new instance of the same host replaces the old row. */
  async beat(host: HostBeat): Promise<void> {
    await this.query(UPSERT_HOST, beatValues(host));
  }

  /**
   * Takes the host name for this process: true when the row is now this instance's. The name is
   * taken only from `previous` (the instance the caller found there and judged dead), from a
   * process that stopped cleanly, or from one silent for `heartbeat_timeout`; a live holder keeps
   * it, whatever two starting processes race for.
   */
  async claimHost(host: HostBeat, previous: string | undefined): Promise<boolean> {
    const rows = await this.query(
      `${UPSERT_HOST}
       WHERE fleet_hosts.instance = EXCLUDED.instance OR fleet_hosts.instance = $12
          OR fleet_hosts.stopped_at IS NOT NULL
          OR fleet_hosts.heartbeat_at < now() - make_interval(secs => $11)
       RETURNING name`,
      [...beatValues(host), this.timing.heartbeatTimeout, previous ?? null],
    );
    return rows.length > 0;
  }

  /** The row of a host name, as a process about to claim it reads it; undefined when there is none. */
  async hostRow(name: string): Promise<HostRow | undefined> {
    const rows = await this.query<{
      instance: string;
      pid: number;
      machine: string | null;
      heartbeat_at: Date;
      silent_for: number;
      stopped: boolean;
    }>(
      `SELECT instance, pid, machine, heartbeat_at, stopped_at IS NOT NULL AS stopped,
         EXTRACT(EPOCH FROM (now() - heartbeat_at))::float8 AS silent_for
       FROM fleet_hosts WHERE name = $1`,
      [name],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      instance: row.instance,
      pid: row.pid,
      machine: row.machine,
      heartbeatAt: row.heartbeat_at.toISOString(),
      silentFor: row.silent_for,
      stopped: row.stopped,
    };
  }

  /** A clean stop: the host's row says so (its running jobs wait `resume_grace` for it). */
  async stopped(name: string, instance: string): Promise<void> {
    await this.retried(() =>
      this.query(
        'UPDATE fleet_hosts SET stopped_at = now(), polling = false WHERE name = $1 AND instance = $2',
        [name, instance],
      ),
    );
  }

  async hosts(): Promise<FleetHost[]> {
    const rows = await this.query<{
      name: string;
      role: FleetRole;
      pid: number;
      instance: string;
      version: string;
      started_at: Date;
      heartbeat_at: Date;
      capacity: number;
      checkouts: string;
      polling: boolean;
      stopped_at: Date | null;
      capabilities: string | null;
      machine: string | null;
      silent_for: number;
      load: number;
    }>(
      `SELECT h.*, EXTRACT(EPOCH FROM (now() - h.heartbeat_at))::float8 AS silent_for,
         (SELECT count(*)::int FROM fleet_dispatches d WHERE d.host = h.name AND d.${LIVE}) AS load
       FROM fleet_hosts h ORDER BY h.name`,
    );
    return rows
      .map((row) => ({
        name: row.name,
        role: row.role,
        pid: row.pid,
        instance: row.instance,
        version: row.version,
        startedAt: row.started_at.toISOString(),
        heartbeatAt: row.heartbeat_at.toISOString(),
        capacity: row.capacity,
        load: row.load,
        checkouts: parseCheckouts(row.checkouts),
        polling: row.polling,
        capabilities: parseCapabilities(row.capabilities),
        machine: row.machine,
        stoppedAt: iso(row.stopped_at),
        health: hostHealth(row.silent_for, row.stopped_at !== null, this.timing),
      }))
      .map((host) => ({
        ...host,
        // A dead or frozen poller's row still says `polling`: only a live holder polls.
        polling: host.polling && (host.health === 'healthy' || host.health === 'late'),
      }));
  }

  /** Wakes a host that listens for its jobs (a lost notification only delays it to its fallback fetch). */
  async wake(host: string): Promise<void> {
    await this.query('SELECT pg_notify($1, $2)', [JOBS_CHANNEL, wakePayload(this.schema, host)]);
  }
}

/**
 * The fleet's state in PostgreSQL: its hosts (above), and the dispatches, their results and
 * transcripts, cancel requests and the waiting list.
 */
export class FleetDb extends FleetHostsDb implements FleetView {
  // ---- Dispatches ----

  /**
   * Records a dispatch; null when the task already has a live one (the database refused a second),
   * `'fenced'` when `fence` is given and its session no longer holds the poller lock (this process
   * is not the poller any more: src/fleet/election.ts).
   */
  async insertDispatch(init: DispatchInit): Promise<DispatchRecord | null>;
  async insertDispatch(
    init: DispatchInit,
    fence: PollerFence | undefined,
  ): Promise<DispatchRecord | null | 'fenced'>;
  async insertDispatch(init: DispatchInit, fence?: PollerFence): Promise<DispatchRecord | null | 'fenced'> {
    const values = [
      init.id,
      init.taskKey,
      init.automationId,
      init.repo,
      init.host,
      init.payload,
      init.previousId,
    ];
    let sent = false;
    const rows = await this.retried(async () => {
      if (sent) {
        // Sent before and unanswered: the row, if it was recorded, has this id.
        const found = await this.query<DispatchRow & { fenced?: boolean }>(
          'SELECT * FROM fleet_dispatches WHERE id = $1',
          [init.id],
        );
        if (found[0]) return found;
      }
      sent = true;
      return this.insertRows(values, fence);
    });
    const row = rows[0];
    if (row?.fenced) return 'fenced';
    return row?.id ? dispatchFromRow(row) : null;
  }

  private insertRows(values: unknown[], fence: PollerFence | undefined) {
    return this.query<DispatchRow & { fenced?: boolean }>(
      fence
        ? `WITH fence AS (SELECT ${LOCK_HELD_BY('$8::int', '$9::text')} AS held),
                inserted AS (
                  INSERT INTO fleet_dispatches (id, task_key, automation_id, repo, host, state, payload, previous_id)
                  SELECT $1::uuid, $2::text, $3::text, $4::text, $5::text, 'queued', $6::text, $7::uuid FROM fence WHERE held
                  ON CONFLICT DO NOTHING RETURNING *)
           SELECT inserted.*, NOT fence.held AS fenced FROM fence LEFT JOIN inserted ON true`
        : `INSERT INTO fleet_dispatches (id, task_key, automation_id, repo, host, state, payload, previous_id)
           VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7)
           ON CONFLICT DO NOTHING RETURNING *`,
      fence ? [...values, fence.pid, fence.lockName] : values,
    );
  }

  /** The task's dispatch that no poller settled yet (live, or done and waiting for its bookkeeping). */
  async unsettledFor(taskKey: string): Promise<DispatchRecord | undefined> {
    const rows = await this.query<DispatchRow>(
      `SELECT * FROM fleet_dispatches WHERE task_key = $1 AND settled_at IS NULL AND state <> 'taken_back'
       ORDER BY enqueued_at DESC LIMIT 1`,
      [taskKey],
    );
    return rows[0] ? dispatchFromRow(rows[0]) : undefined;
  }

  async liveDispatches(): Promise<DispatchRecord[]> {
    const rows = await this.query<DispatchRow>(
      `SELECT * FROM fleet_dispatches WHERE settled_at IS NULL AND state <> 'taken_back' ORDER BY enqueued_at, id`,
    );
    return rows.map(dispatchFromRow);
  }

  /** Payloads of unsettled dispatches, for a poller taking over. */
  async unsettledPayloads(): Promise<{ dispatch: DispatchRecord; payload: string }[]> {
    const rows = await this.query<DispatchRow>(
      `SELECT * FROM fleet_dispatches WHERE settled_at IS NULL AND state <> 'taken_back' ORDER BY enqueued_at, id`,
    );
    return rows.map((row) => ({ dispatch: dispatchFromRow(row), payload: row.payload }));
  }

  /**
   * The task of each task key's newest dispatch that ran (its run started): what a poller taking
   * over counts as already dispatched.
   */
  async ranPayloads(): Promise<string[]> {
    const rows = await this.query<{ payload: string }>(
      `SELECT DISTINCT ON (d.task_key) d.payload FROM fleet_dispatches d JOIN runs r ON r.id = d.run_id
       WHERE d.state = 'done' AND r.started_at IS NOT NULL ORDER BY d.task_key, d.enqueued_at DESC`,
    );
    return rows.map((row) => row.payload);
  }

  /**
   * Deletes settled dispatches older than `days`, except each task's latest run that started (what
   * `ranPayloads` gives a new poller): the table stays about one row per task, not one per dispatch
   * for ever. Returns how many went.
   */
  async pruneDispatches(days: number): Promise<number> {
    const rows = await this.query(
      `DELETE FROM fleet_dispatches d
        WHERE d.settled_at IS NOT NULL AND d.settled_at < now() - make_interval(days => $1)
          AND d.id NOT IN (
            SELECT DISTINCT ON (k.task_key) k.id FROM fleet_dispatches k JOIN runs r ON r.id = k.run_id
             WHERE k.state = 'done' AND r.started_at IS NOT NULL ORDER BY k.task_key, k.enqueued_at DESC)
       RETURNING d.id`,
      [days],
    );
    // A transcript goes with its run (the run history keeps history_limit runs per automation).
    await this.query(
      'DELETE FROM fleet_transcripts t WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = t.run_id)',
    );
    return rows.length;
  }

  /** Keeps a run's transcript (its agent's output, as the file on the worker holds it). */
  async saveTranscript(runId: string, host: string, content: string): Promise<void> {
    await this.query(
      `INSERT INTO fleet_transcripts (run_id, host, content) VALUES ($1, $2, $3)
       ON CONFLICT (run_id) DO UPDATE SET host = EXCLUDED.host, content = EXCLUDED.content, saved_at = now()`,
      [runId, host, content],
    );
  }

  /** A run's transcript as a worker saved it; undefined when none was. */
  async transcript(runId: string): Promise<string | undefined> {
    const rows = await this.query<{ content: string }>(
      'SELECT content FROM fleet_transcripts WHERE run_id = $1',
      [runId],
    );
    return rows[0]?.content;
  }

  /** States of some dispatches in one statement (the poller's watch of what it handed out). */
  async states(ids: readonly string[]): Promise<Map<string, DispatchRecord>> {
    if (ids.length === 0) return new Map();
    const rows = await this.query<DispatchRow>('SELECT * FROM fleet_dispatches WHERE id = ANY($1::uuid[])', [
      ids,
    ]);
    return new Map(rows.map((row) => [row.id, dispatchFromRow(row)]));
  }

  async get(id: string): Promise<{ dispatch: DispatchRecord; payload: string } | undefined> {
    const rows = await this.query<DispatchRow>('SELECT * FROM fleet_dispatches WHERE id = $1', [id]);
    return rows[0] ? { dispatch: dispatchFromRow(rows[0]), payload: rows[0].payload } : undefined;
  }

  /** A worker takes its queued dispatch; undefined when it is no longer queued for this host. */
  async claim(id: string, host: string): Promise<{ dispatch: DispatchRecord; payload: string } | undefined> {
    let sent = false;
    return this.retried(async () => {
      if (sent) {
        // Sent before and unanswered: a claim that took effect left the row running, not started by anyone.
        const rows = await this.query<DispatchRow>('SELECT * FROM fleet_dispatches WHERE id = $1', [id]);
        const row = rows[0];
        if (row && row.host === host && row.state === 'running' && row.run_id === null)
          return { dispatch: dispatchFromRow(row), payload: row.payload };
      }
      sent = true;
      const rows = await this.query<DispatchRow>(
        `UPDATE fleet_dispatches SET state = 'running', started_at = now()
         WHERE id = $1 AND host = $2 AND state = 'queued' RETURNING *`,
        [id, host],
      );
      return rows[0] ? { dispatch: dispatchFromRow(rows[0]), payload: rows[0].payload } : undefined;
    });
  }

  /** This host's dispatches still queued or running (a worker's start, or its return). */
  async own(host: string): Promise<{ dispatch: DispatchRecord; payload: string }[]> {
    const rows = await this.query<DispatchRow>(
      `SELECT * FROM fleet_dispatches WHERE host = $1 AND ${LIVE} ORDER BY enqueued_at, id`,
      [host],
    );
    return rows.map((row) => ({ dispatch: dispatchFromRow(row), payload: row.payload }));
  }

  /** Ids of this host's running dispatches an operator cancelled. */
  async cancelRequests(host: string): Promise<string[]> {
    const rows = await this.query<{ id: string }>(
      `SELECT id FROM fleet_dispatches WHERE host = $1 AND state = 'running' AND cancel_requested`,
      [host],
    );
    return rows.map((row) => row.id);
  }

  async requestCancel(id: string): Promise<void> {
    await this.query(`UPDATE fleet_dispatches SET cancel_requested = true WHERE id = $1 AND ${LIVE}`, [id]);
  }

  /** The run a dispatch started (recorded as soon as the worker knows it). False: no longer this host's. */
  async setRun(id: string, host: string, runId: string): Promise<boolean> {
    const rows = await this.retried(() =>
      this.query(
        `UPDATE fleet_dispatches SET run_id = $3 WHERE id = $1 AND host = $2 AND state = 'running' RETURNING id`,
        [id, host, runId],
      ),
    );
    return rows.length > 0;
  }

  /** The worker finished it; false when it was taken back meanwhile (the result is not this host's to give). */
  async finish(
    id: string,
    host: string,
    runId: string | null,
    detail: string | null = null,
  ): Promise<boolean> {
    let sent = false;
    return this.retried(async () => {
      // Sent before and unanswered: it may have taken effect; the row says whether it did.
      if (sent) {
        const rows = await this.query<DispatchRow>('SELECT * FROM fleet_dispatches WHERE id = $1', [id]);
        const row = rows[0];
        if (row && row.host === host && row.state === 'done') return true;
      }
      sent = true;
      const rows = await this.query(
        `UPDATE fleet_dispatches SET state = 'done', finished_at = now(), run_id = COALESCE($3, run_id), detail = $4
         WHERE id = $1 AND host = $2 AND state = 'running' RETURNING id`,
        [id, host, runId, detail],
      );
      return rows.length > 0;
    });
  }

  /**
   * The worker refuses a dispatch it cannot run (`reason`): it is taken back at once, never
   * started, and its poller places it elsewhere. False when it is no longer this host's.
   */
  async refuse(id: string, host: string, reason: string): Promise<boolean> {
    const rows = await this.query(
      `UPDATE fleet_dispatches SET state = 'taken_back', refused = true, started_at = NULL,
         finished_at = now(), settled_at = now(), detail = $3
       WHERE id = $1 AND host = $2 AND ${LIVE} RETURNING id`,
      [id, host, `refused by ${host}: ${reason}`],
    );
    return rows.length > 0;
  }

  // ---- Tasks no live worker can run ----

  /** Records (or updates the reason of) a task waiting because no live worker can run it. */
  async setWaiting(task: Omit<WaitingTask, 'since'>): Promise<void> {
    await this.query(
      `INSERT INTO fleet_waiting (task_key, automation_id, repo, reason) VALUES ($1, $2, $3, $4)
       ON CONFLICT (task_key) DO UPDATE SET reason = EXCLUDED.reason,
         since = CASE WHEN fleet_waiting.reason = EXCLUDED.reason THEN fleet_waiting.since ELSE now() END`,
      [task.taskKey, task.automationId, task.repo, task.reason],
    );
  }

  /** The task waits no more (placed, or given up); with no key, every task (a new poller starts). */
  async clearWaiting(taskKey?: string): Promise<void> {
    if (taskKey === undefined) await this.query('DELETE FROM fleet_waiting');
    else await this.query('DELETE FROM fleet_waiting WHERE task_key = $1', [taskKey]);
  }

  async waiting(): Promise<WaitingTask[]> {
    const rows = await this.query<{
      task_key: string;
      automation_id: string;
      repo: string;
      reason: string;
      since: Date;
    }>('SELECT * FROM fleet_waiting ORDER BY since, task_key');
    return rows.map((row) => ({
      taskKey: row.task_key,
      automationId: row.automation_id,
      repo: row.repo,
      reason: row.reason,
      since: row.since.toISOString(),
    }));
  }

  /**
   * The poller did the after-run work of a done (or taken back) dispatch. With `fence`, only while
   * its session holds the poller lock: false when it did not (nothing was written).
   */
  async settle(id: string, fence?: PollerFence): Promise<boolean> {
    const rows = await this.retried(() =>
      this.query(
        `UPDATE fleet_dispatches SET settled_at = now() WHERE id = $1 AND settled_at IS NULL${fence ? ` AND ${LOCK_HELD_BY('$2::int', '$3::text')}` : ''} RETURNING id`,
        fence ? [id, fence.pid, fence.lockName] : [id],
      ),
    );
    return rows.length > 0;
  }

  /**
   * Takes a live dispatch back from its host; undefined when it is no longer live (or, with
   * `fence`, when this poller's session no longer holds the lock).
   */
  async takeBack(id: string, detail: string, fence?: PollerFence): Promise<DispatchRecord | undefined> {
    const rows = await this.query<DispatchRow>(
      `UPDATE fleet_dispatches SET state = 'taken_back', finished_at = now(), settled_at = now(), detail = $2
       WHERE id = $1 AND ${LIVE}${fence ? ` AND ${LOCK_HELD_BY('$3::int', '$4::text')}` : ''} RETURNING *`,
      fence ? [id, detail, fence.pid, fence.lockName] : [id, detail],
    );
    return rows[0] ? dispatchFromRow(rows[0]) : undefined;
  }

  /** Live dispatches of hosts that missed their heartbeat or stopped, with how long ago. */
  async silentHostDispatches(): Promise<LostCandidate[]> {
    const rows = await this.query<
      DispatchRow & { silent_for: number | null; stopped_for: number | null; heartbeat_at: Date | null }
    >(
      `SELECT d.*,
         CASE WHEN h.heartbeat_at IS NOT NULL
           THEN EXTRACT(EPOCH FROM (now() - greatest(h.heartbeat_at, pg_postmaster_start_time())))::float8 END AS silent_for,
         CASE WHEN h.stopped_at IS NOT NULL
           THEN EXTRACT(EPOCH FROM (now() - greatest(h.stopped_at, pg_postmaster_start_time())))::float8 END AS stopped_for
       FROM fleet_dispatches d LEFT JOIN fleet_hosts h ON h.name = d.host
       WHERE d.${LIVE} AND (h.name IS NULL OR h.stopped_at IS NOT NULL OR h.heartbeat_at < now() - make_interval(secs => $1))
       ORDER BY d.enqueued_at`,
      [this.timing.heartbeatTimeout],
    );
    // Silence is counted only while this process reached the database: a host could not beat
    // while nobody could (a restarted server, a cut network), and it gets heartbeat_timeout again.
    const reached = this.connectedFor();
    return rows.map((row) => ({
      dispatch: dispatchFromRow(row),
      silentFor: row.silent_for === null ? null : Math.min(row.silent_for, reached),
      stoppedFor: row.stopped_for === null ? null : Math.min(row.stopped_for, reached),
    }));
  }

  /** Live dispatches per host, in one statement (the poller's placement). */
  async loads(): Promise<Map<string, number>> {
    const rows = await this.query<{ host: string; load: number }>(
      `SELECT host, count(*)::int AS load FROM fleet_dispatches WHERE ${LIVE} GROUP BY host`,
    );
    return new Map(rows.map((row) => [row.host, row.load]));
  }
}

const UPSERT_HOST = `INSERT INTO fleet_hosts (name, role, pid, instance, version, started_at, heartbeat_at, capacity, checkouts, polling, stopped_at, capabilities, machine)
       VALUES ($1, $2, $3, $4, $5, now(), now(), $6, $7, $8, NULL, $9, $10)
       ON CONFLICT (name) DO UPDATE SET
         role = EXCLUDED.role, pid = EXCLUDED.pid, version = EXCLUDED.version,
         started_at = CASE WHEN fleet_hosts.instance = EXCLUDED.instance THEN fleet_hosts.started_at ELSE now() END,
         instance = EXCLUDED.instance, heartbeat_at = now(), capacity = EXCLUDED.capacity,
         checkouts = EXCLUDED.checkouts, polling = EXCLUDED.polling, stopped_at = NULL,
         capabilities = EXCLUDED.capabilities, machine = EXCLUDED.machine`;

function beatValues(host: HostBeat): unknown[] {
  return [
    host.name,
    host.role,
    host.pid,
    host.instance,
    host.version,
    host.capacity,
    JSON.stringify(host.checkouts),
    host.polling,
    host.capabilities === null ? null : JSON.stringify(host.capabilities),
    host.machine,
  ];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** A host's advertised capabilities; null when it advertised none (or the text does not parse). */
function parseCapabilities(text: string | null): HostCapabilities | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as Record<string, unknown> | null;
    if (typeof value !== 'object' || value === null) return null;
    return {
      automations: strings(value.automations),
      repositories: strings(value.repositories),
      providers: strings(value.providers),
      sandbox: 'none',
    };
  } catch {
    return null;
  }
}

function parseCheckouts(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/** A pool on the state URL's schema, with deadlines: a host cut off from the database finds out. */
export function fleetPool(connectionString: string, schema: string, max = 4): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: 5000,
    query_timeout: 10_000,
    keepAlive: true,
    options: `-c search_path=${schema}`,
    application_name: 'curupira-fleet',
  });
  // An idle connection that breaks (the server restarted) must not crash the process.
  pool.on('error', () => {});
  return pool;
}
