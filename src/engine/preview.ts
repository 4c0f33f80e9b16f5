/** `run --dry-run`: the first task that would run, found with the real triggers, reserving nothing. */
import { loadDriver } from '../agents/registry.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { failureBudget, isEscalated, itemTextDigest } from '../coordination/budget.js';
import { cancelHold } from '../coordination/cancel-hold-feature.js';
import type { Clock } from '../core/clock.js';
import { codeSource, describeCodeSource } from '../core/code-source.js';
import { blockedByScreening, type Task } from '../core/types.js';
import { deliveryName, earlierFireDelivery, openDelivery } from '../delivery/deliver.js';
import { additionalWorktrees, repositoriesNote } from '../delivery/repositories.js';
import type { GitHubClient } from '../github/client.js';
import type { Logger } from '../log.js';
import { runCommand } from '../process/command.js';
import { buildAgentEnv } from '../process/env.js';
import { renderPrompt } from '../prompt/index.js';
import { previewScreening } from '../screening/preview.js';
import { scrub } from '../security/redact.js';
import type { Store } from '../store/types.js';
import type { ServiceKit } from '../triggers/service.js';
import { branchName, worktreePath } from '../workspace/paths.js';
import { RESUME_SESSION_PROMPT } from './executor.js';
import { createFeed } from './feed-factory.js';
import { itemAppendix, promptContext } from './task.js';

export interface PreviewDeps {
  github(): GitHubClient;
  clock: Clock;
  log: Logger;
  service: ServiceKit;
  /** A read-only view of the state file, when there is one (cron marks). */
  store: Store;
  /** The environment an agent classifier would be built from. */
  env?: NodeJS.ProcessEnv;
}

export async function previewFirstTask(
  settings: Settings,
  deps: PreviewDeps,
): Promise<{
  found?: { automation: ResolvedAutomation; task: Task; screening?: string };
  passed: PassedOver[];
}> {
  const passed: PassedOver[] = [];
  for (const automation of settings.automations) {
    if (automation.config.enabled === false) continue;
    const feed = createFeed(automation, settings.execution.polling, deps, settings.automations);
    const tasks = await feed.poll({
      store: deps.store,
      clock: deps.clock,
      log: deps.log,
      limit: settings.execution.polling.batch_size,
      preview: true,
    });
    for (const task of tasks) {
      const why = await heldBack(deps.store, settings, automation, task);
      if (why !== undefined) {
        passed.push({ automation, task, why });
        continue;
      }
      // As the gate would decide it on a first run: an item screening would hold is passed over.
      const screened = await previewScreening(settings, automation, task, deps);
      if (screened && 'held' in screened) {
        passed.push({ automation, task, why: screened.held });
        continue;
      }
      return { found: { automation, task, ...(screened ? { screening: screened.note } : {}) }, passed };
    }
  }
  return { passed };
}

/** What a delivery in a holding state means, as the preview says it. */
const DELIVERY_HOLD: Readonly<Record<string, string>> = {
  open: 'is open, and its follow-up works on it',
  needs_human: 'waits for a person',
  landed: 'was marked landed elsewhere by a person',
  abandoned: 'was marked abandoned by a person',
};

/** A task the preview passed over, and what holds it (as a real run's gate would hold it). */
export interface PassedOver {
  automation: ResolvedAutomation;
  task: Task;
  why: string;
}

/**
 * What the state file says holds a task back before any run, read only: its delivery's pull request
 * still open (or waiting for a person), an operator's cancel, an
 * escalation whose text has not changed, or a last run blocked by screening with no allowance
 * (screening's own decision is previewed next, by previewScreening; leases are not previewed).
 */
async function heldBack(
  store: Store,
  settings: Settings,
  automation: ResolvedAutomation,
  task: Task,
): Promise<string | undefined> {
  if (automation.config.deliver && automation.trigger.firesAreOccasions) {
    const earlier = await earlierFireDelivery(store, automation.id, task.key);
    if (earlier) {
      const pr = deliveryName(earlier);
      return `the ${pr} of an earlier fire (run ${earlier.runId}) ${DELIVERY_HOLD[earlier.state] ?? `is ${earlier.state}`}: this fire would be skipped`;
    }
  }
  if (automation.config.deliver) {
    const delivery = await openDelivery(store, task.key);
    if (delivery) {
      const pr = delivery.number === null ? `of branch ${delivery.headBranch}` : `#${delivery.number}`;
      return `its delivery holds it: pull request ${pr} (run ${delivery.runId}) ${DELIVERY_HOLD[delivery.state] ?? `is ${delivery.state}`}`;
    }
  }
  const cancelled = await cancelHold(store, task.key);
  if (cancelled !== undefined)
    return `cancelled by an operator in run ${cancelled}; \`curupira retry ${cancelled}\` (or Retry on the board) runs it again`;
  const failures = await store.getItemFailures(task.key);
  if (
    isEscalated(failures, failureBudget(settings, automation)) &&
    failures.textDigest === itemTextDigest(task)
  )
    return `escalated after ${failures.failures} failures; \`curupira reset ${failures.lastRunId}\` runs it again`;
  const [last] = await store.listRuns({ taskKey: task.key, limit: 1 });
  if (last && blockedByScreening(last)) {
    const allowed = await store.listAllowances({ runId: last.id, pending: true });
    if (allowed.length === 0)
      return `its last run ${last.id} was blocked by screening, and it stays blocked unless its text changed since; \`curupira allow ${last.id}\` lets it through once`;
  }
  return undefined;
}

/** What a run of `task` would do, shown by `run --dry-run` before anything is reserved or started. */
export interface TaskPreview {
  /** The prompt the agent would get, rendered (untrusted text fenced as in a real run). */
  prompt: string;
  /** A saved session would be resumed instead of starting afresh (the agent then gets `prompt` below). */
  resumeSessionId: string | undefined;
  /** What the agent is told when a session resumes. */
  resumePrompt: string | undefined;
  profileName: string;
  provider: string;
  /** The executable and its arguments, exactly as the driver builds them. */
  argv: string[];
  /** Index in `argv` of the prompt argument, when the prompt is one argument. */
  promptArgIndex: number | undefined;
  /** Variable names the provider adds to the agent's environment. */
  envNames: string[];
  /** Where the agent would run. */
  cwd: string;
  /** The branch of its worktree; undefined with `checkout = "main"` (the shared checkout as it is). */
  branch: string | undefined;
  /** Which code the agent would see, in words (issue 25). */
  code: string;
  /** A task across repositories: each additional repository's worktree (the agent may write there too). */
  additional?: { alias: string; repo: string; path: string; checkout: string }[];
}

/** The placeholder copilot's invocation carries where curupira picks a session id at start. */
export const PREVIEW_SESSION_ID = '<session id chosen at start>';

export async function describeTask(
  automation: ResolvedAutomation,
  task: Task,
  store: Store,
  env: NodeJS.ProcessEnv,
): Promise<TaskPreview> {
  const main = automation.config.checkout === 'main';
  const { checkoutPath } = automation.repository;
  const cwd = main
    ? checkoutPath
    : worktreePath(checkoutPath, automation.id, task.identity.taskType, task.identity.id);
  const branch = main ? undefined : branchName(automation.id, task.identity.taskType, task.identity.id);
  // As the run's prompt: a task across repositories ends with where each worktree is.
  const additional = main ? [] : additionalWorktrees(automation, task.identity.taskType, task.identity.id);
  const context = promptContext(automation, task);
  const prompt =
    renderPrompt(automation.config.prompt, context, automation.promptSyntax, automation.id) +
    itemAppendix(automation, context) +
    (branch ? repositoriesNote(automation, { repo: task.identity.repo, path: cwd, branch }, additional) : '');
  const saved = await store.getSession(task.key);
  const { profile } = automation;
  const driver = await loadDriver(profile.provider);
  const executable = profile.executable ?? driver.executable;
  // The probe gets the environment a run gives the agent (without the GitHub token), nothing more.
  const probeEnv = buildAgentEnv({
    source: env,
    providerAllowlist: driver.envAllowlist,
    extra: profile.env,
    passEnv: profile.pass_env,
    cwd: process.cwd(),
  });
  const version = await probeVersion(driver.versionArgs, executable, probeEnv);
  const agentPrompt = saved ? RESUME_SESSION_PROMPT : prompt;
  const invocation = driver.buildInvocation({
    profile,
    prompt: agentPrompt,
    worktree: cwd,
    ...(saved && !driver.assignsSessionId ? { resumeSessionId: saved.sessionId } : {}),
    ...(driver.assignsSessionId ? { assignedSessionId: saved?.sessionId ?? PREVIEW_SESSION_ID } : {}),
    ...(version ? { version } : {}),
  });
  const index = invocation.args.indexOf(agentPrompt);
  return {
    prompt: saved ? saved.prompt : prompt,
    resumeSessionId: saved?.sessionId,
    resumePrompt: saved ? RESUME_SESSION_PROMPT : undefined,
    profileName: automation.profileName,
    provider: profile.provider,
    argv: [executable, ...invocation.args],
    promptArgIndex: index < 0 ? undefined : index + 1,
    envNames: Object.keys(invocation.env).sort(),
    cwd,
    branch,
    code: describeCodeSource(codeSource(automation.config, task, automation.trigger)),
    additional: additional.map((w) => ({
      alias: w.repository.alias,
      repo: w.repository.repo ?? scrub(w.repository.remote),
      path: w.path,
      checkout: w.repository.checkoutPath,
    })),
  };
}

/** The agent CLI's version when the driver's arguments depend on it; undefined when it cannot say. */
async function probeVersion(
  args: readonly string[] | undefined,
  executable: string,
  env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
  if (!args) return undefined;
  try {
    const result = await runCommand(executable, args, { env, timeoutMs: 15_000 });
    return result.exitCode === 0 ? result.stdout.trim() : undefined;
  } catch {
    return undefined;
  }
}

/** One argument as a POSIX shell would need it written; for display only, never executed. */
export function quoteForDisplay(arg: string): string {
  if (/^[A-Za-z0-9_\-+=:,./@%]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
