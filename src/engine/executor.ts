/**
 * Performs one run: checkout → worktree → prompt → agent → outcome → cleanup, recording every step
 * in the run ledger. A session id is saved the moment the agent announces it, so a crash at any
 * instant leaves something to resume; a run never ends without a final status.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { getDriver } from '../agents/registry.js';
import type { AgentDriver, AgentEvent } from '../agents/types.js';
import type { ExecutionSettings, ResolvedAutomation } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { AgentNotFoundError, CurupiraError, errorMessage } from '../core/errors.js';
import type { RunRecord, RunStatus, Task, Usage } from '../core/types.js';
import type { TokenSource } from '../github/token.js';
import type { Logger } from '../log.js';
import { spawnAgent } from '../process/agent.js';
import { runCommand } from '../process/command.js';
import { buildAgentEnv } from '../process/env.js';
import { renderPrompt } from '../prompt/index.js';
import type { SessionRecord, Store } from '../store/types.js';
import { ensureCheckout, finishWorktree, prepareWorktree } from '../workspace/index.js';
import { promptContext, promptTemplateHash, runInit } from './task.js';

/** What a resumed agent is told (the reference's continue prompt). */
export const RESUME_SESSION_PROMPT =
  'Continue the interrupted task from this session. Review the existing conversation and repository state, then complete the requested work without repeating completed steps.';

export interface ExecutorDeps {
  execution: ExecutionSettings;
  store: Store;
  clock: Clock;
  log: Logger;
  /** curupira's own environment: the only source agent variables are copied from. */
  env: NodeJS.ProcessEnv;
  /** For profiles with `github_token = true`. */
  tokens?: TokenSource;
  /** Folder for transcripts (`<dir>/<automation>/<run>.jsonl`). */
  transcriptsDir: string;
  /** Between SIGTERM and SIGKILL (default 10 s). */
  killGraceMs?: number;
  /** Called when a run's state changes (for the live status and the chain trigger). */
  onUpdate?(run: RunRecord): void;
}

export interface RunRequest {
  automation: ResolvedAutomation;
  task: Task;
  /** Aborting cancels the run (graceful stop): the agent's group gets SIGTERM, then SIGKILL. */
  signal: AbortSignal;
  /** A saved session to continue, when the engine resumes it at start. */
  resume?: SessionRecord;
  upstreamRunId?: string;
}

const versionCache = new Map<string, Promise<string | undefined>>();

async function cliVersion(
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

function addUsage(total: Usage | null, event: Extract<AgentEvent, { kind: 'usage' }>): Usage {
  const sum: Usage = {
    inputTokens: (total?.inputTokens ?? 0) + event.inputTokens,
    outputTokens: (total?.outputTokens ?? 0) + event.outputTokens,
    cachedInputTokens: (total?.cachedInputTokens ?? 0) + event.cachedInputTokens,
  };
  const cost = (total?.costUsd ?? 0) + (event.costUsd ?? 0);
  if (total?.costUsd !== undefined || event.costUsd !== undefined) sum.costUsd = cost;
  return sum;
}

function lastLines(text: string, n = 3): string {
  return text
    .trim()
    .split('\n')
    .filter((l) => l.trim())
    .slice(-n)
    .join(' | ')
    .slice(0, 500);
}

export async function executeTask(deps: ExecutorDeps, request: RunRequest): Promise<RunRecord> {
  const { store, log, clock } = deps;
  const { automation, task, signal } = request;
  const { profile } = automation;
  const iso = (): string => new Date(clock.now()).toISOString();
  const fields = {
    automation: automation.id,
    repo: task.identity.repo,
    type: task.identity.taskType,
    id: task.identity.id,
  };

  let saved = request.resume ?? (await store.getSession(task.key));
  const templateHash = promptTemplateHash(automation);
  if (saved && (saved.promptTemplateHash !== templateHash || saved.provider !== profile.provider)) {
    log.info(
      { ...fields, session: saved.sessionId },
      "The automation's prompt or agent changed; starting a fresh session",
    );
    await store.deleteSession(task.key);
    saved = undefined;
  }

  let run = await store.createRun({
    ...runInit(automation, task, 'preparing'),
    resumed: saved !== undefined,
    sessionId: saved?.sessionId ?? null,
    upstreamRunId: request.upstreamRunId ?? null,
  });
  deps.onUpdate?.(run);
  const runFields = { ...fields, run: run.id };
  log.info({ ...runFields, session: saved?.sessionId }, saved ? 'Resuming task' : 'Starting task');

  const update = async (patch: Parameters<Store['updateRun']>[1]): Promise<void> => {
    run = await store.updateRun(run.id, patch);
    deps.onUpdate?.(run);
  };

  const finish = async (
    status: RunStatus,
    reason: string | null,
    patch: Parameters<Store['updateRun']>[1] = {},
  ): Promise<RunRecord> => {
    await update({ status, reason, finishedAt: iso(), agentPid: null, ...patch });
    const logFields = { ...runFields, result: status, session: run.sessionId ?? undefined };
    if (status === 'succeeded') log.info(logFields, 'Completed task');
    else if (status === 'cancelled') log.warn({ ...logFields, reason }, 'Cancelled task');
    else log.error({ ...logFields, error: reason }, 'Failed task');
    return run;
  };

  // The prompt: a resumed session continues the original task.
  let originalPrompt: string;
  try {
    originalPrompt = saved
      ? saved.prompt
      : renderPrompt(
          automation.config.prompt,
          promptContext(automation, task),
          automation.promptSyntax,
          automation.id,
        );
  } catch (error) {
    return finish('failed', errorMessage(error));
  }
  await update({ prompt: originalPrompt });
  if (signal.aborted) return finish('cancelled', 'stopped before the agent started');

  // Checkout and worktree.
  const timeoutMs = deps.execution.task_timeout_minutes * 60_000;
  let cwd: string;
  let worktree: { path: string; branch: string } | undefined;
  try {
    const checkout = await ensureCheckout({
      alias: automation.repository.alias,
      remote: automation.repository.remote,
      path: automation.repository.checkoutPath,
      ...(automation.repository.setup_script ? { setupScript: automation.repository.setup_script } : {}),
      timeoutMs,
      log,
      signal,
    });
    if (automation.config.checkout === 'main') {
      cwd = checkout.path;
    } else {
      const prepared = await prepareWorktree({
        checkoutPath: checkout.path,
        automationId: automation.id,
        taskType: task.identity.taskType,
        taskId: task.identity.id,
        log,
        signal,
      });
      worktree = { path: prepared.path, branch: prepared.branch };
      cwd = prepared.path;
      await update({ worktreePath: prepared.path, branch: prepared.branch });
    }
  } catch (error) {
    if (signal.aborted) return finish('cancelled', 'stopped while preparing the checkout');
    return finish('failed', errorMessage(error));
  }

  const cleanup = async (): Promise<Parameters<Store['updateRun']>[1]> => {
    if (!worktree) return {};
    try {
      const result = await finishWorktree({
        checkoutPath: automation.repository.checkoutPath,
        path: worktree.path,
        branch: worktree.branch,
        log,
        key: task.key,
      });
      return { worktreeKept: result.kept, commits: result.unpushedCommits };
    } catch (error) {
      log.warn({ ...runFields, error: errorMessage(error) }, 'Could not clean up worktree');
      return { worktreeKept: true };
    }
  };

  // The agent.
  const driver = getDriver(profile.provider);
  const executable = profile.executable ?? driver.executable;
  const baseEnv = buildAgentEnv({
    source: deps.env,
    providerAllowlist: driver.envAllowlist,
    extra: profile.env,
    passEnv: profile.pass_env,
    ...(profile.github_token && deps.tokens ? { githubToken: await deps.tokens.get() } : {}),
    cwd,
  });
  const version = await cliVersion(driver, executable, baseEnv);

  const saveSession = async (sessionId: string): Promise<void> => {
    const now = iso();
    await store.saveSession({
      taskKey: task.key,
      automationId: automation.id,
      runId: run.id,
      provider: profile.provider,
      profile: automation.profileName,
      sessionId,
      prompt: originalPrompt,
      promptTemplateHash: templateHash,
      task,
      worktreePath: worktree?.path ?? null,
      branch: worktree?.branch ?? null,
      createdAt: saved?.createdAt ?? now,
      updatedAt: now,
    });
    await update({ sessionId });
  };

  let assignedSessionId: string | undefined;
  if (driver.assignsSessionId) {
    assignedSessionId = saved?.sessionId ?? randomUUID();
    await saveSession(assignedSessionId);
  }
  // A session id chosen here names nothing until the agent starts: if it never does, forget it,
  // or the next run would tell a brand-new session to "continue" a task it never saw.
  let spawned = false;
  const forgetUnstartedSession = async (): Promise<void> => {
    if (spawned || saved || !assignedSessionId) return;
    await store.deleteSession(task.key);
  };
  let invocation: ReturnType<AgentDriver['buildInvocation']>;
  try {
    invocation = driver.buildInvocation({
      profile,
      prompt: saved ? RESUME_SESSION_PROMPT : originalPrompt,
      worktree: cwd,
      ...(saved && !driver.assignsSessionId ? { resumeSessionId: saved.sessionId } : {}),
      ...(assignedSessionId ? { assignedSessionId } : {}),
      ...(version ? { version } : {}),
    });
  } catch (error) {
    await forgetUnstartedSession();
    return finish('failed', errorMessage(error), await cleanup());
  }
  const env = { ...baseEnv, ...invocation.env };

  const transcriptPath = join(deps.transcriptsDir, automation.id, `${run.id}.jsonl`);
  // The run counts as running (and, for `once`, its item as handled) only once the agent has started.
  await update({ transcriptPath });

  const parser = driver.createParser();
  let usage: Usage | null = null;
  let reportedError: string | undefined;
  let doneWithError = false;
  let knownSession = saved?.sessionId ?? assignedSessionId;
  let writes = Promise.resolve();
  const queue = (work: () => Promise<void>): void => {
    writes = writes.then(work).catch((error: unknown) => {
      log.error({ ...runFields, error: errorMessage(error) }, 'Could not save the agent session');
    });
  };
  const onEvents = (events: AgentEvent[]): void => {
    for (const event of events) {
      if (event.kind === 'session' && event.sessionId !== knownSession) {
        knownSession = event.sessionId;
        const id = event.sessionId;
        log.info({ ...runFields, session: id }, 'Agent session started');
        queue(() => saveSession(id));
      } else if (event.kind === 'usage') {
        usage = addUsage(usage, event);
      } else if (event.kind === 'error') {
        reportedError = event.message;
      } else if (event.kind === 'done' && event.isError) {
        doneWithError = true;
        if (event.result) reportedError = event.result;
      }
    }
  };

  let result: Awaited<ReturnType<typeof spawnAgent>>;
  try {
    result = await spawnAgent({
      executable,
      args: invocation.args,
      cwd,
      env,
      timeoutMs,
      ...(deps.killGraceMs === undefined ? {} : { killGraceMs: deps.killGraceMs }),
      maxOutputBytes: deps.execution.max_output_bytes,
      stdoutFile: transcriptPath,
      stderrFile: transcriptPath.replace(/\.jsonl$/, '.stderr.log'),
      onStdoutLine: (line) => onEvents(parser.parseLine(line)),
      onSpawn: (pid) => {
        spawned = true;
        const startedAt = iso();
        queue(() => update({ status: 'running', startedAt, agentPid: pid }));
      },
      signal,
    });
    onEvents(parser.end());
  } catch (error) {
    await writes;
    await forgetUnstartedSession();
    const reason =
      error instanceof AgentNotFoundError || error instanceof CurupiraError
        ? error.message
        : errorMessage(error);
    return finish('failed', reason, await cleanup());
  }
  await writes;

  let status: RunStatus;
  let reason: string | null = null;
  if (result.cancelled) {
    status = 'cancelled';
    reason = `stopped by curupira while the agent ran${knownSession ? '; the session resumes on the next start' : ''}`;
  } else if (result.timedOut) {
    status = 'timed_out';
    reason = `${executable} did not finish within ${timeoutMs / 1000} seconds`;
  } else if (result.exitCode === 0 && !doneWithError) {
    status = 'succeeded';
  } else {
    status = 'failed';
    const stderr = lastLines(result.stderrTail);
    reason =
      result.exitCode === 0
        ? `${executable} reported an error: ${reportedError ?? 'unknown error'}`
        : `${executable} exited with ${result.exitCode === null ? `signal ${result.signal}` : `status ${result.exitCode}`}${
            stderr ? `: ${stderr}` : reportedError ? `: ${reportedError}` : ''
          }`;
  }
  if (status === 'succeeded') await store.deleteSession(task.key);
  const cleaned = await cleanup();
  return finish(status, reason, {
    ...cleaned,
    exitCode: result.exitCode,
    signal: result.signal,
    usage,
  });
}
