/** Small pieces of a run: the agent CLI's version, usage sums, one-line reasons, stored prompts. */
import { readFile } from 'node:fs/promises';
import { loadDriver } from '../../agents/registry.js';
import type { AgentDriver, AgentEvent } from '../../agents/types.js';
import type { ExecutionSettings, ResolvedAutomation } from '../../config/types.js';
import { taskOfRun } from '../../core/task-fields.js';
import type { RunRecord, Task, Usage } from '../../core/types.js';
import { runCommand } from '../../process/command.js';
import { buildAgentEnv } from '../../process/env.js';
import type { SessionRecord, Store } from '../../store/types.js';
import type { ExecutorDeps, RemediationRun } from './types.js';

const versionCache = new Map<string, Promise<string | undefined>>();

export async function cliVersion(
  driver: AgentDriver,
  executable: string,
  env: Record<string, string>,
  /** Runs the probe inside the run's sandbox; `sandboxed: false` when the run has none. */
  inSandbox?: (args: readonly string[]) => Promise<{ sandboxed: boolean; stdout?: string }>,
): Promise<string | undefined> {
  if (!driver.versionArgs) return undefined;
  const versionArgs = driver.versionArgs;
  const key = `${executable}\u0000${env.PATH ?? ''}\u0000${inSandbox ? 'sandbox' : 'none'}`;
  let cached = versionCache.get(key);
  if (!cached) {
    const outside = (): Promise<string | undefined> =>
      runCommand(executable, versionArgs, { env, timeoutMs: 30_000 })
        .then((r) => (r.exitCode === 0 ? r.stdout.trim() : undefined))
        .catch(() => undefined);
    cached = inSandbox
      ? inSandbox(versionArgs).then((r) => (r.sandboxed ? r.stdout?.trim() || undefined : outside()))
      : outside();
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

export { oneLineReason } from '../../core/reason.js';

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
export const taskStub = taskOfRun;

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

/**
 * Whether, after `event`, the agent has reported its final result as a success: its closing event
 * said so (and no error came before it), with nothing but usage after it.
 */
export function reportedAfter(reported: boolean, event: AgentEvent, failed: boolean): boolean {
  if (event.kind === 'done') return !event.isError && !failed;
  return event.kind === 'usage' || event.kind === 'session' ? reported : false;
}

/**
 * Whether a run's transcript ends with its agent reporting success (see `reportedAfter`): read at a
 * restart for a run whose agent's exit curupira never saw (it died between the agent's last line
 * and the record of its exit), so that the run is finished rather than its session resumed.
 */
export async function reportedInTranscript(run: RunRecord): Promise<boolean> {
  if (!run.transcriptPath || !run.provider) return false;
  let text: string;
  let driver: AgentDriver;
  try {
    text = await readFile(run.transcriptPath, 'utf8');
    driver = await loadDriver(run.provider);
  } catch {
    return false;
  }
  const parser = driver.createParser();
  let reported = false;
  let failed = false;
  const see = (events: AgentEvent[]): void => {
    for (const event of events) {
      if (event.kind === 'done' && event.isError) failed = true;
      reported = reportedAfter(reported, event, failed);
    }
  };
  // A last line without its newline was cut short: only whole lines count.
  for (const line of text.split('\n').slice(0, -1)) if (line !== '') see(parser.parseLine(line));
  see(parser.end());
  return reported;
}

/** The agent's environment before its invocation adds to it: curupira's allow-list, the profile's own. */
export function baseAgentEnv(
  deps: Pick<ExecutorDeps, 'env'>,
  automation: ResolvedAutomation,
  driver: AgentDriver,
  cwd: string,
  githubToken?: string,
): Record<string, string> {
  const { profile } = automation;
  return buildAgentEnv({
    source: deps.env,
    providerAllowlist: driver.envAllowlist,
    extra: profile.env,
    passEnv: profile.pass_env,
    ...(githubToken ? { githubToken } : {}),
    cwd,
  });
}
