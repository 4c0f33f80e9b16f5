/**
 * The PostgreSQL side of the store's queues and deliveries: GitHub writes, notifications, webhook
 * deliveries, delivered pull requests and their marks. Being written (issue 17).
 */
import type pg from 'pg';
import type { Store } from '../types.js';

/** DDL of the tables `PgQueues` uses; part of the first PostgreSQL migration (schema.ts). */
export const QUEUE_TABLES_DDL = '';

export type QueueMethods =
  | 'enqueueWrite'
  | 'listDueWrites'
  | 'listWrites'
  | 'updateWrite'
  | 'enqueueNotification'
  | 'listDueNotifications'
  | 'listNotifications'
  | 'updateNotification'
  | 'recordWebhookDelivery'
  | 'beginPullRequest'
  | 'updatePullRequest'
  | 'getPullRequest'
  | 'listPullRequests'
  | 'getPullRequestMark'
  | 'setPullRequestMark'
  | 'deletePullRequestMark'
  | 'listPullRequestMarks';

/** `PostgresStore` delegates these methods here. `pool`'s connections already use the store's schema. */
export declare class PgQueues implements Pick<Store, QueueMethods> {
  constructor(pool: pg.Pool, options: { now: () => number; readonly: boolean });
  enqueueWrite: Store['enqueueWrite'];
  listDueWrites: Store['listDueWrites'];
  listWrites: Store['listWrites'];
  updateWrite: Store['updateWrite'];
  enqueueNotification: Store['enqueueNotification'];
  listDueNotifications: Store['listDueNotifications'];
  listNotifications: Store['listNotifications'];
  updateNotification: Store['updateNotification'];
  recordWebhookDelivery: Store['recordWebhookDelivery'];
  beginPullRequest: Store['beginPullRequest'];
  updatePullRequest: Store['updatePullRequest'];
  getPullRequest: Store['getPullRequest'];
  listPullRequests: Store['listPullRequests'];
  getPullRequestMark: Store['getPullRequestMark'];
  setPullRequestMark: Store['setPullRequestMark'];
  deletePullRequestMark: Store['deletePullRequestMark'];
  listPullRequestMarks: Store['listPullRequestMarks'];
}
