/**
 * The tools of one run (`curupira mcp --run`, and the sandbox's per-run socket,
 * src/mcp/socket.ts), nothing else: the result tool when its automation declares `outcomes`
 * (issue 32), the findings tools for a review (issue 29; a review watch's run, or any run given a
 * commit).
 */
import type { RunRecord } from '../core/types.js';
import type { Store } from '../store/types.js';
import { findingsTools } from './findings-tools.js';
import { resultTools } from './result-tools.js';
import type { McpTool } from './stdio.js';

const REVIEW_INSTRUCTIONS =
  'You are reviewing code for curupira. Call findings_list first; report each problem you find with findings_report, resolve with findings_resolve the listed findings that are fixed, and end with findings_done.';

const RESULT_INSTRUCTIONS =
  'You are doing one item of work for curupira. When you are done, report what you did with result_report: one outcome of the listed set, a one-line reason, and the issue or pull request number.';

export interface RunToolsRequest {
  run: RunRecord;
  /** The run's automation as loaded (undefined when the settings no longer have it). */
  automation: { config: { outcomes?: readonly string[] | undefined }; offersTools: boolean } | undefined;
  /** The commit a review is pinned to (default: the run's base commit). */
  commit: string | undefined;
  withStore: <T>(use: (store: Store) => Promise<T>) => Promise<T>;
}

/** The run's tools and the instructions that go with them; throws when a review has no commit. */
export function runTools(request: RunToolsRequest): { tools: McpTool[]; instructions: string } {
  const { run, automation, commit, withStore } = request;
  const outcomes = automation?.config.outcomes;
  const reviewing = commit !== undefined || outcomes === undefined || automation?.offersTools === true;
  const tools = [
    ...(outcomes === undefined ? [] : resultTools({ id: run.id, outcomes }, withStore)),
    ...(reviewing ? reviewTools(run, commit, withStore) : []),
  ];
  const instructions = [
    ...(outcomes === undefined ? [] : [RESULT_INSTRUCTIONS]),
    ...(reviewing ? [REVIEW_INSTRUCTIONS] : []),
  ].join(' ');
  return { tools, instructions };
}

/** The findings tools for one run of a review watch. */
function reviewTools(
  run: RunRecord,
  commit: string | undefined,
  withStore: RunToolsRequest['withStore'],
): McpTool[] {
  const pinned = commit ?? run.baseCommit ?? undefined;
  if (!pinned) throw new NoCommitError(`run ${run.id} has no commit on record; pass --commit`);
  return findingsTools({ id: run.id, watch: run.automationId, repo: run.repo, commit: pinned }, withStore);
}

/** A review run with no commit to pin its findings to. */
export class NoCommitError extends Error {}
