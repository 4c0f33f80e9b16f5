/**
 * The pull request side of delivery, over the GitHub port (src/github/rest.ts, direct-writes.ts):
 * find the open pull request of a branch (to adopt it, or to find the one a killed process opened),
 * open one, read the default branch. Shapes typed against `@octokit/openapi-types`.
 */
import type { ResolvedAutomation } from '../config/types.js';
import { rawPromptContext } from '../core/task-fields.js';
import type { FieldValue, RunRecord, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { type NewPullRequest, createPullRequest as openPullRequest } from '../github/direct-writes.js';
import { getPull, getRepository, listOpenPullsByHead, type Schemas } from '../github/rest.js';
import { markerComment } from '../github/write-queue.js';
import { renderPrompt } from '../prompt/index.js';
import { redact } from '../security/redact.js';

/** The fields of GitHub's `pull-request-simple` curupira reads. */
export type PullJson = Pick<Schemas['pull-request-simple'], 'number' | 'html_url' | 'state' | 'body'> & {
  draft?: boolean;
  merged_at: string | null;
  head: Pick<Schemas['pull-request-simple']['head'], 'ref' | 'sha'>;
  base: Pick<Schemas['pull-request-simple']['base'], 'ref'>;
};

/** The hidden marker of the pull requests curupira opens (tells its own from an adopted one). */
export function deliveryMarker(runId: string): string {
  return markerComment(`delivery run=${runId}`);
}

export async function defaultBranchOf(client: GitHubClient, repo: string): Promise<string> {
  return (await getRepository(client, repo)).default_branch;
}

/** The open pull request whose head is `branch` in `repo` itself, if any. */
export async function findOpenPullRequest(
  client: GitHubClient,
  repo: string,
  branch: string,
): Promise<PullJson | undefined> {
  const list: PullJson[] = await listOpenPullsByHead(client, repo, branch);
  return list.find((pr) => pr.head.ref === branch);
}

export async function getPullRequest(client: GitHubClient, repo: string, number: number): Promise<PullJson> {
  return getPull(client, repo, number);
}

export async function createPullRequest(
  client: GitHubClient,
  repo: string,
  pr: NewPullRequest,
): Promise<PullJson> {
  return openPullRequest(client, repo, pr);
}

export const DEFAULT_PR_TITLE = '${task_title}';
export const DEFAULT_PR_BODY = `{% if closes %}{{ closes }}

{% endif %}{{ summary }}
{% if changes %}
{{ changes }}
{% endif %}{% if agent_message %}
**The agent’s final message:**

{{ agent_message }}
{% endif %}
{{ transcript }}`;

/** What the run produced, for the body (src/delivery/summary.ts): trusted text only. */
export interface PullRequestNotes {
  /** Commits and changed files, as Markdown. */
  changes: string;
  /** The agent's final message, quoted. */
  agentMessage: string;
}

/** What a pull request template can read: the item's fields (unfenced) and the run's. */
export function pullRequestContext(
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
  commits: number,
  notes: PullRequestNotes = { changes: '', agentMessage: '' },
  headBranch = run.branch ?? '',
  spans?: readonly string[],
): Record<string, FieldValue> {
  const plural = commits === 1 ? '' : 's';
  // One pull request of several: none closes the item on merge; curupira closes it once all merged.
  const partOf = spans && spans.length > 1 ? itemReference(automation, task) : undefined;
  return {
    ...rawPromptContext(automation, task),
    run_id: run.id,
    branch: headBranch,
    commits,
    closes:
      partOf !== undefined
        ? partOf && `Part of ${partOf}`
        : (automation.trigger.closingReference?.(task) ?? ''),
    summary: `curupira run \`${run.id}\` of automation \`${automation.id}\` (agent ${run.provider ?? '-'}) made ${commits} commit${plural} on \`${headBranch}\`.`,
    changes: notes.changes,
    agent_message: notes.agentMessage,
    transcript: `To read the agent's transcript: \`curupira runs show ${run.id}\``,
  };
}

/** The title and body of the pull request of `run` (rendered, redacted, the body marked). */
export function renderPullRequest(
  automation: ResolvedAutomation,
  task: Task,
  run: RunRecord,
  commits: number,
  notes?: PullRequestNotes,
  headBranch?: string,
  delivery: { key: string; spans?: readonly string[] } = { key: run.id },
): { title: string; body: string } {
  const { spans } = delivery;
  const context = pullRequestContext(automation, task, run, commits, notes, headBranch, spans);
  const title = renderPrompt(automation.config.pr_title ?? DEFAULT_PR_TITLE, context, 'auto', automation.id)
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 256);
  const body = renderPrompt(automation.config.pr_body ?? DEFAULT_PR_BODY, context, 'auto', automation.id);
  return {
    title: redact(title) || `curupira run ${run.id}`,
    body: `${redact(body).trimEnd()}${spans && spans.length > 1 ? `\n\n${linkedSection(spans.map((repo) => ({ repo })))}` : ''}\n\n${deliveryMarker(delivery.key)}`,
  };
}

/** How a multi-repository pull request names its item: the item's address, else its own words. */
export function itemReference(automation: ResolvedAutomation, task: Task): string {
  if (/^https?:\/\//.test(task.item.url)) return task.item.url;
  return automation.trigger.closingReference?.(task)?.replace(/^\S+\s+/, '') ?? '';
}

const LINKED_START = '<!-- curupira:linked -->';
const LINKED_END = '<!-- /curupira:linked -->';

/**
 * The section of a multi-repository pull request that lists its siblings: the repositories while
 * some are not open yet, their pull requests once all are (then rewritten in each body).
 */
export function linkedSection(pulls: readonly { repo: string; url?: string | null }[]): string {
  const lines = pulls.map((p) => `- ${p.repo}${p.url ? `: ${p.url}` : ''}`);
  return [
    LINKED_START,
    `**One change across ${pulls.length} repositories**, one pull request in each:`,
    '',
    ...lines,
    LINKED_END,
  ].join('\n');
}

/** `body` with its linked section replaced by `section` (appended when it has none). */
export function withLinkedSection(body: string, section: string): string {
  const start = body.indexOf(LINKED_START);
  const end = body.indexOf(LINKED_END);
  if (start >= 0 && end > start)
    return `${body.slice(0, start)}${section}${body.slice(end + LINKED_END.length)}`;
  return `${body.trimEnd()}\n\n${section}`;
}
