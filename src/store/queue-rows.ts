/**
 * The rows of the queue and delivery tables (writes, notifications, pull requests and their marks)
 * as both backends read them, their records, and the columns a patch sets. One copy for SQLite and
 * PostgreSQL: PostgreSQL returns a BIGINT id as a string and a boolean as a boolean, SQLite a number
 * for both, and each mapper reads either.
 */
import type {
  GitHubWrite,
  NotificationPatch,
  NotificationRecord,
  NotificationStatus,
  PullRequestGate,
  PullRequestMark,
  PullRequestPatch,
  PullRequestRecord,
  PullRequestState,
  WritePatch,
  WriteRecord,
  WriteStatus,
} from './types.js';

/** An id: a number (SQLite), or a BIGINT's digits (PostgreSQL); every id stays far below 2^53. */
type Big = string | number;

export interface WriteRow {
  id: Big;
  marker: string;
  repo: string;
  item_number: number;
  write_json: string;
  run_id: string | null;
  status: WriteStatus;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  result_id: Big | null;
  created_at: string;
  sent_at: string | null;
}

export function writeFromRow(row: WriteRow): WriteRecord {
  return {
    id: Number(row.id),
    marker: row.marker,
    repo: row.repo,
    number: row.item_number,
    write: JSON.parse(row.write_json) as GitHubWrite,
    runId: row.run_id,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    resultId: row.result_id === null ? null : Number(row.result_id),
    createdAt: row.created_at,
    sentAt: row.sent_at,
  };
}

export interface NotificationRow {
  id: Big;
  key: string;
  target: string;
  event_id: string;
  event: string;
  payload_json: string;
  status: NotificationStatus;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

export function notificationFromRow(row: NotificationRow): NotificationRecord {
  return {
    id: Number(row.id),
    key: row.key,
    target: row.target,
    eventId: row.event_id,
    event: row.event,
    payload: row.payload_json,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    createdAt: row.created_at,
    sentAt: row.sent_at,
  };
}

export interface PullRequestRow {
  run_id: string;
  automation_id: string;
  task_key: string;
  repo: string;
  delivery: 'pr' | 'branch';
  head_branch: string;
  head_sha: string | null;
  base_branch: string | null;
  number: number | null;
  url: string | null;
  /** 0 or 1 in SQLite. */
  adopted: boolean | number;
  state: PullRequestState;
  detail: string | null;
  since: string;
  gate: PullRequestGate | null;
  gate_since: string | null;
  gate_detail: string | null;
  created_at: string;
  updated_at: string;
}

export function pullRequestFromRow(row: PullRequestRow): PullRequestRecord {
  return {
    runId: row.run_id,
    automationId: row.automation_id,
    taskKey: row.task_key,
    repo: row.repo,
    delivery: row.delivery,
    headBranch: row.head_branch,
    headSha: row.head_sha,
    baseBranch: row.base_branch,
    number: row.number,
    url: row.url,
    adopted: row.adopted === true || row.adopted === 1,
    state: row.state,
    detail: row.detail,
    since: row.since,
    gate: row.gate,
    gateSince: row.gate_since,
    gateDetail: row.gate_detail,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface MarkRow {
  run_id: string;
  key: string;
  value: string;
  at: string;
}

export function markFromRow(row: MarkRow): PullRequestMark {
  return { runId: row.run_id, key: row.key, value: row.value, at: row.at };
}

/** The column each key of a patch sets. */
export const WRITE_COLUMNS: Record<keyof WritePatch, string> = {
  status: 'status',
  attempts: 'attempts',
  nextAttemptAt: 'next_attempt_at',
  lastError: 'last_error',
  resultId: 'result_id',
  sentAt: 'sent_at',
};

export const NOTIFICATION_COLUMNS: Record<keyof NotificationPatch, string> = {
  status: 'status',
  attempts: 'attempts',
  nextAttemptAt: 'next_attempt_at',
  lastError: 'last_error',
  sentAt: 'sent_at',
};

export const PULL_REQUEST_COLUMNS: Record<keyof PullRequestPatch, string> = {
  headSha: 'head_sha',
  baseBranch: 'base_branch',
  number: 'number',
  url: 'url',
  adopted: 'adopted',
  state: 'state',
  detail: 'detail',
  gate: 'gate',
  gateDetail: 'gate_detail',
};
