/**
 * The queues and deliveries of the SQLite store: GitHub writes (writes.ts), notifications and webhook
 * deliveries (notifications.ts), delivered pull requests and their marks (pull-requests.ts).
 */
import type {
  NotificationInit,
  NotificationPatch,
  NotificationRecord,
  NotificationStatus,
  PullRequestFilter,
  PullRequestInit,
  PullRequestMark,
  PullRequestPatch,
  PullRequestRecord,
  WriteInit,
  WritePatch,
  WriteRecord,
  WriteStatus,
} from '../types.js';
import type { SqliteConnection } from './connection.js';
import * as notifications from './notifications.js';
import * as pullRequests from './pull-requests.js';
import * as writes from './writes.js';

export class SqliteQueues {
  readonly #c: SqliteConnection;

  constructor(connection: SqliteConnection) {
    this.#c = connection;
  }

  enqueueWrite(init: WriteInit): Promise<WriteRecord> {
    return this.#c.write(() => writes.enqueueWrite(this.#c.sql, init, this.#c.iso()));
  }

  listDueWrites(dueBy: string, limit = 100): Promise<WriteRecord[]> {
    return this.#c.read(() => writes.listDueWrites(this.#c.sql, dueBy, limit));
  }

  listWrites(filter: { status?: WriteStatus; runId?: string; marker?: string } = {}): Promise<WriteRecord[]> {
    return this.#c.read(() => writes.listWrites(this.#c.sql, filter));
  }

  updateWrite(id: number, patch: WritePatch): Promise<WriteRecord> {
    return this.#c.write(() => writes.updateWrite(this.#c.sql, id, patch, this.#c.path));
  }

  enqueueNotification(init: NotificationInit): Promise<NotificationRecord> {
    return this.#c.write(() => notifications.enqueueNotification(this.#c.sql, init, this.#c.iso()));
  }

  listDueNotifications(dueBy: string, limit = 100): Promise<NotificationRecord[]> {
    return this.#c.read(() => notifications.listDueNotifications(this.#c.sql, dueBy, limit));
  }

  listNotifications(filter: { status?: NotificationStatus } = {}): Promise<NotificationRecord[]> {
    return this.#c.read(() => notifications.listNotifications(this.#c.sql, filter));
  }

  updateNotification(id: number, patch: NotificationPatch): Promise<NotificationRecord> {
    return this.#c.write(() => notifications.updateNotification(this.#c.sql, id, patch, this.#c.path));
  }

  recordWebhookDelivery(delivery: { id: string; event: string; pruneBefore: string }): Promise<boolean> {
    return this.#c.write(() => notifications.recordWebhookDelivery(this.#c.sql, delivery, this.#c.iso()));
  }

  beginPullRequest(init: PullRequestInit): Promise<PullRequestRecord> {
    return this.#c.write(() => pullRequests.beginPullRequest(this.#c.sql, init, this.#c.iso()));
  }

  updatePullRequest(runId: string, patch: PullRequestPatch): Promise<PullRequestRecord> {
    return this.#c.write(() =>
      pullRequests.updatePullRequest(this.#c.sql, runId, patch, this.#c.iso(), this.#c.path),
    );
  }

  getPullRequest(runId: string): Promise<PullRequestRecord | undefined> {
    return this.#c.read(() => pullRequests.getPullRequest(this.#c.sql, runId));
  }

  listPullRequests(filter: PullRequestFilter = {}): Promise<PullRequestRecord[]> {
    return this.#c.read(() => pullRequests.listPullRequests(this.#c.sql, filter));
  }

  getPullRequestMark(runId: string, key: string): Promise<PullRequestMark | undefined> {
    return this.#c.read(() => pullRequests.getPullRequestMark(this.#c.sql, runId, key));
  }

  setPullRequestMark(runId: string, key: string, value: string): Promise<PullRequestMark> {
    return this.#c.write(() =>
      pullRequests.setPullRequestMark(this.#c.sql, runId, key, value, this.#c.iso()),
    );
  }

  deletePullRequestMark(runId: string, key: string): Promise<boolean> {
    return this.#c.write(() => pullRequests.deletePullRequestMark(this.#c.sql, runId, key));
  }

  listPullRequestMarks(runId: string): Promise<PullRequestMark[]> {
    return this.#c.read(() => pullRequests.listPullRequestMarks(this.#c.sql, runId));
  }
}
