/**
 * Claims (issue 12, item 1; seed 001): before a run of an issue or pull request starts, curupira
 * claims the item with one comment — a human line and a hidden, machine-readable lease:
 *
 *     curupira is working on this: automation `fix`, runner `build-1`, until 14:05 UTC
 *
 *     <!-- curupira:lease run=r_… -->
 *     <!-- curupira:lease-state automation=fix runner=build-1 run=r_… expires=2026-12-01T14:05:00.000Z -->
 *
 * The first marker names the comment (the write queue finds it by that to release it); the second
 * holds the lease. Expiry is judged by GitHub's clock: the `date` header of GitHub's answers, never
 * the local clock (the offset between the two is measured at every answer).
 *
 * Race: read the comments; an unexpired lease of someone else skips the item. Otherwise post,
 * read again: the oldest unexpired lease (GitHub's `created_at`, then the comment id) wins; a loser
 * deletes its own comment and its run is recorded as `skipped: leased by <runner>`. Only leases
 * written by the token's own account or by a trusted author (the screening trust rules:
 * `trusted_authors`, `min_author_association`) count; anything else is ignored, forged or not.
 *
 * Why claims and renewals are direct client calls and releases go through the write queue: the
 * agent must not start before the claim is confirmed, and a claim that cannot be confirmed now is
 * worth nothing later (the run is simply not started and tried again at the next poll), so queueing
 * it (durable, retried for minutes) buys nothing and would need a wait on the queue. A release, on
 * the other hand, must not be lost: it is an ordinary idempotent comment edit, so it goes through
 * the queue (persisted before the request, retried, paced, surviving a kill -9), marked `editOnly`
 * so a lease comment someone deleted is not posted again. The client given here should be built with
 * `maxAttempts: 1`: a blind client-level retry of the claim's POST could post two leases.
 */

import { hostname } from 'node:os';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { RunRecord, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { createIssueComment, deleteIssueComment, updateIssueComment } from '../github/direct-writes.js';
import { getAuthenticatedUser, listIssueComments, type RestReader, withServerDate } from '../github/rest.js';
import { declareWriter } from '../github/writers.js';
import type { Logger } from '../log.js';
import { type TrustRules, trustReason } from '../screening/trust.js';
import { redact } from '../security/redact.js';
import { numberedItem } from '../triggers/registry.js';
import { parseDuration, RUNNER_ID_PATTERN } from './duration.js';

export interface LeaseConfig {
  ttlMs: number;
  runnerId: string;
}

/** The host name, made into a runner id (letters, digits, `.`, `_`, `-`). */
export function defaultRunnerId(host = hostname()): string {
  const clean = host
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
  return RUNNER_ID_PATTERN.test(clean) ? clean : 'curupira';
}

export function runnerIdOf(settings: Settings): string {
  return settings.execution.runner_id ?? defaultRunnerId();
}

/** The automation's leases: its own `lease_ttl`, else the settings-wide one; undefined: none. */
/** `lease_ttl` (or its `[settings]` default): the lease comment of each run's item. */
export const LEASE_WRITER = declareWriter({
  feature: 'leases',
  keys: ['lease_ttl'],
  settingsWide: ['lease_ttl'],
});

export function leaseConfig(settings: Settings, automation: ResolvedAutomation): LeaseConfig | undefined {
  const text = automation.config.lease_ttl ?? settings.execution.lease_ttl;
  const ttlMs = text === undefined ? undefined : parseDuration(text);
  return ttlMs === undefined ? undefined : { ttlMs, runnerId: runnerIdOf(settings) };
}

export function wantsLeases(settings: Settings): boolean {
  return settings.automations.some((a) => leaseConfig(settings, a) !== undefined);
}

// ---- The comment ----

export interface LeaseState {
  automation: string;
  runner: string;
  run: string;
  /** ISO time (GitHub's clock) the lease ends, while it is held. */
  expires?: string;
  /** The run's outcome, once released. */
  released?: string;
}

const STATE_KEYS = ['automation', 'runner', 'run', 'expires', 'released'] as const;

/** The write queue's marker of a run's lease comment (its idempotency key). */
export function leaseMarker(runId: string): string {
  return `lease run=${runId}`;
}

/** A value inside an HTML comment: percent-encoded, and never `--`. */
function encodeValue(value: string): string {
  return encodeURIComponent(value).replace(/--/g, '-%2D');
}

function decodeValue(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

export function leaseStateLine(state: LeaseState): string {
  const pairs = STATE_KEYS.filter((k) => state[k] !== undefined).map(
    (k) => `${k}=${encodeValue(state[k] as string)}`,
  );
  return `<!-- curupira:lease-state ${pairs.join(' ')} -->`;
}

const STATE_LINE = /<!-- curupira:lease-state ([^<>]*?) -->/;

/** The lease a comment body holds, or undefined when it holds none (or a malformed one). */
export function parseLeaseState(body: string): LeaseState | undefined {
  const match = STATE_LINE.exec(body);
  if (!match) return undefined;
  const fields: Record<string, string> = {};
  for (const pair of match[1]!.split(/\s+/)) {
    const eq = pair.indexOf('=');
    const key = pair.slice(0, eq);
    const value = decodeValue(pair.slice(eq + 1));
    if (eq <= 0 || value === undefined || !(STATE_KEYS as readonly string[]).includes(key)) return undefined;
    fields[key] = value;
  }
  const { automation, runner, run, expires, released } = fields;
  if (!automation || !runner || !run) return undefined;
  if (expires !== undefined && Number.isNaN(Date.parse(expires))) return undefined;
  return {
    automation,
    runner,
    run,
    ...(expires === undefined ? {} : { expires }),
    ...(released === undefined ? {} : { released }),
  };
}

/** A value read from someone's comment, fit for a run's reason: one line, printable, short. */
function shown(value: string): string {
  const clean = value.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 63)}…` : clean;
}

function code(text: string): string {
  return `\`${text.replace(/[`\r\n]/g, "'")}\``;
}

/** `14:05 UTC`, with the date when it is not GitHub's today. */
export function untilText(expires: string, serverNow: number): string {
  const at = new Date(expires).toISOString();
  const sameDay = at.slice(0, 10) === new Date(serverNow).toISOString().slice(0, 10);
  return `${sameDay ? '' : `${at.slice(0, 10)} `}${at.slice(11, 16)} UTC`;
}

/** The whole comment of a lease, held (with `expires`) or released (with `released`). */
export function leaseBody(state: LeaseState, serverNow: number): string {
  const who = `automation ${code(state.automation)}, runner ${code(state.runner)}`;
  const line =
    state.released === undefined
      ? `curupira is working on this: ${who}, until ${untilText(state.expires ?? '', serverNow)}`
      : `curupira worked on this: ${who}, run ${code(state.run)}: **${state.released}** (lease released)`;
  return redact(`${line}\n\n<!-- curupira:${leaseMarker(state.run)} -->\n${leaseStateLine(state)}`);
}

// ---- Reading an item's leases ----

interface RestComment {
  id: number;
  body?: string;
  created_at: string;
  user: { login: string; type?: string } | null;
  author_association?: string;
}

export interface Lease {
  commentId: number;
  createdAt: string;
  author: string;
  /** Written by the token's own account. */
  own: boolean;
  state: LeaseState;
}

export interface ItemLeases {
  /** GitHub's time when the comments were read (epoch ms). */
  serverNow: number;
  /** Unexpired leases from trusted authors, oldest first. */
  live: Lease[];
  /** Released leases from trusted authors, newest first. */
  released: Lease[];
}

export interface ItemRef {
  repo: string;
  number: number;
}

/** The item a task leases: only an issue or a pull request numbered in its repository is leased. */
export function leasedItem(task: Task): ItemRef | undefined {
  return numberedItem(task.identity.taskType, task.identity.repo, task.identity.id);
}

function byAge(a: Lease, b: Lease): number {
  return a.createdAt.localeCompare(b.createdAt) || a.commentId - b.commentId;
}

/** What a claim found. */
export type ClaimResult =
  | { kind: 'claimed'; lease: HeldLease; takenBack: boolean }
  /** Someone else holds it (or another automation of this runner): the run is skipped. */
  | { kind: 'leased'; by: Lease; reason: string }
  /** `once`: another runner's run of this automation succeeded on it (released lease). */
  | { kind: 'done'; by: Lease; reason: string }
  /** GitHub could not be reached (or refused): the run is not started; the next poll tries again. */
  | { kind: 'unreachable'; reason: string };

/** What a read-only look at the item's leases says before anything is posted. */
export type LeaseCheck = { kind: 'free' } | Extract<ClaimResult, { kind: 'leased' | 'done' | 'unreachable' }>;

export interface LeaseDeps {
  client: GitHubClient;
  clock: Clock;
  log: Logger;
  settings(): Settings;
  /** The trust rules of the automation's screening settings (whose leases count besides our own). */
  trust(automation: ResolvedAutomation): Promise<TrustRules>;
  /** Queues an edit of a lease comment through the write queue (`editOnly`). */
  queueEdit(item: ItemRef, runId: string, marker: string, body: string): Promise<void>;
}

export class Leases {
  #viewer: string | undefined;
  /** GitHub's clock minus ours (ms), from the last answer's `date` header. */
  #offset = 0;

  constructor(readonly deps: LeaseDeps) {
    this.#github = withServerDate(deps.client, (date) => {
      this.#offset = date - deps.clock.now();
    });
  }

  /** GitHub's time now, as last measured. */
  serverNow(): number {
    return this.deps.clock.now() + this.#offset;
  }

  config(automation: ResolvedAutomation): LeaseConfig | undefined {
    return leaseConfig(this.deps.settings(), automation);
  }

  /**
   * The client the lease operations go through: each answer's `date` header measures GitHub's clock.
   * Reads are named operations of src/github/rest.ts; the claim's writes are direct writes
   * (src/github/direct-writes.ts: the agent must not start before the claim is confirmed).
   */
  readonly #github: RestReader;

  async #viewerLogin(): Promise<string> {
    this.#viewer ??= (await getAuthenticatedUser(this.#github)).login.toLowerCase();
    return this.#viewer;
  }

  /** The item's leases that count (own account or trusted authors), as GitHub has them now. */
  async read(automation: ResolvedAutomation, item: ItemRef): Promise<ItemLeases> {
    const viewer = await this.#viewerLogin();
    const rules = await this.deps.trust(automation);
    const leases: Lease[] = [];
    for (let page = 1; ; page += 1) {
      const comments: RestComment[] = await listIssueComments(this.#github, item.repo, item.number, page);
      for (const c of comments) {
        const state = parseLeaseState(c.body ?? '');
        if (!state || !c.user) continue;
        const own = c.user.login.toLowerCase() === viewer;
        const actor = {
          login: c.user.login,
          bot: c.user.type === 'Bot',
          ...(c.author_association ? { association: c.author_association } : {}),
        };
        // A marker from anyone else is just text: forged leases are ignored.
        if (!own && trustReason(actor, rules) === undefined) continue;
        leases.push({ commentId: c.id, createdAt: c.created_at, author: c.user.login, own, state });
      }
      if (comments.length < 100) break;
    }
    const serverNow = this.serverNow();
    const live = leases
      .filter((l) => l.state.released === undefined && Date.parse(l.state.expires ?? '') > serverNow)
      .sort(byAge);
    const released = leases.filter((l) => l.state.released !== undefined).sort((a, b) => byAge(b, a));
    return { serverNow, live, released };
  }

  #isMine(lease: Lease, automation: ResolvedAutomation, runnerId: string): boolean {
    return lease.own && lease.state.runner === runnerId && lease.state.automation === automation.id;
  }

  #blocked(view: ItemLeases, automation: ResolvedAutomation, config: LeaseConfig): LeaseCheck {
    const first = view.live[0];
    if (first && !this.#isMine(first, automation, config.runnerId)) {
      const { runner, automation: other, run, expires } = first.state;
      return {
        kind: 'leased',
        by: first,
        reason: `leased by ${shown(runner)} (automation ${shown(other)}, run ${shown(run)}, until ${untilText(expires ?? '', view.serverNow)})`,
      };
    }
    // `once = "head"` runs a pull request again for new commits: a lease names no commit.
    const done =
      automation.config.once === true
        ? view.released.find(
            (l) =>
              l.state.automation === automation.id &&
              l.state.runner !== config.runnerId &&
              l.state.released === 'succeeded',
          )
        : undefined;
    if (done)
      return {
        kind: 'done',
        by: done,
        reason: `done by ${shown(done.state.runner)} (run ${shown(done.state.run)} of automation ${automation.id} succeeded; once = true)`,
      };
    return { kind: 'free' };
  }

  /** A look before screening and the run: is the item someone else's? Posts nothing. */
  async check(automation: ResolvedAutomation, task: Task): Promise<LeaseCheck> {
    const config = this.config(automation);
    const item = leasedItem(task);
    if (!config || !item) return { kind: 'free' };
    try {
      return this.#blocked(await this.read(automation, item), automation, config);
    } catch (error) {
      return { kind: 'unreachable', reason: `could not read the leases: ${errorMessage(error)}` };
    }
  }

  /**
   * Claims the item for `run` (see the module comment); undefined when the automation takes no
   * leases or the task is no issue or pull request.
   */
  async claim(automation: ResolvedAutomation, task: Task, run: RunRecord): Promise<ClaimResult | undefined> {
    const config = this.config(automation);
    const item = leasedItem(task);
    if (!config || !item) return undefined;
    let posted: number | undefined;
    try {
      const view = await this.read(automation, item);
      const blocked = this.#blocked(view, automation, config);
      if (blocked.kind !== 'free') return blocked;
      const state = (): LeaseState => ({
        automation: automation.id,
        runner: config.runnerId,
        run: run.id,
        expires: new Date(this.serverNow() + config.ttlMs).toISOString(),
      });
      const mine = view.live[0];
      if (mine) {
        // Our own unexpired lease (this runner, restarted): taken back for the new run.
        const held = state();
        await updateIssueComment(this.#github, item.repo, mine.commentId, leaseBody(held, this.serverNow()));
        return {
          kind: 'claimed',
          lease: this.#held(item, automation, config, held, mine.commentId),
          takenBack: true,
        };
      }
      const held = state();
      const created = await createIssueComment(
        this.#github,
        item.repo,
        item.number,
        leaseBody(held, this.serverNow()),
      );
      posted = created.id;
      const after = await this.read(automation, item);
      const winner = after.live[0];
      if (winner?.commentId === posted)
        return {
          kind: 'claimed',
          lease: this.#held(item, automation, config, held, posted),
          takenBack: false,
        };
      await deleteIssueComment(this.#github, item.repo, posted);
      posted = undefined;
      const lost = this.#blocked(after, automation, config);
      if (lost.kind !== 'free') return lost;
      return { kind: 'unreachable', reason: 'the lease just posted was not found again' };
    } catch (error) {
      if (posted !== undefined)
        await this.#withdraw(
          item,
          { automation: automation.id, runner: config.runnerId, run: run.id },
          posted,
        );
      return { kind: 'unreachable', reason: errorMessage(error) };
    }
  }

  /** A lease posted but not confirmed goes again: deleted now, or released through the queue. */
  async #withdraw(item: ItemRef, state: LeaseState, commentId: number): Promise<void> {
    try {
      await deleteIssueComment(this.#github, item.repo, commentId);
    } catch {
      await this.queueRelease(item, state, 'not started').catch(() => undefined);
    }
  }

  #held(
    item: ItemRef,
    automation: ResolvedAutomation,
    config: LeaseConfig,
    state: LeaseState,
    commentId: number,
  ) {
    return new HeldLease(this, item, automation, config, state, commentId);
  }

  /** Queues the edit of a run's lease comment to its outcome. */
  async queueRelease(item: ItemRef, state: LeaseState, outcome: string): Promise<void> {
    const { expires: _expires, ...rest } = state;
    const released = { ...rest, released: outcome };
    await this.deps.queueEdit(item, state.run, leaseMarker(state.run), leaseBody(released, this.serverNow()));
  }

  /** Renews a held lease (a direct edit with a new expiry, by GitHub's clock). */
  async renew(item: ItemRef, commentId: number, state: LeaseState): Promise<void> {
    await updateIssueComment(this.#github, item.repo, commentId, leaseBody(state, this.serverNow()));
  }
}

/** A lease this process holds: renewed at half-life until `release`. */
export class HeldLease {
  #state: LeaseState;
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;
  #released = false;

  constructor(
    private readonly leases: Leases,
    readonly item: ItemRef,
    readonly automation: ResolvedAutomation,
    private readonly config: LeaseConfig,
    state: LeaseState,
    readonly commentId: number,
  ) {
    this.#state = state;
    this.#loop = this.#renewals();
  }

  get expires(): string | undefined {
    return this.#state.expires;
  }

  async #renewals(): Promise<void> {
    const { clock, log } = this.leases.deps;
    let wait = this.config.ttlMs / 2;
    while (!this.#stop.signal.aborted) {
      try {
        await clock.sleep(wait, this.#stop.signal);
      } catch {
        return;
      }
      const next = {
        ...this.#state,
        expires: new Date(this.leases.serverNow() + this.config.ttlMs).toISOString(),
      };
      try {
        await this.leases.renew(this.item, this.commentId, next);
        this.#state = next;
        wait = this.config.ttlMs / 2;
      } catch (error) {
        // Tried again soon; the run goes on (a lease that lapses may let another runner in).
        wait = Math.max(1000, this.config.ttlMs / 10);
        log.warn(
          {
            automation: this.automation.id,
            run: this.#state.run,
            repo: this.item.repo,
            number: this.item.number,
            error: errorMessage(error),
          },
          'Could not renew a lease',
        );
      }
    }
  }

  /** Stops renewing and queues the edit to the run's outcome (once; later calls do nothing). */
  async release(outcome: string): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#stop.abort();
    await this.#loop;
    await this.leases.queueRelease(this.item, this.#state, outcome);
  }
}

/** The outcome a released lease shows for a run. */
export function releaseOutcome(run: RunRecord): string {
  return run.status;
}

/**
 * Releases the leases of runs that ended without releasing theirs (a kill -9, a crash): each run's
 * lease comment, if this account wrote one, is edited to `outcome` through the write queue (an edit
 * only: nothing is posted where no lease comment is found). For the engine at start (interrupted
 * runs nobody resumes) and for the repair sweep (any finished run of this runner whose lease may
 * still stand). Runs of automations that take no lease (no `lease_ttl`) are skipped.
 */
export async function releaseStaleLeases(
  leases: Leases,
  runs: readonly Pick<RunRecord, 'id' | 'automationId' | 'repo' | 'taskType' | 'itemId'>[],
  outcome = 'interrupted',
): Promise<number> {
  let queued = 0;
  const settings = leases.deps.settings();
  const runnerId = runnerIdOf(settings);
  // Only the runs of automations that take leases had one to release.
  const leasing = new Set(
    settings.automations.filter((a) => leaseConfig(settings, a) !== undefined).map((a) => a.id),
  );
  for (const run of runs) {
    if (!leasing.has(run.automationId)) continue;
    const item = numberedItem(run.taskType, run.repo, run.itemId);
    if (!item) continue;
    await leases.queueRelease(item, { automation: run.automationId, runner: runnerId, run: run.id }, outcome);
    queued += 1;
  }
  return queued;
}
