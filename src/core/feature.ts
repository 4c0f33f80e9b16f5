/**
 * The lifecycle contract of a cross-cutting feature (screening, budgets, leases, GitHub writes,
 * delivery, retries, notifications, telemetry…). The kernel (src/engine/) runs feeds, the
 * scheduler and the runs; at fixed points it asks or tells every registered feature, in the order
 * of the feature list (src/features.ts), through the optional hooks below. A feature reaches the
 * kernel only through the narrow `KernelPort`. The kernel imports no feature; only the
 * composition roots import the feature list. No I/O here: types only.
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import type { SessionRecord } from '../store/types.js';
import type { Clock } from './clock.js';
import type { RunRecord, ScreeningFinding, Task } from './types.js';

/** What screening recorded of a task's text, carried onto its run. */
export interface RunScreening {
  findings: readonly ScreeningFinding[];
  reason: string;
  digest: string;
}

/**
 * A gate's answer before a run: `go` (optionally with the task as screened and what screening
 * found), `hold` (not now: nothing is recorded; `previous` is the earlier run that still holds it,
 * `forget` lets the next poll offer the item again), or `record` (the task ends here with a
 * finished run such as blocked, escalated or skipped, already in the store).
 */
export type GateVerdict =
  | { readonly kind: 'go'; readonly task?: Task; readonly screening?: RunScreening }
  | { readonly kind: 'hold'; readonly previous?: RunRecord; readonly forget?: boolean }
  | { readonly kind: 'record'; readonly run: RunRecord };

export interface GateRequest {
  automation: ResolvedAutomation;
  task: Task;
  /** The task continues a saved session (it was screened when its session started). */
  resumed: boolean;
  signal: AbortSignal;
}

/** A finished run handed to the after-run hooks. */
export interface RunOutcome {
  automation: ResolvedAutomation;
  task: Task;
  run: RunRecord;
  /** An operator or reconciliation cancelled it (its reason was rewritten after it finished). */
  renoted: boolean;
  /** Who cancelled it: an operator (the board, the API, `curupira cancel`) or reconciliation (its item no longer matches). */
  cancelledBy?: 'operator' | 'unmatched';
}

/** A scheduler candidate, as the `holds` hook sees it. */
export interface Candidate {
  automationId: string;
  /** The provider of the automation's profile. */
  provider: string;
  /** A remediation of a delivered pull request. */
  remediation: boolean;
}

/** What a feature may ask of the kernel. */
export interface KernelPort {
  readonly mode: 'drain' | 'watch';
  readonly clock: Clock;
  /** The settings in force now (they change on reload). */
  settings(): Settings;
  /** Offers a task to the scheduler (`skipped`: its automation is not configured). */
  offer(
    automationId: string,
    task: Task,
    options?: OfferOptions,
  ): 'queued' | 'updated' | 'busy' | 'duplicate' | 'full' | 'skipped';
  /** Offers saved sessions to resume, except those whose item no longer matches (kept for a person). */
  resume(sessions: readonly SessionRecord[]): Promise<void>;
  /** Free slots in the scheduler now. */
  capacity(): number;
  /**
   * The event triggers forget an item so that a later poll offers it again: `task` forgets that
   * version of it, else every version with the key; `automationId` limits it to one automation;
   * `pollNow` polls the feeds that forgot it at once.
   */
  forget(taskKey: string, options?: { automationId?: string; task?: Task; pollNow?: boolean }): void;
  /** An automation's feed polls at once (a webhook, a pull request to develop again). */
  pollSoon(automationId: string): void;
  /** Wakes the watch loop. */
  wake(): void;
  /** Pauses an automation (remembered across restarts), with the reason. */
  pause(automationId: string, reason: string): Promise<void>;
  /** Whether an automation is paused or disabled now. */
  paused(automationId: string): boolean;
  /** Whether a task of this key runs now in this process. */
  running(taskKey: string): boolean;
  /** A stop or a drain was asked: no new work. */
  winding(): boolean;
  /** Aborts when a stop or a drain is asked (for GitHub reads in ticks). */
  readonly pollSignal: AbortSignal;
}

export interface OfferOptions {
  /** Continue this saved session. */
  resume?: SessionRecord;
  /** A retry: which try, and the run it follows. */
  retry?: { attempt: number; retryOf: string };
  /** The inputs of the run (issue 32): a retry keeps those of the run it follows. */
  inputs?: Readonly<Record<string, string>>;
}

/**
 * A feature: every hook is optional. `gate` hooks run in list order before a new run (the first
 * answer other than `go` wins); `runEnded` hooks pass the run record along the list (each may
 * return it updated: counted, planned for a retry); `afterRun` hooks react to the final record;
 * `beforePoll` and `tick` run once per watch round, before and after the polls.
 */
export interface Feature<RunDeps = never, Status = unknown> {
  readonly name: string;
  /** Before the first round: state a previous process left (budgets, retries). */
  start?(): Promise<void>;
  /** After saved sessions were offered: `interrupted` are the runs a dead process left unfinished. */
  started?(interrupted: readonly RunRecord[], resumed: (taskKey: string) => boolean): Promise<void>;
  /** A task leaves the queue to run (before its gates); `retryOf` is the run it retries. */
  dispatched?(task: Task, retryOf: string | undefined): void;
  gate?(request: GateRequest): Promise<GateVerdict>;
  /** The agent of a run started (its record says `running`). */
  launched?(automation: ResolvedAutomation, task: Task, run: RunRecord): void;
  runEnded?(outcome: RunOutcome): Promise<RunRecord>;
  afterRun?(outcome: RunOutcome): Promise<void>;
  /** Whatever became of a dispatched run, even one that could not be recorded (release what it held). */
  finished?(automationId: string, task: Task): Promise<void>;
  /** A person asked for a finished run's task again (Retry on the board, the API): lift what holds it. */
  retried?(run: RunRecord): Promise<void>;
  /** A remediation run of a delivered pull request finished. */
  remediated?(automationId: string, run: RunRecord): void;
  /** A feed was polled (`error`: the poll failed). */
  polled?(automationId: string, startedAt: number, found: number, error?: string): void;
  /** An automation was paused (`reason`: automatically, else by an operator). */
  paused?(automationId: string, reason: string | undefined): void;
  beforePoll?(): Promise<void>;
  tick?(): Promise<void>;
  /** Epoch ms at which the watch loop must wake for this feature (a retry due), if any. */
  wakeAt?(now: number): number | undefined;
  /** True while a candidate must wait in the queue (its provider or automation is parked). */
  holds?(candidate: Candidate): boolean;
  /** True while an automation's feed must not be polled (parked by a budget). */
  parks?(automationId: string): boolean;
  /** True when a saved session of this task must wait for the feature (a retry due later). */
  defers?(taskKey: string): boolean;
  /** What the executor needs of this feature for every run (claims, meters, writes…). */
  runDeps?(): RunDeps | undefined;
  /** The feature's part of an automation's status (for the board and `curupira status`). */
  status?(automation: ResolvedAutomation): Partial<Status>;
  /** The feature's part of the engine's status line (parked providers, retries waiting). */
  engineStatus?(): Record<string, unknown>;
  /** The engine returns: flush what is pending (bounded), release what is held. */
  stop?(): Promise<void>;
}

/** What a claim said: nothing to claim, the item is ours until `release`, or not ours (skipped). */
export type Claim =
  | { kind: 'none' }
  | { kind: 'held'; release(run: RunRecord): Promise<void> }
  | { kind: 'refused'; reason: string };
