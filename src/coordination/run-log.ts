/**
 * The run log (issue 12, item 5; seed 001). Strictly opt-in (`run_log = true`): one issue labelled
 * `agent:log` per window of `log_window_days` in the automation's repository, and one comment on
 * it per finished run (run id, automation, item, outcome, duration). Comments, not body edits: each
 * entry is its own write with its own marker (`runlog-entry run=<id>`), so a retry or a second host
 * never doubles an entry and two hosts never overwrite each other's.
 *
 * Windows are counted from 1970-01-01 (UTC) in steps of `log_window_days`, so every host agrees on
 * them. The first entry of a new window queues the new issue (`create-issue`, marker
 * `runlog repo=<repo> window=<first day>`: before creating, the queue looks for an issue by the
 * token's account holding that marker) and the closing of the previous one. The current window's
 * marker is kept in the store (meta `run-log:<repo>`), so a restart continues the same issue.
 * Entries and closes name their issue by that marker (`onIssueOf`): the queue sends the create first.
 * Items labelled `agent:log` are never eligible (src/engine/eligibility.ts).
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { formatResult } from '../core/result-line.js';
import { automationRepo } from '../core/task-fields.js';
import type { RunRecord, Task } from '../core/types.js';
import { code, runDuration } from '../github/write-port.js';
import { declareWriter, writerOn } from '../github/writers.js';
import type { Store, WriteInit } from '../store/types.js';
import { REPO_PATTERN } from '../triggers/common-schema.js';
import { runnerIdOf } from './lease.js';

export const LOG_LABEL = 'agent:log';
const DAY_MS = 86_400_000;

/** `run_log = true` (or its `[settings]` default): the run-log issue and one entry per run. */
export const RUN_LOG_WRITER = declareWriter({
  feature: 'run log',
  keys: ['run_log'],
  settingsWide: ['run_log'],
});

export function runLogOn(settings: Settings, automation: ResolvedAutomation): boolean {
  return writerOn(RUN_LOG_WRITER, automation, settings.execution);
}

export interface LogWindow {
  /** First day, `YYYY-MM-DD` (UTC). */
  start: string;
  /** Last day, `YYYY-MM-DD` (UTC). */
  end: string;
}

/** The window `now` falls in. */
export function logWindow(now: number, days: number): LogWindow {
  const day = Math.floor(now / DAY_MS);
  const first = day - (day % days);
  const iso = (d: number) => new Date(d * DAY_MS).toISOString().slice(0, 10);
  return { start: iso(first), end: iso(first + days - 1) };
}

export function logIssueMarker(repo: string, window: LogWindow): string {
  return `runlog repo=${repo} window=${window.start}`;
}

export function logIssueTitle(window: LogWindow): string {
  return `curupira run log: ${window.start} – ${window.end}`;
}

function logIssueBody(window: LogWindow): string {
  return [
    `Runs of curupira automations in this repository from ${window.start} to ${window.end} (UTC), one comment per finished run.`,
    '',
    `When the window ends curupira closes this issue and opens the next one. Items labelled \`${LOG_LABEL}\` are never worked on by an agent.`,
  ].join('\n');
}

/**
 * One entry: run id, automation, item, status (with the result the agent reported), duration, and
 * the runner that ran it (seed 001's `runner`: the fleet host, else `runner_id` or the host name).
 */
export function logEntryBody(
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
  runner?: string,
): string {
  const item = /^\d+$/.test(task.identity.id)
    ? `${task.identity.repo}#${task.identity.id}`
    : code(`${task.identity.repo} ${task.identity.id}`);
  const status = run.result ? `**${run.status}** (${code(formatResult(run.result))})` : `**${run.status}**`;
  const by = run.host ?? runner;
  return `Run ${code(run.id)} · automation ${code(automation.id)} · ${item} · ${status} · ${runDuration(run, run.startedAt ?? run.createdAt) ?? '–'}${by ? ` · runner ${code(by)}` : ''}`;
}

/** The repository the automation's log lives in (`owner/name`), or undefined when it has none. */
function logRepo(automation: ResolvedAutomation, task: Task): string | undefined {
  return [automationRepo(automation), task.identity.repo].find((r) => REPO_PATTERN.test(r));
}

interface CurrentLog {
  marker: string;
}

/**
 * The writes that log one finished run: its entry, and at a window's first entry the new log issue
 * and the closing of the previous one. Records the new window as current.
 */
export async function runLogWrites(
  store: Store,
  settings: Settings,
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
  now: number,
): Promise<WriteInit[]> {
  const repo = logRepo(automation, task);
  if (!repo) return [];
  const window = logWindow(now, settings.execution.log_window_days);
  const marker = logIssueMarker(repo, window);
  const key = `run-log:${repo}`;
  const saved = await store.getMeta(key);
  const current = saved === undefined ? undefined : (JSON.parse(saved) as CurrentLog);
  const writes: WriteInit[] = [];
  if (current?.marker !== marker) {
    writes.push({
      marker,
      repo,
      number: 0,
      write: {
        kind: 'create-issue',
        title: logIssueTitle(window),
        body: logIssueBody(window),
        labels: [{ name: LOG_LABEL, description: 'curupira: run log (never worked on by an agent)' }],
      },
    });
  }
  writes.push({
    marker: `runlog-entry run=${run.id}`,
    repo,
    number: 0,
    runId: run.id,
    write: {
      kind: 'comment',
      body: logEntryBody(automation, task, run, runnerIdOf(settings)),
      onIssueOf: marker,
    },
  });
  if (current && current.marker !== marker) {
    writes.push({
      marker: `runlog close ${current.marker.replace(/^runlog /, '')}`,
      repo,
      number: 0,
      write: { kind: 'set-state', state: 'closed', stateReason: 'completed', onIssueOf: current.marker },
    });
  }
  return writes;
}

/** Records the window just queued as current (after its writes are in the queue). */
export async function markCurrentLog(store: Store, writes: readonly WriteInit[]): Promise<void> {
  const created = writes.find((w) => w.write.kind === 'create-issue');
  if (!created) return;
  await store.setMeta(
    `run-log:${created.repo}`,
    JSON.stringify({ marker: created.marker } satisfies CurrentLog),
  );
}
