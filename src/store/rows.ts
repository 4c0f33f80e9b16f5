/**
 * The rows both backends store (the same columns in SQLite and PostgreSQL) and the records made of
 * them, so that a run read back is the same record whichever backend holds it.
 */
import { StateError } from '../core/errors.js';
import {
  type AgentOutcome,
  RUN_STATUSES,
  type RunRecord,
  type RunResult,
  type RunStatus,
  type ScreeningFinding,
  type Task,
  type Usage,
} from '../core/types.js';
import type { Allowance, CronState, ItemFailures, RunPatch, SessionRecord } from './types.js';

/** A flag column: 0/1 in SQLite (STRICT INTEGER), a boolean in PostgreSQL. */
function flag(value: boolean | number): boolean {
  return value === true || value === 1;
}

export interface RunRow {
  id: string;
  automation_id: string;
  task_key: string;
  repo: string;
  task_type: string;
  item_id: string;
  item_key: string;
  item_title: string;
  item_url: string;
  status: string;
  reason: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  profile: string | null;
  provider: string | null;
  session_id: string | null;
  /** 0/1 in SQLite, a boolean in PostgreSQL. */
  resumed: boolean | number;
  exit_code: number | null;
  signal: string | null;
  transcript_path: string | null;
  branch: string | null;
  worktree_path: string | null;
  worktree_kept: boolean | number;
  commits: number;
  usage_json: string | null;
  model: string | null;
  cost_usd: number | null;
  prompt: string | null;
  scheduled_for: string | null;
  upstream_run_id: string | null;
  agent_pid: number | null;
  agent_outcome: string | null;
  dismissed_at: string | null;
  screening_findings: string | null;
  screening_reason: string | null;
  screened_digest: string | null;
  attempt: number;
  retry_at: string | null;
  host: string | null;
  base_commit?: string | null;
  head_commit?: string | null;
  result_json?: string | null;
  inputs_json?: string | null;
}

export interface SessionRow {
  task_key: string;
  automation_id: string;
  run_id: string;
  provider: string;
  profile: string;
  session_id: string;
  prompt: string;
  prompt_template_hash: string;
  task_json: string;
  worktree_path: string | null;
  branch: string | null;
  created_at: string;
  updated_at: string;
  resume_failures: number;
}

export interface ItemFailuresRow {
  task_key: string;
  automation_id: string;
  item_key: string;
  failures: number;
  text_digest: string;
  last_run_id: string;
  escalated_at: string | null;
  notice_run_id: string | null;
  updated_at: string;
}

export interface AllowanceRow {
  id: number;
  run_id: string;
  task_key: string;
  text_digest: string;
  allowed_by: string;
  allowed_at: string;
  used_at: string | null;
  /** The token of the call that used it (`takeAllowance`), never shown. */
  take_token?: string | null;
}

export interface CronRow {
  automation_id: string;
  created_at: string;
  last_scheduled_for: string | null;
  pending_scheduled_for: string | null;
  last_execution_at: string | null;
  config_hash: string | null;
}

export function runFromRow(row: RunRow): RunRecord {
  return {
    id: row.id,
    automationId: row.automation_id,
    taskKey: row.task_key,
    repo: row.repo,
    taskType: row.task_type,
    itemId: row.item_id,
    itemKey: row.item_key,
    itemTitle: row.item_title,
    itemUrl: row.item_url,
    status: row.status as RunStatus,
    reason: row.reason,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    profile: row.profile,
    provider: row.provider,
    sessionId: row.session_id,
    resumed: flag(row.resumed),
    exitCode: row.exit_code,
    signal: row.signal,
    transcriptPath: row.transcript_path,
    branch: row.branch,
    worktreePath: row.worktree_path,
    worktreeKept: flag(row.worktree_kept),
    commits: row.commits,
    usage: row.usage_json === null ? null : (JSON.parse(row.usage_json) as Usage),
    model: row.model,
    costUsd: row.cost_usd,
    prompt: row.prompt,
    scheduledFor: row.scheduled_for,
    upstreamRunId: row.upstream_run_id,
    agentPid: row.agent_pid,
    agentOutcome: row.agent_outcome === null ? null : (JSON.parse(row.agent_outcome) as AgentOutcome),
    dismissedAt: row.dismissed_at,
    screeningFindings:
      row.screening_findings === null ? null : (JSON.parse(row.screening_findings) as ScreeningFinding[]),
    screeningReason: row.screening_reason,
    screenedDigest: row.screened_digest,
    attempt: row.attempt,
    retryAt: row.retry_at,
    host: row.host,
    baseCommit: row.base_commit ?? null,
    headCommit: row.head_commit ?? null,
    result: row.result_json ? (JSON.parse(row.result_json) as RunResult) : null,
    inputs: row.inputs_json ? (JSON.parse(row.inputs_json) as Record<string, string>) : null,
  };
}

export function sessionFromRow(row: SessionRow): SessionRecord {
  return {
    taskKey: row.task_key,
    automationId: row.automation_id,
    runId: row.run_id,
    provider: row.provider,
    profile: row.profile,
    sessionId: row.session_id,
    prompt: row.prompt,
    promptTemplateHash: row.prompt_template_hash,
    task: JSON.parse(row.task_json) as Task,
    worktreePath: row.worktree_path,
    branch: row.branch,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    resumeFailures: row.resume_failures,
  };
}

/** A session's values in the column order of both backends' `INSERT INTO sessions`. */
export function sessionValues(session: SessionRecord): (string | null)[] {
  return [
    session.taskKey,
    session.automationId,
    session.runId,
    session.provider,
    session.profile,
    session.sessionId,
    session.prompt,
    session.promptTemplateHash,
    JSON.stringify(session.task),
    session.worktreePath,
    session.branch,
    session.createdAt,
    session.updatedAt,
  ];
}

export function itemFailuresFromRow(row: ItemFailuresRow): ItemFailures {
  return {
    taskKey: row.task_key,
    automationId: row.automation_id,
    itemKey: row.item_key,
    failures: row.failures,
    textDigest: row.text_digest,
    lastRunId: row.last_run_id,
    escalatedAt: row.escalated_at,
    noticeRunId: row.notice_run_id,
    updatedAt: row.updated_at,
  };
}

export function allowanceFromRow(row: AllowanceRow): Allowance {
  return {
    id: row.id,
    runId: row.run_id,
    taskKey: row.task_key,
    textDigest: row.text_digest,
    allowedBy: row.allowed_by,
    allowedAt: row.allowed_at,
    usedAt: row.used_at,
  };
}

export function cronFromRow(row: CronRow): CronState {
  return {
    automationId: row.automation_id,
    createdAt: row.created_at,
    lastScheduledFor: row.last_scheduled_for,
    pendingScheduledFor: row.pending_scheduled_for,
    lastExecutionAt: row.last_execution_at,
    configHash: row.config_hash,
  };
}

/** Column of each patchable run field. */
export const PATCH_COLUMNS = {
  status: 'status',
  reason: 'reason',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
  sessionId: 'session_id',
  resumed: 'resumed',
  exitCode: 'exit_code',
  signal: 'signal',
  transcriptPath: 'transcript_path',
  branch: 'branch',
  worktreePath: 'worktree_path',
  worktreeKept: 'worktree_kept',
  commits: 'commits',
  usage: 'usage_json',
  model: 'model',
  costUsd: 'cost_usd',
  prompt: 'prompt',
  profile: 'profile',
  provider: 'provider',
  agentPid: 'agent_pid',
  agentOutcome: 'agent_outcome',
  dismissedAt: 'dismissed_at',
  screeningFindings: 'screening_findings',
  screeningReason: 'screening_reason',
  screenedDigest: 'screened_digest',
  retryAt: 'retry_at',
  host: 'host',
  baseCommit: 'base_commit',
  headCommit: 'head_commit',
  result: 'result_json',
  inputs: 'inputs_json',
} as const satisfies { readonly [K in keyof Required<RunPatch>]: keyof RunRow };

export type PatchKey = keyof typeof PATCH_COLUMNS;
export const PATCH_KEYS = Object.keys(PATCH_COLUMNS) as PatchKey[];

export function checkStatus(status: string): RunStatus {
  const known = RUN_STATUSES.find((s) => s === status);
  if (!known) throw new StateError(`unknown run status '${status}'`);
  return known;
}
