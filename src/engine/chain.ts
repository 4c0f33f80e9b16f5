/**
 * Chained automations (`trigger_type = "after"`). The run ledger is the source of truth: a chain
 * feed looks for finished upstream runs (since the chain was first seen) that have no downstream run
 * yet. A crash between the upstream finishing and the downstream starting therefore loses nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { loadDrivers } from '../agents/registry.js';
import { transcriptEvents } from '../agents/transcript.js';
import type { AutomationFor } from '../config/types.js';
import { changedNothing } from '../core/outcome.js';
import { formatResult } from '../core/result-line.js';
import {
  FAILED_STATUSES,
  type Item,
  type RunRecord,
  type RunStatus,
  SUCCESS_STATUSES,
  type Task,
} from '../core/types.js';
import type { AfterAutomation } from '../triggers/after/schema.js';
import type { Feed, PollContext } from './feed.js';
import { taskFromItem } from './task.js';

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
function chainFilter(on: AfterAutomation['on']): {
  statuses: readonly RunStatus[];
  outcome?: string;
} {
  const statuses = OUTCOMES[on];
  return statuses ? { statuses } : { statuses: REPORTING_STATUSES, outcome: on };
}

/** How far back a chain looks in its upstream's history, per poll. */
const LOOKBACK = 200;

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

export function upstreamItem(run: RunRecord): Item {
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
      upstream_item: `${run.repo}#${run.itemId}`,
      upstream_item_title: run.itemTitle,
      upstream_item_url: run.itemUrl,
      upstream_branch: run.branch,
      upstream_worktree: run.worktreeKept ? run.worktreePath : null,
      upstream_session: run.sessionId,
      upstream_transcript: run.transcriptPath,
      upstream_summary: summary,
    },
  };
}

function chainHash(automation: AutomationFor<'after'>): string {
  const c = automation.config;
  return createHash('sha256')
    .update(JSON.stringify([c.after, c.on]))
    .digest('hex')
    .slice(0, 16);
}

export class ChainFeed implements Feed {
  nextPollAt = 0;
  private readonly dispatched = new Set<string>();

  constructor(
    readonly automation: AutomationFor<'after'>,
    private readonly intervalSeconds: number,
    /** The upstream automation delivers (`deliver` is set): its runs that changed nothing do not fire by default. */
    private readonly upstreamDelivers = false,
  ) {}

  /** Whether an upstream run that changed nothing starts this chain (`on_no_changes`). */
  private firesOnNoChanges(): boolean {
    return (this.automation.config.on_no_changes ?? (this.upstreamDelivers ? 'skip' : 'fire')) === 'fire';
  }

  /** Polls at once when its upstream's run settled. */
  settled(automationId: string): void {
    if (automationId === this.automation.config.after) this.nextPollAt = 0;
  }

  /** Takes the chain's baseline when the engine starts, before any upstream run can finish. */
  async start(context: PollContext): Promise<void> {
    await this.since(context);
  }

  /** Runs of the upstream that finished after this moment may start this chain. */
  private async since(context: PollContext): Promise<string> {
    const key = `chain:${this.automation.id}`;
    const hash = chainHash(this.automation);
    const stored = await context.store.getMeta(key);
    const [storedHash, storedSince] = stored?.split('|') ?? [];
    if (storedHash === hash && storedSince) return storedSince;
    const now = new Date(context.clock.now()).toISOString();
    if (!context.preview) await context.store.setMeta(key, `${hash}|${now}`);
    return now;
  }

  async poll(context: PollContext): Promise<Task[]> {
    this.nextPollAt = context.clock.now() + this.intervalSeconds * 1000;
    const { config } = this.automation;
    const since = await this.since(context);
    const filter = chainFilter(config.on);
    const upstream = await context.store.listRuns({
      automationId: config.after,
      status: filter.statuses,
      limit: LOOKBACK,
    });
    // A chain on an outcome fires on it whatever the run changed (a triage changes no code).
    const fires = filter.outcome !== undefined || this.firesOnNoChanges();
    const candidates = upstream.filter(
      (run) =>
        run.finishedAt !== null &&
        run.finishedAt >= since &&
        !this.dispatched.has(run.id) &&
        (filter.outcome === undefined || run.result?.outcome === filter.outcome) &&
        (fires || !changedNothing(run)),
    );
    if (candidates.length === 0) return [];
    const done = new Set(
      (await context.store.listRuns({ automationId: this.automation.id, limit: Number.POSITIVE_INFINITY }))
        .map((run) => run.upstreamRunId)
        .filter((id): id is string => id !== null),
    );
    // Upstream runs that already have their downstream run need no second look (this poll runs every
    // `cron_poll_interval_seconds`; without this, the full downstream history would be read each time).
    for (const run of candidates) if (done.has(run.id)) this.dispatched.add(run.id);
    const fresh = candidates.filter((run) => !done.has(run.id));
    await loadDrivers(fresh.map((run) => run.provider)); // for their transcripts' last words
    return fresh
      .reverse()
      .slice(0, context.limit)
      .map((run) => taskFromItem(this.automation, upstreamItem(run)));
  }

  markDispatched(task: Task): void {
    this.dispatched.add(task.item.id);
  }

  async runFinished(): Promise<void> {}
}
