/**
 * The fleet (issue 17): several hosts share one PostgreSQL state. One elected poller discovers and
 * enqueues; workers take jobs (pg-boss) and run agents. These are the shapes every surface shows.
 */

/** What a fleet process does: `all` polls when elected and works; `poller` only polls; `worker` only works. */
export type FleetRole = 'all' | 'poller' | 'worker';

/** Health of a host, from its last heartbeat (database time). */
export type HostHealth = 'healthy' | 'late' | 'gone' | 'stopped';

/**
 * What a worker can run, as it advertises it on every heartbeat: the poller places a job only on a
 * host whose capabilities cover it (src/fleet/placement.ts).
 */
export interface HostCapabilities {
  /** Ids of the automations its settings file configures. */
  automations: string[];
  /** `owner/name` of the repositories those automations work on. */
  repositories: string[];
  /**
   * Automations whose items come from any repository (a project board's cards, without `repo`):
   * their jobs are matched by automation alone. Absent in an older host's heartbeat.
   */
  anyRepository?: string[];
  /** Agent providers its automations' profiles use. */
  providers: string[];
  /** The sandbox it runs agents in: `none` for now (no job asks for one yet). */
  sandbox: 'none';
}

/** One fleet process as its heartbeat row records it (table `fleet_hosts`). */
export interface FleetHost {
  /** `[settings.fleet] host`, or the machine's host name. */
  name: string;
  role: FleetRole;
  pid: number;
  /** Tells two starts of one host apart. */
  instance: string;
  /** curupira version it runs. */
  version: string;
  startedAt: string;
  heartbeatAt: string;
  /** Agents it may run at once (`host_max_active_tasks`); 0 for a poller. */
  capacity: number;
  /** Jobs it holds now (queued for it or running on it). */
  load: number;
  /** `owner/name` of repositories it has a checkout of (repository affinity). */
  checkouts: string[];
  /** True while it holds the poller lock. */
  polling: boolean;
  /** What it can run; null from a host that does not advertise it (it is given any job). */
  capabilities: HostCapabilities | null;
  /** The machine it runs on (its operating system's host name); null when not recorded. */
  machine: string | null;
  /** When it stopped cleanly; null while it runs (or died). */
  stoppedAt: string | null;
  /** From `heartbeatAt` against the database's clock and `heartbeat_timeout`. */
  health: HostHealth;
}

/** Where a dispatched task stands (table `fleet_dispatches`). */
export type DispatchState = 'queued' | 'running' | 'done' | 'taken_back';

/** One task handed to one host: the pg-boss job's id is this record's id. */
export interface DispatchRecord {
  id: string;
  taskKey: string;
  automationId: string;
  /** `owner/name`. */
  repo: string;
  host: string;
  state: DispatchState;
  /** The run that the host recorded for it, once started. */
  runId: string | null;
  enqueuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** When the poller did its after-run work (counting, retries, schedule marks). */
  settledAt: string | null;
  /** A word on the state (why it was taken back…). */
  detail: string | null;
  /** The dispatch this one took over from (a restart on another host). */
  previousId: string | null;
  /** Its host refused it (it cannot run it): placed again elsewhere at once. */
  refused: boolean;
}

/** A task the poller cannot place because no live worker can run it (table `fleet_waiting`). */
export interface WaitingTask {
  taskKey: string;
  automationId: string;
  /** `owner/name`. */
  repo: string;
  /** Why no live worker can run it, e.g. `no live worker has automation extra`. */
  reason: string;
  since: string;
}

/** What the board, the API and `curupira status` read about the fleet. */
export interface FleetView {
  hosts(): Promise<FleetHost[]>;
  /** Dispatches not yet settled, oldest first. */
  liveDispatches(): Promise<DispatchRecord[]>;
  /** A run's transcript as the worker that ran it shared it (undefined when none was). */
  transcript(runId: string): Promise<string | undefined>;
  /** Tasks waiting because no live worker can run them, oldest first. */
  waiting(): Promise<WaitingTask[]>;
  /** Since when (ISO time) this process has not reached the database; undefined while it does. */
  unreachableSince?(): string | undefined;
}
