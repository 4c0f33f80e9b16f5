/**
 * The contract of a trigger. Each folder's `index.ts` exports one `TriggerDefinition`: the schema of
 * its automation table, the prompt fields it provides, how `validate --explain` describes it, how
 * its feed is built, and what `doctor` checks for it. Callers use these hooks and never switch on a
 * trigger type name; adding a trigger is one folder plus one line in `registry.ts`.
 */
import type { z } from 'zod';
import type { AnyAutomation, ResolvedAutomation } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { GitHubItemKind, PinnedCommit, PullRequestHead } from '../core/code-source.js';
import type { Item, RunRecord, RunStatus, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { Logger } from '../log.js';
import type { ServiceWrite, Store, WriteInit } from '../store/types.js';
import type { ServiceKit } from './service.js';
import type { SourceContext, TriggerSource } from './source.js';

export type { TriggerType } from './registry.js';

export interface ExplainLine {
  label: string;
  value: string;
}

export interface PollContext {
  store: Store;
  clock: Clock;
  log: Logger;
  /** Items per poll (`batch_size`). */
  limit: number;
  /** Look without claiming or recording anything (`run --dry-run`). */
  preview: boolean;
  signal?: AbortSignal;
}

/** One automation's source of tasks, as the engine polls it (built by the trigger's `createFeed`). */
export interface Feed {
  readonly automation: ResolvedAutomation;
  /** When this feed wants to be polled next (epoch ms). */
  nextPollAt: number;
  /** New tasks (already-dispatched fingerprints left out). */
  poll(context: PollContext): Promise<Task[]>;
  /** The task was accepted by the scheduler: never offer it again in this process. */
  markDispatched(task: Task): void;
  /** A run of one of this feed's tasks ended. */
  runFinished(task: Task, context: PollContext): Promise<void>;
  /** Matching items the last poll did not reach (beyond `batch_size`); 0 when none or unknown. */
  readonly waiting?: number;
  /** Open items matching the trigger at the last poll, when the source reports it. */
  readonly matching?: number | undefined;
  /**
   * True when this task's item was seen matching at `since` or later: in a search's results, or
   * unchanged since such a search (a change probe answered "not modified"). Reconciliation need
   * not read such an item again.
   */
  matchedSince?(taskKey: string, since: number): boolean;

  // Capabilities: what a feed can do beyond polling. The kernel and the server ask for these,
  // never for a feed's class or its trigger's name.

  /**
   * Polls a source whose items change (issues, pull requests, cards): a webhook or "run now" polls
   * it at once, and a poller taking over counts what its predecessor dispatched as dispatched here.
   */
  readonly eventDriven?: boolean;
  /** Item memory (`once`, `ignore_backlog`): whether the baseline is taken, and when (the board). */
  readonly baseline?: { set: boolean; at: string | null } | undefined;
  /** Reads the baseline's state from the store, before the first poll. */
  loadBaseline?(store: Store): Promise<void>;
  /** Offers this task again on the next poll (a launch that never started the agent, an unmatched item). */
  forget?(task: Task): void;
  /** Offers the task with this key again on the next poll; false when it was never dispatched. */
  forgetKey?(key: string): boolean;
  /** The next poll searches, whatever a change probe says (a person asked: "Run now", `trigger`). */
  searchNow?(): void;
  /**
   * Fires from a schedule: the task of an occurrence at `at` ("run now" fires one at this instant;
   * retrying a run fires its `scheduledFor` occurrence again).
   */
  fire?(at: Date): Task;
  /**
   * The scans a person may ask for now, beyond what the feed's own polls find (a review watch's
   * `baseline`: "run a baseline now"); absent: none.
   */
  readonly scans?: readonly string[];
  /** Asks for one of `scans` at the next poll, which is made at once (the run starts even if the head was reviewed). */
  askScan?(scan: string): void;
  /** Called once when the engine starts, before any run can finish (a chain's baseline). */
  start?(context: PollContext): Promise<void>;
  /** A run of automation `automationId` settled (a chain polls at once after its upstream's). */
  settled?(automationId: string): void;
}

/** A schedule, as a trigger reads it from its table, for the engine's schedule feed. */
export interface ScheduleSpec {
  /** A five-field cron expression, in `timezone`. */
  readonly expr: string;
  readonly timezone: string;
  /** The first and last day it may fire (as written: a TOML date or a string). */
  readonly startDate?: string | Date | undefined;
  readonly endDate?: string | Date | undefined;
  /** What becomes of a fire noticed late (default `run`). */
  readonly missed?: 'run' | 'skip' | undefined;
  /** The item of the occurrence at `occurrence`; `missed` when it fired late. */
  item(occurrence: Date, missed: boolean): Item;
}

/** A chain, as a trigger reads it from its table, for the engine's chain feed. */
export interface ChainSpec {
  /** The automation whose finished runs start this one. */
  readonly upstream: string;
  /** The statuses of upstream runs that start it. */
  readonly statuses: readonly RunStatus[];
  /** Only upstream runs that reported this outcome start it (issue 32's `on = "<outcome>"`). */
  readonly outcome?: string | undefined;
  /** Whether an upstream run that changed nothing starts it; absent: only when the upstream does not deliver. */
  readonly onNoChanges?: 'fire' | 'skip' | undefined;
  /** What decides the chain, as text: a change takes a new baseline (older upstream runs no longer fire). */
  readonly identity: string;
  /**
   * The items of these upstream runs, in order; `name` says how each run's item reads to a person
   * (the registry's `runItemName`: `acme/api#12`, a project card's issue, a schedule's fire);
   * `delivered`, the branch and commit a run's delivery pushed, when it delivered.
   */
  items(
    runs: readonly RunRecord[],
    name: (run: RunRecord) => string,
    delivered?: (run: RunRecord) => { headBranch: string; headSha: string | null } | undefined,
  ): Promise<Item[]>;
}

/** What a watch finds when it looks (see `WatchSpec`). */
export type WatchLook =
  /** Nothing to do now (no commit yet, or a look that could not be made). */
  | undefined
  /** An item to run. */
  | { item: Item }
  /** An item recorded as a skipped run with `reason`, and no agent started (once per item key). */
  | { item: Item; skip: string };

/** A watch on something the trigger reads itself (a branch's head commit), for the engine's watch feed. */
export interface WatchSpec {
  /**
   * Looks once; `context.preview` set: must record nothing. `asked`: a scan a person asked for now
   * (one of `scans`), which the look answers with an item to run whatever the watch reviewed last.
   */
  look(context: PollContext, asked?: string): Promise<WatchLook>;
  /** The scans a person may ask for now (`baseline`); absent: none. */
  readonly scans?: readonly string[];
}

/**
 * The feeds the engine offers a trigger (passed in, so `src/triggers` never imports the engine at
 * run time). Intervals come from `[settings.polling]`.
 */
export interface FeedKit {
  /** Polls `source` every `poll_interval_seconds`, with the seed's backoff and item memory. */
  polled(automation: ResolvedAutomation, source: TriggerSource): Feed;
  /** Checks a schedule every `cron_poll_interval_seconds`, claiming due occurrences in the store. */
  schedule(automation: ResolvedAutomation, schedule: ScheduleSpec): Feed;
  /** Looks for finished upstream runs every `cron_poll_interval_seconds`. */
  chain(automation: ResolvedAutomation, chain: ChainSpec): Feed;
  /** Looks every `poll_interval_seconds` (review watches); one run at a time per item key. */
  watch(automation: ResolvedAutomation, watch: WatchSpec): Feed;
}

export interface FeedContext extends SourceContext {
  feeds: FeedKit;
}

/** What `doctor` says about one automation (its label is `automation <id>`). */
export interface TriggerCheck {
  ok: boolean;
  detail: string;
}

export interface DoctorContext {
  /** The GitHub client; only triggers whose check needs `github` may call it. */
  github(): GitHubClient;
  /** A source outside GitHub: its credential and HTTP (checks that need `service`). */
  service: ServiceKit;
  clock: Clock;
  log: Logger;
  /** Every automation of the settings file. */
  automations: readonly ResolvedAutomation[];
  /** The state file opened read-only (checks that need `state`); absent when missing or unreadable. */
  store?: Store;
  /** False when the state file exists but cannot be read. */
  storeReadable: boolean;
}

export interface DoctorHook<A extends AnyAutomation> {
  /**
   * What the check needs, which decides when doctor makes it: `github` after the token and API
   * checks (and only then is GitHub checked at all), `clock` right after, `service` (the trigger's
   * own service, reached with its own credential) next, `state` once the state file is open.
   */
  readonly needs: 'github' | 'clock' | 'service' | 'state';
  check(automation: A, context: DoctorContext): Promise<TriggerCheck>;
}

/** What screening reads of one task (an event trigger's item). */
export interface ScreenTarget {
  /** The issue or pull request whose comments and timeline are read; absent for a draft card. */
  source?: { repo: string; number: number };
  title: string;
  body: string;
  /** Login of the item's author, as the trigger read it. */
  author: string | null;
  /**
   * The GitHub repository (`owner/name`) whose permissions say how far to trust an actor the item
   * shows no association for (a commit's author); defaults to `source`'s.
   */
  repository?: string;
  /** A pull request's head branch name. */
  headBranch?: string;
  /** The labels the automation matches on (what `require_trusted_labeler` checks). */
  labels: readonly string[];
  /**
   * A source outside GitHub reads its item's author and newest comments itself (oldest first),
   * each actor's `association` mapped from the source's own roles onto GitHub's ladder (OWNER …
   * NONE) so that `min_author_association` and `trusted_authors` judge them alike. Absent: read
   * from GitHub (`source`) or from the target alone.
   */
  read?(signal?: AbortSignal): Promise<ScreenContext>;
}

/** One actor of a source's item, as screening judges it. */
export interface ScreenActor {
  login: string;
  bot: boolean;
  association?: string;
}

/** What a source outside GitHub says of its item: its author and newest comments, oldest first. */
export interface ScreenContext {
  author: ScreenActor | null;
  comments: { author: ScreenActor | null; createdAt: string; body: string }[];
}

/**
 * How screening treats a trigger's tasks: `unscreened` names why its text needs no screen
 * (schedules and chains carry no third-party text); `target` says what to read. A trigger with no
 * hook is screened on its item's title and body (fail closed).
 */
export type ScreeningHook<A extends AnyAutomation> =
  | { readonly unscreened: string }
  | { target(automation: A, task: Task): ScreenTarget };

/** The parts of a GitHub webhook payload a trigger reads to tell whether a delivery concerns it. */
export interface WebhookPayload {
  repository?: { full_name?: string };
  organization?: { login?: string };
  sender?: { login?: string };
  issue?: { pull_request?: unknown };
}

/** A trigger whose items GitHub announces by webhook: a delivery makes its automations poll at once. */
export interface WebhookHook<A extends AnyAutomation> {
  /** The `X-GitHub-Event` names that may concern it. */
  readonly events: readonly string[];
  /** Whether this delivery (of one of `events`) concerns the automation: its repository, its owner. */
  concerns(automation: A, event: string, payload: WebhookPayload): boolean;
}

/** Where the loader reports a problem of one automation table (key relative to the table). */
export interface ResolveContext {
  id: string;
  defaultTimezone: string;
  problem(key: string, message: string): void;
}

/**
 * `A` is the automation this trigger resolves to: a built-in trigger's hooks see their own table
 * (`AutomationFor<'cron'>`), so they need no cast. Hooks are methods, so a definition for one
 * automation type is usable wherever the registry holds them all.
 */
/**
 * What naming an item reads of a run (or of a task not run yet: `run --dry-run`); `itemUrl` where
 * the caller has it (a board card's issue, or its board for a draft).
 */
export type ItemRef = Pick<RunRecord, 'repo' | 'itemId' | 'scheduledFor'> &
  Partial<Pick<RunRecord, 'itemUrl'>>;

/** A `curupira mcp` server for one run's agent (`TriggerDefinition.agentTools`). */
export interface AgentTools {
  /** The server's name in the agent's configuration (letters, digits, `_` and `-`). */
  name: string;
  /** The arguments after `curupira mcp`. */
  args: string[];
  /** The commit a review's findings are pinned to (what `--commit` says in `args`). */
  commit?: string;
}

export interface TriggerDefinition<A extends AnyAutomation = ResolvedAutomation> {
  /** Canonical type, also the task type in identities and worktree names. */
  readonly type: string;
  /** Other spellings accepted in `trigger_type` (the seed's `plugins-py/…`). */
  readonly aliases: readonly string[];
  readonly description: string;
  /** The automation table's strict schema (shared fields included). */
  readonly schema: z.ZodType;
  /** Prompt fields this trigger adds to the common ones, in the order items list them. */
  readonly promptFields: readonly string[];
  /**
   * Prompt fields that carry text written by strangers: each is fenced in every prompt (and its
   * bodies capped) by `prompt/untrusted.ts`; declaring a field here is all it takes.
   */
  readonly untrustedFields: readonly string[];
  /**
   * The prompt fields that name its item (its number, title and body). A prompt that reads none
   * of them (nor `task_number`, `task_title`, `task_body`) gets the item's number, title and fenced
   * body appended (`itemAppendix`). Absent: the trigger has no item (schedules, chains, reviews).
   */
  readonly itemPlaceholders?: readonly string[];
  /** A key that, in a table without `trigger_type`, selects this trigger (`schedule` → cron). */
  readonly impliedBy?: string;
  /**
   * The key of its table that names the automation this one runs after (chains), so the loader can
   * check that it exists and that no chain loops; absent for triggers that follow no other automation.
   */
  readonly upstreamKey?: string;
  /** How a problem names a table of this trigger (`an issue trigger`); absent: `a <type> trigger`. */
  readonly describedAs?: string;
  /**
   * What its tasks' items are on GitHub: an `issue` or a `pull-request` numbered by the task's id in
   * its repository (result comments, state labels and leases go on it; a merged pull request closes
   * an issue; `deliver = "head"` needs a pull request's branch), or a project `card` (which may be
   * either, or a draft). Absent: no GitHub item (schedules, chains).
   */
  readonly githubItem?: GitHubItemKind;
  /** The pull request a task is about (`worktree_from = "head"` starts from its head); absent: none. */
  pullRequest?(task: Task): PullRequestHead | undefined;
  /** The commit a task is pinned to (a review, a commit): its worktree starts there, whatever `worktree_from` says. */
  pinnedCommit?(task: Task): PinnedCommit | undefined;
  /**
   * Paths a task's agent is pointed at beyond its worktree (a chain's upstream worktree and
   * transcript, which its prompt names): added read-only to its sandbox when they exist.
   */
  sandboxReadPaths?(task: Task): string[];
  /**
   * The tools of this curupira a task's agent is offered (a review's findings tools): the
   * arguments of `curupira mcp` serving them for run `runId`; the run declares that server to its
   * agent's CLI for that run only. Absent or undefined: no server.
   */
  agentTools?(task: Task, runId: string): AgentTools | undefined;
  /** At most one run of the automation at a time (schedules: occurrences run in order). */
  readonly serialRuns: boolean;
  /**
   * Its items are occasions, not pieces of work (a schedule's fires): each is a new item, so an
   * open delivery cannot hold "the same item" back. With `deliver = "pr"`, a pull request of the
   * automation still open (or waiting for a person) holds its next fire instead, which is recorded
   * as skipped: one pull request at a time, not a new one beside each unmerged one.
   */
  readonly firesAreOccasions?: boolean;
  /**
   * Its items name their own repository (a project board's cards), so without a `repo` filter its
   * tasks come from any repository: a fleet places them by automation alone. Absent: the
   * automation's `repo` (or checkout) is every task's repository.
   */
  readonly itemsFromAnyRepository?: boolean;
  /** Lines describing what the automation will do, for `validate --explain`. */
  explain(automation: A, now: Date): ExplainLine[];
  /** The feed the engine (and `run --dry-run`) polls for this automation's tasks. */
  createFeed(automation: A, context: FeedContext): Feed;
  readonly doctor: DoctorHook<A>;
  /** What screening reads of a task; absent: the item's title and body (see `ScreeningHook`). */
  readonly screening?: ScreeningHook<A>;
  /**
   * Reconciliation: which of these active (queued or running) tasks' items no longer match —
   * closed, deleted, a label removed — by task key, with the reason. Absent: never checked
   * (schedules and chains have no item that can go away).
   */
  unmatched?(
    automation: A,
    tasks: readonly Task[],
    context: { github(): GitHubClient; signal?: AbortSignal },
  ): Promise<Map<string, string>>;
  /**
   * How a run's item reads to a person where it has no `owner/name#number` (a schedule's fire, a
   * chain's upstream run); absent: `repo#id`. `automation` is the run's, when the settings still have it.
   */
  itemName?(run: ItemRef, automation: A | undefined): string;
  /**
   * Where a run's item comes from, in one line, for a source outside GitHub (`Linear team ENG,
   * project "Mobile", labels any of agent`): shown by `runs show`, `run --dry-run`, the run page
   * and the API beside the item's identifier and URL. Absent: the item's name says it all.
   */
  sourceSummary?(automation: A): string;
  /**
   * The line a delivered pull request's body opens with to link its item, which the item's
   * tracker recognises (`Closes #12` on GitHub, `Fixes ENG-7` for Linear); absent or undefined:
   * none (the `closes` field of `pr_body` is empty).
   */
  closingReference?(task: Task): string | undefined;
  /**
   * Write-back to an item outside GitHub (opt-in): whether the automation asks for any, the writes
   * a finished run queues (through the write queue, as GitHub writes), and how one is sent. Absent:
   * the trigger writes nothing to its service.
   */
  readonly writeBack?: WriteBackHook<A>;
  /** GitHub webhooks that concern its automations; absent: a delivery never polls them. */
  readonly webhooks?: WebhookHook<A>;
  /** Schedules: the next time the automation fires after `now` (the board); absent: not scheduled. */
  nextFire?(automation: A, now: Date): Date | undefined;
  /** The prompt field with the login of the item's author (named in the fence of its untrusted text). */
  readonly authorField?: string;
  /**
   * How the fence heading names the source of one of its untrusted fields, when the default
   * (`<field> of <repo>#<id>`, by its author) would mislead; undefined: the default.
   */
  describeField?(task: Task, field: string): string | undefined;
  /** The run this task follows, recorded on its run (chains); undefined for the others. */
  upstreamRunId(task: Task): string | undefined;
  /**
   * Checks of the validated table beyond its schema, made by the loader; returns the automation's
   * effective timezone (usually `defaultTimezone`).
   */
  resolveTimezone(config: A['config'], context: ResolveContext): string;
}

/** The part of a definition `schema.ts` declares beside the table's schema (no run-time imports). */
export type TriggerTable<A extends AnyAutomation> = Pick<
  TriggerDefinition<A>,
  | 'type'
  | 'aliases'
  | 'description'
  | 'schema'
  | 'promptFields'
  | 'untrustedFields'
  | 'itemPlaceholders'
  | 'explain'
>;

/** See `TriggerDefinition.writeBack`. */
export interface WriteBackHook<A extends AnyAutomation = ResolvedAutomation> {
  /** True when the automation's keys ask for a write (only then is the write queue built). */
  wanted(automation: A): boolean;
  /**
   * The writes a finished run queues (each with its own marker); none unless `wanted`. `result` is
   * the run's result text (as a GitHub result comment says it).
   */
  writes(automation: A, task: Task, run: RunRecord, result: string): WriteInit[];
  /** Sends one queued write (`marker`: its queue marker); must be idempotent (the queue retries it). */
  send(
    write: ServiceWrite,
    marker: string,
    automation: A,
    service: ServiceKit,
    signal?: AbortSignal,
  ): Promise<void>;
  /**
   * The writes when every pull request of `run`'s delivery merged (the item's work is done), queued
   * once by the follower (src/delivery/follow.ts) however often it sees the merge; none unless asked.
   */
  merged?(automation: A, run: RunRecord): WriteInit[];
}
