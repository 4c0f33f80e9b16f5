/**
 * The one way curupira writes to GitHub: every write is a row of the store's `writes` table
 * (migration 5) before any request goes out, so a kill -9 never loses one; `drain` sends the due
 * rows one at a time through the GitHub client.
 *
 * - Idempotent: each write carries a marker. A comment hides it as `<!-- curupira:MARKER -->`, and
 *   before creating one the queue reads the item's comments for that marker (only comments by the
 *   token's own account count), editing the one it finds instead of posting another. Labels are
 *   added and removed, which repeats harmlessly; a state is set only when the item's state, read
 *   first, differs (a close GitHub took before a kill -9 is not sent twice). `create-issue` (the run log) first
 *   looks for an issue by the token's account holding its marker; writes `onIssueOf` it (number 0)
 *   take that issue's number once it is created (the same queue order sends the create first).
 * - Retried: a failed attempt (5xx, network, rate limit) is tried again after a backoff — up to
 *   8 attempts over about 3 minutes (WRITE_BACKOFF_MS) — then marked `failed` for a later sweep.
 *   A refusal (4xx: the item is gone, no permission) fails at once.
 * - Paced: `paceMs` between write requests (GitHub's secondary limits on content creation);
 *   `Retry-After` and `x-ratelimit-reset` are honoured by the client, and a limit that outlasts
 *   the client's patience puts the write back until the announced reset.
 * - Redacted: bodies go through src/security/redact.ts when queued (the store) and again when sent.
 *
 * Give it a client made with `maxAttempts: 1`: a client-level retry of a POST cannot check for the
 * marker first, the queue's retries do.
 */
import { type Clock, systemClock } from '../core/clock.js';
import { GitHubRateLimitError, GitHubRequestError } from '../core/errors.js';
import { type Logger, silentLogger } from '../log.js';
import { crashPoint } from '../process/crash-point.js';
import { redact } from '../security/redact.js';
import type { GitHubWrite, ServiceWrite, Store, WriteInit, WriteRecord } from '../store/types.js';
import type { GitHubClient } from './client.js';
import {
  getAuthenticatedUser,
  getIssue,
  getLabel,
  issuePath,
  listIssueComments,
  listIssuesByCreator,
  repoPath,
} from './rest.js';

/** The drain under way over each store in this process (see `WriteQueue.drain`). */
const drains = new WeakMap<Store, Promise<unknown>>();

/** Waits after attempts 1..7 (the 8th failure is final): 2+4+8+16+30+50+70 s = 180 s, about 3 minutes. */
export const WRITE_BACKOFF_MS: readonly number[] = [2000, 4000, 8000, 16_000, 30_000, 50_000, 70_000];
export const DEFAULT_WRITE_ATTEMPTS = 8;
/** GitHub asks for at least a second between content-creating requests. */
export const DEFAULT_WRITE_PACE_MS = 1000;

export interface WriteQueueOptions {
  store: Store;
  client: GitHubClient;
  clock?: Clock;
  log?: Logger;
  /** Pause between two write requests (default 1 s). */
  paceMs?: number;
  /** Attempts before a write is marked failed (default 8). */
  maxAttempts?: number;
  /** Waits after each failed attempt (default WRITE_BACKOFF_MS; the last one repeats). */
  backoffMs?: readonly number[];
  /**
   * Sends a `service` write (an item outside GitHub, such as a Linear issue); without one such a
   * write fails. It must be idempotent itself: the queue retries it as it retries the others.
   */
  sendServiceWrite?: ServiceWriteSender;
}

/** The queue's timing (pace and backoff): an engine's tests shorten them (`EngineOptions.writeQueue`). */
export type WriteQueueTiming = Pick<WriteQueueOptions, 'paceMs' | 'backoffMs'>;

export type ServiceWriteSender = (write: ServiceWrite, record: WriteRecord) => Promise<void>;

export interface DrainResult {
  sent: number;
  failed: number;
  /** Attempts that failed and were put back for a retry. */
  retried: number;
}

interface RestIssue {
  number: number;
  body?: string | null;
  user: { login: string } | null;
}

interface RestComment {
  id: number;
  body?: string;
  user: { login: string } | null;
}

/** The hidden HTML comment that marks a posted comment as this write's. */
export function markerComment(marker: string): string {
  return `<!-- curupira:${marker} -->`;
}

/** A marker fits inside an HTML comment on one line. */
export function checkMarker(marker: string): string {
  if (marker.trim() === '' || /--|>|[\r\n]/.test(marker)) {
    throw new Error(`invalid write marker ${JSON.stringify(marker)}: no "--", ">" or line breaks`);
  }
  return marker;
}

function itemPath(write: WriteRecord): string {
  return issuePath(write.repo, write.number);
}

/** The body as posted: redacted, with the marker at the end unless the caller placed it. */
export function commentBody(marker: string, body: string): string {
  const hidden = markerComment(marker);
  const clean = redact(body);
  return clean.includes(hidden) ? clean : `${clean.trimEnd()}\n\n${hidden}`;
}

export class WriteQueue {
  readonly #store: Store;
  readonly #client: GitHubClient;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #paceMs: number;
  readonly #maxAttempts: number;
  readonly #backoff: readonly number[];
  readonly #sendServiceWrite: ServiceWriteSender | undefined;
  #lastWriteAt: number | undefined;
  #viewer: string | undefined;

  constructor(options: WriteQueueOptions) {
    this.#store = options.store;
    this.#client = options.client;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.log ?? silentLogger();
    this.#paceMs = options.paceMs ?? DEFAULT_WRITE_PACE_MS;
    this.#maxAttempts = options.maxAttempts ?? DEFAULT_WRITE_ATTEMPTS;
    this.#backoff = options.backoffMs ?? WRITE_BACKOFF_MS;
    this.#sendServiceWrite = options.sendServiceWrite;
  }

  /** Records the write (durably, before any request); `drain` sends it. */
  async enqueue(init: WriteInit): Promise<WriteRecord> {
    checkMarker(init.marker);
    const write: GitHubWrite =
      init.write.kind === 'comment' || init.write.kind === 'create-issue' || init.write.kind === 'review'
        ? { ...init.write, body: redact(init.write.body) }
        : init.write.kind === 'service' && init.write.body !== undefined
          ? { ...init.write, body: redact(init.write.body) }
          : init.write;
    const row = await this.#store.enqueueWrite({
      ...init,
      write,
      notBefore: init.notBefore ?? new Date(this.#clock.now()).toISOString(),
    });
    crashPoint('write-enqueued');
    return row;
  }

  /** When the next pending write is due (epoch ms), or undefined when none is pending. */
  async nextDueAt(): Promise<number | undefined> {
    // Only each item's first pending write can go next; the ones behind it wait for it.
    const heads = new Map<string, WriteRecord>();
    for (const write of await this.#store.listWrites({ status: 'pending' })) {
      const key = `${write.repo}#${write.number}`;
      if (!heads.has(key)) heads.set(key, write);
    }
    if (heads.size === 0) return undefined;
    return Math.min(...[...heads.values()].map((w) => Date.parse(w.nextAttemptAt)));
  }

  /**
   * Sends every write due now, one at a time. Each item's writes keep their order (the store holds
   * back a write while an earlier one to the same item is pending), so rounds repeat while writes
   * went out and others became due behind them.
   */
  async drain(): Promise<DrainResult> {
    // A fleet's hosts share the queue: one drain at a time across them, or two could send one write.
    const exclusive = this.#store.exclusive?.bind(this.#store);
    const rounds = () =>
      exclusive ? exclusive('github-writes', () => this.#drainRounds()) : this.#drainRounds();
    // And one at a time in this process: the run's writes and the follower's each have a queue over
    // the same rows, and two drains at once could both send a write both found pending.
    const before = drains.get(this.#store) ?? Promise.resolve();
    const next = before.then(rounds, rounds);
    drains.set(
      this.#store,
      next.catch(() => undefined),
    );
    return next;
  }

  async #drainRounds(): Promise<DrainResult> {
    const result: DrainResult = { sent: 0, failed: 0, retried: 0 };
    for (;;) {
      const due = await this.#store.listDueWrites(new Date(this.#clock.now()).toISOString());
      let settled = 0;
      for (const write of due) {
        const outcome = await this.#attempt(write);
        result[outcome] += 1;
        if (outcome !== 'retried') settled += 1;
      }
      if (settled === 0) return result;
    }
  }

  /** Drains until nothing is pending, sleeping until each next due time (tests, and shutdown). */
  async runUntilIdle(signal?: AbortSignal): Promise<DrainResult> {
    const total: DrainResult = { sent: 0, failed: 0, retried: 0 };
    for (;;) {
      const round = await this.drain();
      total.sent += round.sent;
      total.failed += round.failed;
      total.retried += round.retried;
      const next = await this.nextDueAt();
      if (next === undefined) return total;
      await this.#clock.sleep(Math.max(0, next - this.#clock.now()), signal);
    }
  }

  async #attempt(write: WriteRecord): Promise<'sent' | 'failed' | 'retried'> {
    const attempts = write.attempts + 1;
    // Counted before the request: a crash mid-request still uses up an attempt.
    await this.#store.updateWrite(write.id, { attempts });
    try {
      const resultId = await this.#send(write);
      crashPoint('write-posted');
      await this.#store.updateWrite(write.id, {
        status: 'sent',
        sentAt: new Date(this.#clock.now()).toISOString(),
        lastError: null,
        ...(resultId !== undefined ? { resultId } : {}),
      });
      this.#log.debug(
        { marker: write.marker, repo: write.repo, number: write.number },
        `${trackerOf(write)} write sent`,
      );
      return 'sent';
    } catch (error) {
      return this.#failed(write, attempts, error);
    }
  }

  async #failed(write: WriteRecord, attempts: number, error: unknown): Promise<'failed' | 'retried'> {
    const message = redact(error instanceof Error ? error.message : String(error));
    // A 4xx refusal will not change by retrying (401s are GitHubAuthError and do retry: a token may be renewed).
    const refused = error instanceof GitHubRequestError;
    const tracker = trackerOf(write);
    const context = {
      marker: write.marker,
      repo: write.repo,
      number: write.number,
      attempt: attempts,
      error: message,
    };
    if (refused || attempts >= this.#maxAttempts) {
      await this.#store.updateWrite(write.id, { status: 'failed', lastError: message });
      this.#log.warn(
        context,
        refused ? `${tracker} refused a write` : `${tracker} write failed for good; a sweep may retry it`,
      );
      return 'failed';
    }
    const now = this.#clock.now();
    const backoff = this.#backoff[Math.min(attempts - 1, this.#backoff.length - 1)] ?? 60_000;
    const resetAt = error instanceof GitHubRateLimitError ? (error.resetAt?.getTime() ?? 0) : 0;
    const next = Math.max(now + backoff, resetAt);
    await this.#store.updateWrite(write.id, {
      lastError: message,
      nextAttemptAt: new Date(next).toISOString(),
    });
    this.#log.info(
      { ...context, retryInSeconds: Math.ceil((next - now) / 1000) },
      `${tracker} write failed; will retry`,
    );
    return 'retried';
  }

  /** One write request, after the pause since the previous one. */
  async #paced<T>(request: () => Promise<T>): Promise<T> {
    if (this.#lastWriteAt !== undefined) {
      const wait = this.#lastWriteAt + this.#paceMs - this.#clock.now();
      if (wait > 0) await this.#clock.sleep(wait);
    }
    try {
      return await request();
    } finally {
      this.#lastWriteAt = this.#clock.now();
    }
  }

  /**
   * The write with its item number: a write `onIssueOf` a created issue takes that issue's number
   * (the create is queued first under the same number 0, so it has normally gone out already).
   */
  async #target(write: WriteRecord): Promise<WriteRecord> {
    const w = write.write;
    const of = w.kind === 'comment' || w.kind === 'set-state' ? w.onIssueOf : undefined;
    if (of === undefined || write.number > 0) return write;
    const [created] = await this.#store.listWrites({ marker: of });
    if (created?.status !== 'sent' || created.resultId === null) {
      throw new Error(`the issue of write ${JSON.stringify(of)} is not created yet`);
    }
    return { ...write, number: created.resultId };
  }

  /** Performs the write; returns the comment id for comments, the issue number for issues. */
  async #send(queued: WriteRecord): Promise<number | undefined> {
    const write = await this.#target(queued);
    const w = write.write;
    switch (w.kind) {
      case 'comment':
        return this.#upsertComment(write, w.body, w.editOnly === true);
      case 'create-issue':
        return this.#createIssue(write, w);
      case 'add-labels':
        await this.#ensureLabels(write, w.labels);
        await this.#paced(() =>
          this.#client.rest('POST', `${itemPath(write)}/labels`, { labels: w.labels.map((l) => l.name) }),
        );
        return undefined;
      case 'remove-label':
        await this.#removeLabel(write, w.label);
        return undefined;
      case 'request-reviewers':
        // Asking again for someone already asked changes nothing on GitHub.
        await this.#paced(() =>
          this.#client.rest('POST', `${repoPath(write.repo)}/pulls/${write.number}/requested_reviewers`, {
            reviewers: w.reviewers,
            team_reviewers: w.teamReviewers,
          }),
        );
        return undefined;
      case 'review':
        return this.#review(write, w);
      case 'service': {
        const send = this.#sendServiceWrite;
        if (!send) throw new Error(`no sender for ${w.service} writes`);
        await this.#paced(() => send(w, write));
        return undefined;
      }
      case 'set-state': {
        // Read first: a close GitHub took before an error or a kill -9 is not sent again.
        const current = await getIssue(this.#client, write.repo, write.number);
        if (current.state === w.state) return undefined;
        await this.#paced(() =>
          this.#client.rest('PATCH', itemPath(write), {
            state: w.state,
            ...(w.stateReason !== undefined ? { state_reason: w.stateReason } : {}),
          }),
        );
        return undefined;
      }
    }
  }

  async #viewerLogin(): Promise<string> {
    this.#viewer ??= (await getAuthenticatedUser(this.#client)).login;
    return this.#viewer;
  }

  /** The comment on the item holding this marker, written by the token's own account. */
  async #findMarked(write: WriteRecord): Promise<RestComment | undefined> {
    const login = (await this.#viewerLogin()).toLowerCase();
    const hidden = markerComment(write.marker);
    for (let page = 1; ; page += 1) {
      const comments: RestComment[] = await listIssueComments(this.#client, write.repo, write.number, page);
      const found = comments.find(
        (c) => c.user?.login.toLowerCase() === login && (c.body ?? '').includes(hidden),
      );
      if (found) return found;
      if (comments.length < 100) return undefined;
    }
  }

  /** Creates the issue unless one by the token's account already holds this write's marker. */
  async #createIssue(
    write: WriteRecord,
    issue: Extract<GitHubWrite, { kind: 'create-issue' }>,
  ): Promise<number> {
    const login = await this.#viewerLogin();
    const body = commentBody(write.marker, issue.body);
    const hidden = markerComment(write.marker);
    const label = issue.labels[0]?.name;
    for (let page = 1; ; page += 1) {
      const issues: RestIssue[] = await listIssuesByCreator(
        this.#client,
        write.repo,
        { creator: login, label },
        page,
      );
      const found = issues.find(
        (i) => i.user?.login.toLowerCase() === login.toLowerCase() && (i.body ?? '').includes(hidden),
      );
      if (found) return found.number;
      if (issues.length < 100) break;
    }
    await this.#ensureLabels(write, issue.labels);
    const created = await this.#paced(() =>
      this.#client.rest<{ number: number }>('POST', `${repoPath(write.repo)}/issues`, {
        title: redact(issue.title),
        body,
        labels: issue.labels.map((l) => l.name),
      }),
    );
    return created.number;
  }

  /** Posts the review unless one by the token's account already holds this write's marker. */
  async #review(write: WriteRecord, review: Extract<GitHubWrite, { kind: 'review' }>): Promise<number> {
    const login = (await this.#viewerLogin()).toLowerCase();
    const body = commentBody(write.marker, review.body);
    const hidden = markerComment(write.marker);
    const path = `${repoPath(write.repo)}/pulls/${write.number}/reviews`;
    for (let page = 1; ; page += 1) {
      const reviews = await this.#client.rest<
        { id: number; body?: string | null; user?: { login: string } | null }[]
      >('GET', `${path}?per_page=100&page=${page}`);
      const found = reviews.find(
        (r) => r.user?.login.toLowerCase() === login && (r.body ?? '').includes(hidden),
      );
      if (found) return found.id;
      if (reviews.length < 100) break;
    }
    const created = await this.#paced(() =>
      this.#client.rest<{ id: number }>('POST', path, { event: review.event, body }),
    );
    return created.id;
  }

  async #upsertComment(write: WriteRecord, text: string, editOnly: boolean): Promise<number | undefined> {
    const body = commentBody(write.marker, text);
    const existing = await this.#findMarked(write);
    if (!existing && editOnly) return undefined;
    if (existing) {
      if (existing.body === body) return existing.id;
      const path = `${repoPath(write.repo)}/issues/comments/${existing.id}`;
      await this.#paced(() => this.#client.rest('PATCH', path, { body }));
      return existing.id;
    }
    const created = await this.#paced(() =>
      this.#client.rest<{ id: number }>('POST', `${itemPath(write)}/comments`, { body }),
    );
    return created.id;
  }

  /** Creates the labels the repository lacks, with their colour and description. */
  async #ensureLabels(
    write: WriteRecord,
    labels: readonly { name: string; color?: string; description?: string }[],
  ): Promise<void> {
    for (const label of labels) {
      try {
        await getLabel(this.#client, write.repo, label.name);
        continue;
      } catch (error) {
        if (!(error instanceof GitHubRequestError && error.status === 404)) throw error;
      }
      try {
        await this.#paced(() =>
          this.#client.rest('POST', `${repoPath(write.repo)}/labels`, {
            name: label.name,
            ...(label.color !== undefined ? { color: label.color } : {}),
            ...(label.description !== undefined ? { description: label.description } : {}),
          }),
        );
      } catch (error) {
        // Someone created it in between (422 already_exists): what we wanted.
        if (!(error instanceof GitHubRequestError && error.status === 422)) throw error;
      }
    }
  }

  async #removeLabel(write: WriteRecord, label: string): Promise<void> {
    try {
      await this.#paced(() =>
        this.#client.rest('DELETE', `${itemPath(write)}/labels/${encodeURIComponent(label)}`),
      );
    } catch (error) {
      // Already gone: the state we wanted.
      if (!(error instanceof GitHubRequestError && error.status === 404)) throw error;
    }
  }
}

/** Whom a write goes to, for the log's words: GitHub, or the service of a tracker's write (`Linear`). */
export function trackerOf(write: Pick<WriteRecord, 'write'>): string {
  if (write.write.kind !== 'service') return 'GitHub';
  const { service } = write.write;
  return `${service.charAt(0).toUpperCase()}${service.slice(1)}`;
}
