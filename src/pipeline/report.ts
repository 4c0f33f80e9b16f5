/**
 * How a run's agent reports its result (issue 32). Two ways in, one record:
 *
 * - the result tool: `recordReportedResult` is the seam a tool server calls while the agent runs
 *   (it knows the run by the `CURUPIRA_RUN_ID` the agent's environment carries); it checks the
 *   outcome against the automation's closed set and keeps it on the run record;
 * - the result line: for CLIs without tools, the last line of the agent's final message
 *   (src/core/result-line.ts).
 *
 * When the agent exits, `reportedResultOf` gives what it reported (the tool's result first) and the
 * outcome map (src/core/outcome.ts, `reportedOutcome`) decides what that means for the run.
 */
import type { AgentEvent } from '../agents/types.js';
import { oneLineReason } from '../core/reason.js';
import { OUTCOME_PATTERN, outcomeSet, type ParsedResult, parseResultLine } from '../core/result-line.js';
import type { RunResult } from '../core/types.js';
import type { Store } from '../store/types.js';

/** What the agent sends the result tool: one outcome, a one-line reason, optional fields. */
export interface ReportedResult {
  outcome: string;
  reason?: string;
  /** The issue or pull request number it is about (the line's `#N`). */
  item?: number;
  fields?: Record<string, string>;
}

export type RecordResultAnswer = { ok: true; result: RunResult } | { ok: false; error: string };

const MAX_FIELDS = 20;
const MAX_FIELD_LENGTH = 500;

/**
 * Keeps the result an agent reported through a tool on its run. Refused (with a message the agent
 * can act on) for an outcome outside the set, a run that is not running, or oversized fields. A
 * second report replaces the first: the agent's last word counts, as with the result line.
 */
export async function recordReportedResult(
  store: Store,
  runId: string,
  report: ReportedResult,
  declared: readonly string[],
): Promise<RecordResultAnswer> {
  const set = outcomeSet(declared);
  if (!OUTCOME_PATTERN.test(report.outcome) || !set.includes(report.outcome))
    return { ok: false, error: `unknown outcome '${report.outcome}': report one of ${set.join(', ')}` };
  if (report.item !== undefined && (!Number.isInteger(report.item) || report.item < 1))
    return { ok: false, error: 'number: the issue or pull request number, a whole number from 1' };
  const fields = Object.entries(report.fields ?? {});
  if (fields.length > MAX_FIELDS) return { ok: false, error: `at most ${MAX_FIELDS} fields` };
  for (const [key, value] of fields)
    if (!/^[a-z][a-z0-9_]*$/.test(key) || typeof value !== 'string' || value.length > MAX_FIELD_LENGTH)
      return {
        ok: false,
        error: `field '${key}': names are lowercase words joined by _, values strings of at most ${MAX_FIELD_LENGTH} characters`,
      };
  const run = await store.getRun(runId);
  if (!run) return { ok: false, error: `no run ${runId}` };
  if (run.status !== 'running' && run.status !== 'preparing')
    return { ok: false, error: `run ${runId} is ${run.status}: a result is reported while it runs` };
  const reason = report.reason?.trim() ? oneLineReason(report.reason) : null;
  const result: RunResult = {
    outcome: report.outcome,
    reason,
    ...(report.item === undefined ? {} : { item: report.item }),
    ...(fields.length > 0 ? { fields: Object.fromEntries(fields) } : {}),
    via: 'tool',
  };
  await store.updateRun(runId, { result });
  return { ok: true, result };
}

/** What the agent reported when it exited: its result tool's result, else its final message's line. */
export async function reportedResultOf(
  store: Store,
  runId: string,
  declared: readonly string[],
  finalText: string,
): Promise<ParsedResult> {
  const stored = (await store.getRun(runId))?.result;
  if (stored?.via === 'tool') return { kind: 'result', result: stored };
  return parseResultLine(finalText, outcomeSet(declared));
}

/**
 * The agent's last words so far, after `event`: a successful closing event's result, else its
 * latest message. The result line is read from these when the agent exits.
 */
export function lastWords(previous: string, event: AgentEvent): string {
  if (event.kind === 'done' && !event.isError && event.result?.trim()) return event.result;
  if (event.kind === 'assistant' && event.text.trim()) return event.text;
  return previous;
}
