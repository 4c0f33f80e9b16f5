/**
 * `dedupe_closed_days` (issue 32, seed 001's triage row): before a triage run on an issue, curupira
 * reads the repository's issues closed in the last N days and offers the agent those whose titles
 * share words with this one as `${duplicate_candidates}` — one line each, `#N: title (closed
 * <day>, <reason>) <link>`, best match first, at most five; empty when none. The agent decides and
 * reports `duplicate` with the link (the triage step's result set has it); curupira never closes
 * an issue as a duplicate by itself, since a title match is no proof. Titles are written by others:
 * the field is fenced like the issue's own text. A read that fails leaves the field empty (the run
 * goes on; the log says why).
 */
import type { ResolvedAutomation } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { Feature, GateRequest, GateVerdict } from '../core/feature.js';
import type { Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { listClosedIssues } from '../github/rest.js';
import type { Logger } from '../log.js';
import { numberedItem } from '../triggers/registry.js';

const DAY_MS = 86_400_000;
const MAX_CANDIDATES = 5;
/** At most this many pages of 100 recently updated closed issues are read. */
const MAX_PAGES = 5;

export interface ClosedIssue {
  number: number;
  title: string;
  html_url: string;
  closed_at: string | null;
  updated_at: string;
  state_reason?: string | null;
  pull_request?: unknown;
}

const STOP = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'of',
  'to',
  'in',
  'on',
  'for',
  'with',
  'is',
  'it',
  'when',
]);

/** The words of a title that say something (lowercase, no stop words, no 1-letter words). */
export function titleWords(title: string): Set<string> {
  return new Set(
    title
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 1 && !STOP.has(w)),
  );
}

/** Shared words over all words of the two titles (0…1). */
export function titleSimilarity(a: string, b: string): number {
  const x = titleWords(a);
  const y = titleWords(b);
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const w of x) if (y.has(w)) shared += 1;
  return shared / (x.size + y.size - shared);
}

/** The closed issues whose titles look like `title`, best first (similarity ≥ 0.3). */
export function duplicateCandidates(
  title: string,
  closed: readonly ClosedIssue[],
  since: number,
  self: number,
): ClosedIssue[] {
  return closed
    .filter((i) => !i.pull_request && i.number !== self)
    .filter((i) => i.closed_at !== null && Date.parse(i.closed_at) >= since)
    .map((issue) => ({ issue, score: titleSimilarity(title, issue.title) }))
    .filter((c) => c.score >= 0.3)
    .sort((a, b) => b.score - a.score || b.issue.number - a.issue.number)
    .slice(0, MAX_CANDIDATES)
    .map((c) => c.issue);
}

export function formatCandidates(candidates: readonly ClosedIssue[]): string {
  return candidates
    .map((i) => {
      const why = i.state_reason ? `, ${i.state_reason.replace(/_/g, ' ')}` : '';
      return `#${i.number}: ${i.title} (closed ${(i.closed_at ?? '').slice(0, 10)}${why}) ${i.html_url}`;
    })
    .join('\n');
}

/** The repository's issues closed since `since` (epoch ms), newest update first. */
async function recentlyClosed(github: GitHubClient, repo: string, since: number): Promise<ClosedIssue[]> {
  const out: ClosedIssue[] = [];
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const issues = (await listClosedIssues(github, repo, page)) as ClosedIssue[];
    out.push(...issues);
    // Closed before it was last updated: once updates are older than the window, so are closes.
    if (issues.length < 100 || Date.parse(issues.at(-1)!.updated_at) < since) break;
  }
  return out;
}

export function dedupeDays(automation: ResolvedAutomation): number | undefined {
  const days = (automation.config as { dedupe_closed_days?: number }).dedupe_closed_days;
  return days !== undefined && days > 0 ? days : undefined;
}

function withCandidates(task: Task, text: string): Task {
  return {
    ...task,
    item: { ...task.item, volatile: { ...(task.item.volatile ?? {}), duplicate_candidates: text } },
  };
}

export interface DedupeOptions {
  github(): GitHubClient;
  clock: Clock;
  log: Logger;
}

/** The gate that gives a triage run its duplicate candidates (after screening, which it never overrides). */
export class DedupeFeature implements Feature {
  readonly name = 'dedupe';
  constructor(private readonly options: DedupeOptions) {}

  async gate({ automation, task }: GateRequest): Promise<GateVerdict> {
    const days = dedupeDays(automation);
    const item = numberedItem(task.identity.taskType, task.identity.repo, task.identity.id);
    if (days === undefined || !item) return { kind: 'go' };
    const since = this.options.clock.now() - days * DAY_MS;
    try {
      const closed = await recentlyClosed(this.options.github(), item.repo, since);
      const found = duplicateCandidates(task.item.title, closed, since, item.number);
      return { kind: 'go', task: withCandidates(task, formatCandidates(found)) };
    } catch (error) {
      this.options.log.warn(
        { automation: automation.id, id: task.item.id, error: errorMessage(error) },
        'Could not read the recently closed issues: no duplicate candidates for this run',
      );
      return { kind: 'go', task: withCandidates(task, '') };
    }
  }
}
