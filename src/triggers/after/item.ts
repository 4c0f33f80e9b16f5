/** The item of a chained task: the upstream run it follows, with its outcome and the agent's last words. */
import { existsSync, readFileSync } from 'node:fs';
import { loadDrivers } from '../../agents/registry.js';
import { transcriptEvents } from '../../agents/transcript.js';
import { formatResult } from '../../core/result-line.js';
import {
  FAILED_STATUSES,
  type Item,
  type RunRecord,
  type RunStatus,
  SUCCESS_STATUSES,
} from '../../core/types.js';
import type { ChainSpec } from '../types.js';
import type { AfterAutomation, AfterResolved } from './schema.js';

const OUTCOMES: Record<string, readonly RunStatus[]> = {
  // `merged`: a succeeded run whose pull request merged since (each upstream run fires once).
  success: SUCCESS_STATUSES,
  failure: FAILED_STATUSES,
  any: [...SUCCESS_STATUSES, ...FAILED_STATUSES],
};

/** Statuses a run that reported an outcome can end in (issue 32): `on = "<outcome>"` looks at these. */
const REPORTING_STATUSES: readonly RunStatus[] = [...SUCCESS_STATUSES, 'noop', 'skipped'];

/**
 * Which upstream runs `on` fires on: by status (`success`, `failure`, `any`), or by the outcome
 * the run reported (`on = "ready-for-agent"`), whatever it changed.
 */
function chainFilter(on: AfterAutomation['on']): { statuses: readonly RunStatus[]; outcome?: string } {
  const statuses = OUTCOMES[on];
  return statuses ? { statuses } : { statuses: REPORTING_STATUSES, outcome: on };
}

function clip(text: string, max: number): string {
  const flat = text.trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** The agent's last words, from its transcript: its final result, else its last message. */
export function lastAgentMessage(run: RunRecord): string | undefined {
  if (!run.transcriptPath || !run.provider || !existsSync(run.transcriptPath)) return undefined;
  try {
    const events = transcriptEvents(run.provider, readFileSync(run.transcriptPath, 'utf8'));
    for (let i = events.length - 1; i >= 0; i -= 1) {
      const event = events[i]!;
      if (event.kind === 'done' && event.result) return event.result;
      if (event.kind === 'assistant' && event.text.trim()) return event.text;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** `succeeded; 1 unpushed commit kept on curupira/…` plus the agent's last words. */
export function outcomeSummary(run: RunRecord): string {
  const parts = [run.status.replace('_', ' ')];
  if (run.reason) parts.push(run.reason);
  if (run.worktreeKept)
    parts.push(
      `worktree kept at ${run.worktreePath} (${run.commits} unpushed commit${run.commits === 1 ? '' : 's'})`,
    );
  const said = lastAgentMessage(run);
  const head = parts.join('; ');
  return said ? `${head}\n\n${clip(said, 1500)}` : head;
}

export function upstreamItem(
  run: RunRecord,
  name: (run: RunRecord) => string = (r) => `${r.repo}#${r.itemId}`,
  delivered?: { headBranch: string; headSha: string | null },
): Item {
  const summary = outcomeSummary(run);
  return {
    id: run.id,
    title: `${run.automationId}: ${run.itemTitle}`,
    url: run.itemUrl,
    body: summary,
    itemKey: `run:${run.id}`,
    fields: {
      upstream_automation: run.automationId,
      upstream_run_id: run.id,
      upstream_status: run.status,
      upstream_outcome: run.result ? formatResult(run.result) : null,
      upstream_item: name(run),
      upstream_item_title: run.itemTitle,
      upstream_item_url: run.itemUrl,
      // A run that delivered: its branch as pushed (the pull request's head; the run's own local
      // branch is gone once its worktree was returned), and the commit pushed, which the chain's
      // worktree reaches (same repository) even where the remote cannot be fetched.
      upstream_branch: delivered?.headBranch ?? run.branch,
      upstream_commit: delivered?.headSha ?? null,
      upstream_worktree: run.worktreeKept ? run.worktreePath : null,
      upstream_session: run.sessionId,
      upstream_transcript: run.transcriptPath,
      upstream_summary: summary,
    },
  };
}

/** The chain an `after` table describes, for the engine's chain feed. */
export function chainOf(automation: AfterResolved): ChainSpec {
  const c = automation.config;
  return {
    upstream: c.after,
    ...chainFilter(c.on),
    onNoChanges: c.on_no_changes,
    identity: JSON.stringify([c.after, c.on]),
    async items(runs, name, delivered) {
      await loadDrivers(runs.map((run) => run.provider)); // for their transcripts' last words
      return runs.map((run) => upstreamItem(run, name, delivered?.(run)));
    },
  };
}
