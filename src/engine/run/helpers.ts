/** Small pieces of a run: the agent CLI's version, usage sums, one-line reasons, stored prompts. */
import type { AgentDriver, AgentEvent } from '../../agents/types.js';
import type { ExecutionSettings, ResolvedAutomation } from '../../config/types.js';
import type { RunRecord, Task, Usage } from '../../core/types.js';
import { runCommand } from '../../process/command.js';
import type { SessionRecord, Store } from '../../store/types.js';
import type { RemediationRun } from './types.js';

const versionCache = new Map<string, Promise<string | undefined>>();

export async function cliVersion(
  driver: AgentDriver,
  executable: string,
  env: Record<string, string>,
): Promise<string | undefined> {
  if (!driver.versionArgs) return undefined;
  const key = `${executable}\u0000${env.PATH ?? ''}`;
  let cached = versionCache.get(key);
  if (!cached) {
    cached = runCommand(executable, driver.versionArgs, { env, timeoutMs: 30_000 })
      .then((r) => (r.exitCode === 0 ? r.stdout.trim() : undefined))
      .catch(() => undefined);
    versionCache.set(key, cached);
  }
  return cached;
}

export function addUsage(total: Usage | null, event: Extract<AgentEvent, { kind: 'usage' }>): Usage {
  const sum: Usage = {
    inputTokens: (total?.inputTokens ?? 0) + event.inputTokens,
    outputTokens: (total?.outputTokens ?? 0) + event.outputTokens,
    cachedInputTokens: (total?.cachedInputTokens ?? 0) + event.cachedInputTokens,
  };
  const cost = (total?.costUsd ?? 0) + (event.costUsd ?? 0);
  if (total?.costUsd !== undefined || event.costUsd !== undefined) sum.costUsd = cost;
  return sum;
}

/** Words that mark the line of a tool's output saying what went wrong. */
const ERROR_LINE =
  /\b(?:error|fatal|failed|failure|unexpected|not found|denied|invalid|refused|unauthori[sz]ed|forbidden|panic|exception|cannot|could not|unable|no such)\b/i;

/**
 * One line for a run record from a tool's output: the first line (what failed), the line that says
 * what went wrong (`fatal: …`, `error: …`, else the first carrying an error word), then the last
 * lines for context, joined by ` | `, at most `max` characters.
 */
export function oneLineReason(text: string, max = 500): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length <= 1) return (lines[0] ?? '').slice(0, max);
  const strong = lines.findIndex((l, i) => i > 0 && /^(?:fatal|error|panic)\b/i.test(l));
  const key = strong >= 0 ? strong : lines.findIndex((l) => ERROR_LINE.test(l));
  // No line names an error: the last three say the most.
  if (key < 0) return clip(lines.slice(-3).join(' | '), max);
  const chosen = new Set<number>([0, key]);
  for (let i = lines.length - 1; i > key && chosen.size < 3; i -= 1) chosen.add(i);
  const line = [...chosen]
    .sort((a, b) => a - b)
    .map((i) => lines[i]!)
    .join(' | ');
  return clip(line, max);
}

function clip(line: string, max: number): string {
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The longest prompt kept in a run record; a resumed session keeps the whole prompt once. */
const STORED_PROMPT_CHARS = 100_000;

export function storedPrompt(prompt: string): string {
  if (prompt.length <= STORED_PROMPT_CHARS) return prompt;
  return `${prompt.slice(0, STORED_PROMPT_CHARS)}\n[… ${prompt.length - STORED_PROMPT_CHARS} characters cut from this record]`;
}

/** How many clean finished worktrees a checkout's pool keeps (`reuse_worktrees`): one per agent at once. */
export function poolSize(execution: ExecutionSettings): number {
  return execution.reuse_worktrees ? execution.max_active_tasks : 0;
}

/** Enough of a task to name its session: completion needs only the key. */
export function taskStub(run: RunRecord): Task {
  return {
    key: run.taskKey,
    fingerprint: '',
    identity: { automationId: run.automationId, repo: run.repo, taskType: run.taskType, id: run.itemId },
    item: {
      id: run.itemId,
      title: run.itemTitle,
      url: run.itemUrl,
      body: '',
      fields: {},
      itemKey: run.itemKey,
    },
  };
}

/**
 * The session a remediation resumes: the delivery's, told `prompt` (kept as the session's prompt,
 * so a restart that finds it saved does not fall back to the item's template).
 */
export function remediationSession(
  automation: ResolvedAutomation,
  task: Task,
  remediation: RemediationRun,
  templateHash: string,
  now: string,
): SessionRecord {
  return {
    taskKey: task.key,
    automationId: automation.id,
    runId: remediation.deliveryRunId,
    provider: automation.profile.provider,
    profile: automation.profileName,
    sessionId: remediation.sessionId,
    prompt: remediation.prompt,
    promptTemplateHash: templateHash,
    task,
    worktreePath: remediation.worktree.path,
    branch: remediation.worktree.branch,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * True for a remediation run (src/delivery/remediation.ts): its `upstreamRunId` is a delivery of
 * the same automation and task. (A chained run's upstream is another automation's run.)
 */
export async function isRemediation(store: Store, run: RunRecord): Promise<boolean> {
  if (!run.upstreamRunId) return false;
  const delivery = await store.getPullRequest(run.upstreamRunId).catch(() => undefined);
  return (
    delivery !== undefined && delivery.automationId === run.automationId && delivery.taskKey === run.taskKey
  );
}
