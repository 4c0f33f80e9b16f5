/**
 * One run as a pipeline of named steps: session → prompt → record → claim → workspace → agent →
 * outcome → completion, recording every step in the run ledger. A session id is saved the moment
 * the agent announces it, so a crash at any instant leaves something to resume; a run never ends
 * without a final status. Each step either hands on to the next or finishes the run.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { DEFAULT_PARK_MS, detectLimit } from '../../agents/limits.js';
import { loadDriver } from '../../agents/registry.js';
import type { AgentDriver, AgentEvent, McpServerSpec } from '../../agents/types.js';
import { type CodeSource, codeSource } from '../../core/code-source.js';
import { errorMessage } from '../../core/errors.js';
import { agentOutcome, classifyFailure, RUN_CANCELLED, runStatusFor } from '../../core/outcome.js';
import type { RunRecord, RunStatus, Usage } from '../../core/types.js';
import type { RunMeter } from '../../cost/budget.js';
import { runCost } from '../../cost/prices.js';
import { startCheckpoints } from '../../delivery/checkpoints.js';
import { remoteBranchOf } from '../../delivery/deliver.js';
import { additionalWorktrees, repositoriesNote } from '../../delivery/repositories.js';
import type { Logger } from '../../log.js';
import { runInputs } from '../../pipeline/inputs.js';
import { lastWords, reportedResultOf } from '../../pipeline/report.js';
import { argvProblem, spawnAgent } from '../../process/agent.js';
import { crashPoint } from '../../process/crash-point.js';
import { findExecutable } from '../../process/env.js';
import { RUN_ID_ENV } from '../../process/process-group.js';
import { renderPrompt } from '../../prompt/index.js';
import { githubHosts, sandboxChoice, sandboxLimits } from '../../sandbox/choice.js';
import { hiddenPathHint } from '../../sandbox/hidden-path.js';
import {
  type PreparedSandbox,
  prepareEarlySandbox,
  prepareSandbox,
  primeSandbox,
  type SandboxChoice,
  type SandboxRequest,
  toolsRelay,
  versionInSandbox,
  willContain,
} from '../../sandbox/index.js';
import type { SessionRecord, Store } from '../../store/types.js';
import type { RunTrace } from '../../telemetry/types.js';
import { pinAgentConfig } from '../../workspace/agent-config.js';
import {
  ensureCheckout,
  finishWorktree,
  headCommit,
  prepareWorktree,
  remoteTrackingCommit,
  type StartFrom,
} from '../../workspace/index.js';
import { branchName, worktreePath } from '../../workspace/paths.js';
import { copyTranscriptIntoWorktree } from '../../workspace/transcript-copy.js';
import { stallTimeoutMs, watchForStall } from '../stall.js';
import { itemAppendix, promptContext, promptTemplateHash, runInit } from '../task.js';
import { runToolsSocket } from './agent-tools.js';
import { type Cleaned, completeRun } from './complete.js';
import { EarlySandboxSlot } from './early-sandbox.js';
import {
  addUsage,
  baseAgentEnv,
  cliVersion,
  oneLineReason,
  poolSize,
  remediationSession,
  reportedAfter,
  storedPrompt,
} from './helpers.js';
import {
  type Claim,
  type ExecutorDeps,
  previousAttemptNote,
  RESUME_SESSION_PROMPT,
  type RunRequest,
} from './types.js';

type RunPatch = Parameters<Store['updateRun']>[1];

/** What the agent step needs once the workspace is ready. */
interface Launch {
  driver: AgentDriver;
  executable: string;
  args: string[];
  env: Record<string, string>;
  /** The session id curupira chose for a provider that takes one (`assignsSessionId`). */
  assignedSessionId?: string;
  /** The run's sandbox (`none` included): what actually starts, and what it found. */
  sandbox?: PreparedSandbox;
  /** The MCP servers declared for the run (a CLI that reads them from a file gets them in the sandbox). */
  mcpServers?: McpServerSpec[];
}

export async function executeTask(deps: ExecutorDeps, request: RunRequest): Promise<RunRecord> {
  return new RunPipeline(deps, request).execute();
}

class RunPipeline {
  private readonly log: Logger;
  private readonly fields: Record<string, string>;
  private readonly templateHash: string;
  private saved: SessionRecord | undefined;
  private originalPrompt = '';
  private promptError: unknown;
  private run!: RunRecord;
  private trace: RunTrace | undefined;
  private claim: Claim = { kind: 'none' };
  private cwd = '';
  private worktree: { path: string; branch: string } | undefined;
  /** Where HEAD stood before the agent: a run that leaves it there and changes nothing made no changes. */
  private baseCommit: string | null = null;
  /** The origin commit a fresh worktree was cut from (never set for a reused one, which may hold work). */
  private cutFrom: string | null = null;
  private readonly timeoutMs: number;
  /** The agent process started (a session id chosen before it names something from then on). */
  private spawned = false;
  /** Which code the agent sees, recorded with the worktree (issue 25). */
  private code: { baseCommit?: string | null; headCommit?: string | null } = {};
  /** A sandboxed run's tools, served on the socket its relay reaches (src/engine/run/agent-tools.ts). */
  private toolsSocket: SandboxRequest['tools'];
  /** The removal of the agent's sandbox, under way while the run finishes. */
  private disposing: Promise<void> | undefined;
  /** The sandbox started while the worktree is filled, until the agent step takes it. */
  private readonly early: EarlySandboxSlot;

  constructor(
    private readonly deps: ExecutorDeps,
    private readonly request: RunRequest,
  ) {
    const { task, automation } = request;
    this.log = deps.log;
    this.fields = {
      automation: automation.id,
      repo: task.identity.repo,
      type: task.identity.taskType,
      id: task.identity.id,
    };
    this.templateHash = promptTemplateHash(automation);
    this.early = new EarlySandboxSlot(deps, request, sandboxHomeKey(request), this.fields);
    this.timeoutMs = deps.execution.task_timeout_minutes * 60_000;
  }

  private iso(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  private get runFields(): Record<string, string> {
    return { ...this.fields, run: this.run.id };
  }

  async execute(): Promise<RunRecord> {
    const steps = async (): Promise<RunRecord> => {
      await this.loadSession();
      this.renderPrompt();
      await this.createRecord();
      if (!(await this.claimItem())) return this.run;
      if (this.promptError !== undefined) {
        const error = this.promptError;
        return this.finish(runStatusFor(classifyFailure(error, { stage: 'prompt' })), errorMessage(error));
      }
      if (this.request.signal.aborted) return this.finish('cancelled', 'stopped before the agent started');
      // A contained run's sandbox starts while its workspace is filled (`EarlySandboxSlot`): the
      // kernel gets ready for its control group meanwhile.
      primeSandbox(sandboxChoice(this.request.automation, this.deps.execution));
      try {
        const prepared = await this.prepareWorkspace();
        if (prepared !== true) return prepared;
        const launch = await this.prepareAgent();
        if (!('driver' in launch)) return launch;
        return await this.runAgent(launch);
      } finally {
        await this.early.drop();
        await this.disposing;
      }
    };
    const run = await steps();
    await giveBackAllowance(this.deps, this.request, run, this.spawned);
    return run;
  }

  /** Step 1: the session to continue, unless the automation's prompt or agent changed since. */
  private async loadSession(): Promise<void> {
    const { store, log } = this.deps;
    const { automation, task, remediation } = this.request;
    this.saved = remediation
      ? remediationSession(automation, task, remediation, this.templateHash, this.iso())
      : (this.request.resume ?? (await store.getSession(task.key)));
    const { saved } = this;
    if (
      !remediation &&
      saved &&
      (saved.promptTemplateHash !== this.templateHash || saved.provider !== automation.profile.provider)
    ) {
      log.info(
        { ...this.fields, session: saved.sessionId },
        "The automation's prompt or agent changed; starting a fresh session",
      );
      await store.deleteSession(task.key);
      this.saved = undefined;
    }
  }

  /** Step 2: the prompt (a resumed session continues the original task). */
  private renderPrompt(): void {
    const { automation, task, previousAttempt } = this.request;
    this.originalPrompt = this.saved?.prompt ?? '';
    if (this.saved) return;
    try {
      const context = promptContext(automation, task);
      this.originalPrompt = renderPrompt(
        automation.config.prompt,
        // The inputs come from the operator (`--set`) or the file: trusted, never fenced.
        { ...context, ...runInputs(automation.config.inputs, this.deps.inputs) },
        automation.promptSyntax,
        automation.id,
      );
      this.originalPrompt += itemAppendix(automation, context);
      if (previousAttempt) this.originalPrompt += previousAttemptNote(previousAttempt);
      this.originalPrompt += this.repositoriesNote();
    } catch (error) {
      this.promptError = error;
    }
  }

  /** A task across repositories: where each repository's worktree is (paths known before they exist). */
  private repositoriesNote(): string {
    const { automation, task } = this.request;
    const { taskType, id } = task.identity;
    const additional = additionalWorktrees(automation, taskType, id);
    if (additional.length === 0 || automation.config.checkout === 'main') return '';
    return repositoriesNote(
      automation,
      {
        repo: task.identity.repo,
        path: worktreePath(automation.repository.checkoutPath, automation.id, taskType, id),
        branch: branchName(automation.id, taskType, id),
      },
      additional,
    );
  }

  /**
   * Step 3: the run's first record. Not durable on its own (WriteOptions): nothing outside the
   * state file depends on it before the worktree and transcript are recorded, durably, just before
   * the agent starts (a claim in between queues a GitHub write, which is durable too).
   */
  private async createRecord(): Promise<void> {
    const { automation, task, remediation, screening, attempt } = this.request;
    const { saved } = this;
    this.run = await this.deps.store.createRun(
      {
        ...runInit(automation, task, 'preparing'),
        resumed: saved !== undefined,
        sessionId: saved?.sessionId ?? null,
        upstreamRunId: remediation?.deliveryRunId ?? this.request.upstreamRunId ?? null,
        ...(attempt === undefined ? {} : { attempt }),
        ...(screening
          ? {
              screeningFindings: screening.findings,
              screeningReason: screening.reason,
              screenedDigest: screening.digest,
            }
          : {}),
        ...(this.promptError === undefined ? { prompt: storedPrompt(this.originalPrompt) } : {}),
      },
      { durable: false },
    );
    const inputs = runInputs(automation.config.inputs, this.deps.inputs);
    if (Object.keys(inputs).length > 0)
      this.run = await this.deps.store.updateRun(this.run.id, { inputs }, { durable: false });
    this.deps.onUpdate?.(this.run);
    this.trace = this.deps.telemetry?.startRun(this.run, this.request.discoveredAt);
  }

  /**
   * Step 4: the item is claimed (leases); someone else's item (or GitHub unreachable) is skipped
   * with no agent and nothing written to it. A remediation's item was claimed by its delivery.
   * Returns false when the run ended here.
   */
  private async claimItem(): Promise<boolean> {
    const { automation, task, remediation } = this.request;
    const { deps } = this;
    this.claim = (remediation ? undefined : await deps.claim?.(automation, task, this.run)) ?? {
      kind: 'none',
    };
    if (this.claim.kind === 'refused') {
      const { reason } = this.claim;
      this.run = await deps.store.updateRun(this.run.id, {
        status: 'skipped',
        reason,
        finishedAt: this.iso(),
      });
      deps.onUpdate?.(this.run);
      this.log.info({ ...this.runFields, reason }, 'Skipped task: the item is not claimed');
      this.trace?.end(this.run);
      return false;
    }
    await deps.writes?.started(automation, task, this.run);
    const session = this.saved?.sessionId;
    this.log.info({ ...this.runFields, session }, this.saved ? 'Resuming task' : 'Starting task');
    return true;
  }

  private async update(patch: RunPatch): Promise<void> {
    this.run = await this.deps.store.updateRun(this.run.id, patch);
    this.deps.onUpdate?.(this.run);
  }

  /** The final record, the lease released, the result written and logged. */
  private async finish(status: RunStatus, reason: string | null, patch: RunPatch = {}): Promise<RunRecord> {
    const { deps, log } = this;
    const line = reason === null ? null : oneLineReason(reason);
    const final = { status, reason: line, finishedAt: this.iso(), agentPid: null, ...patch };
    // A full disk may refuse the final record for a moment: try again before giving up (a restart
    // closes a run left unfinished, so nothing is lost either way).
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.update(final);
        break;
      } catch (error) {
        if (attempt >= 3) throw error;
        log.warn({ ...this.runFields, error: errorMessage(error) }, 'Could not record the run; trying again');
        await deps.clock.sleep(attempt * 2000).catch(() => undefined);
      }
    }
    const { run } = this;
    if (this.claim.kind === 'held') {
      await this.claim.release(run).catch((error: unknown) => {
        log.warn(
          { ...this.runFields, error: errorMessage(error) },
          'Could not queue the release of the lease',
        );
      });
    }
    await deps.writes?.finished(this.request.automation, this.request.task, run);
    this.trace?.end(run);
    // The reference's result words (`success`, `failure`), with our finer status beside them.
    // `noop` and `skipped` (a result the agent reported) are neither: the words say so.
    const result =
      status === 'succeeded'
        ? 'success'
        : status === 'cancelled'
          ? 'cancelled'
          : status === 'noop' || status === 'skipped'
            ? status
            : 'failure';
    const logFields = {
      ...this.runFields,
      result,
      status,
      session: run.sessionId ?? undefined,
      ...(run.result ? { outcome: run.result.outcome } : {}),
    };
    if (status === 'succeeded') log.info({ ...logFields, ...(line ? { note: line } : {}) }, 'Completed task');
    else if (status === 'noop' || status === 'skipped')
      log.info({ ...logFields, reason: line }, 'Completed task: nothing to do');
    else if (status === 'cancelled') log.warn({ ...logFields, reason: line }, 'Cancelled task');
    else log.error({ ...logFields, error: line }, 'Failed task');
    return run;
  }

  /**
   * Step 5: the checkout (cloned once) and the run's worktree, or the shared checkout, or the
   * remediation's worktree. Returns true when ready, else the finished run.
   */
  private async prepareWorkspace(): Promise<true | RunRecord> {
    const { automation, task, remediation, signal, discoveredAt, previousAttempt } = this.request;
    const { log } = this;
    this.trace?.phase('checkout');
    if (remediation) {
      // The remediator prepared the pull request's worktree (kept, or recreated from its head).
      this.worktree = { ...remediation.worktree };
      this.cwd = this.worktree.path;
      return remediation.baseBranch ? this.pinAgentConfig(remediation.baseBranch) : true;
    }
    try {
      const checkout = await ensureCheckout({
        alias: automation.repository.alias,
        remote: automation.repository.remote,
        path: automation.repository.checkoutPath,
        ...(automation.repository.setup_script ? { setupScript: automation.repository.setup_script } : {}),
        timeoutMs: this.timeoutMs,
        log,
        signal,
      });
      if (automation.config.checkout === 'main') {
        this.cwd = checkout.path;
        return true;
      }
      const source = codeSource(automation.config, task, automation.trigger);
      const markReviewed = startFromOf(source);
      const prepared = await prepareWorktree({
        checkoutPath: checkout.path,
        automationId: automation.id,
        taskType: task.identity.taskType,
        taskId: task.identity.id,
        log,
        signal,
        ...(discoveredAt === undefined ? {} : { freshSince: discoveredAt }),
        reuse: this.deps.execution.reuse_worktrees,
        ...(previousAttempt
          ? { continuePushed: true, pushedBranch: remoteBranchOf(automation, this.run) }
          : {}),
        ...(markReviewed ? { markReviewed } : {}),
        ...this.early.watch(this.run.id),
      });
      this.worktree = { path: prepared.path, branch: prepared.branch };
      if (prepared.reused)
        await takeOverKeptWorktree(this.deps.store, this.deps.log, this.run.id, task.key, prepared.path);
      if (!prepared.reused && !prepared.reusedBranch && prepared.baseCommit) {
        this.baseCommit = prepared.baseCommit;
        this.cutFrom = prepared.baseCommit;
        this.code =
          source.kind === 'pr_head'
            ? {
                headCommit: prepared.baseCommit,
                baseCommit: source.baseRef ? await remoteTrackingCommit(checkout.path, source.baseRef) : null,
              }
            : { baseCommit: prepared.baseCommit };
        log.info(
          {
            ...this.fields,
            base: this.code.baseCommit ?? undefined,
            head: this.code.headCommit ?? undefined,
          },
          'The agent sees the code at this commit',
        );
      }
      this.cwd = prepared.path;
      await this.prepareAdditionalWorktrees(source);
    } catch (error) {
      const status = runStatusFor(classifyFailure(error, { stage: 'checkout', stopping: signal.aborted }));
      return this.finish(
        status,
        status === 'cancelled' ? 'stopped while preparing the checkout' : errorMessage(error),
      );
    }
    // A pull request's run: the agent configuration is the base branch's, whatever the worktree
    // was cut from (src/workspace/agent-config.ts).
    const prBase = task.item.fields.pull_request_base_ref;
    return typeof prBase === 'string' && prBase !== '' ? this.pinAgentConfig(prBase) : true;
  }

  /**
   * A task across repositories: a worktree in each additional repository, on the primary's branch
   * name, cut from `pr_base_branch` when set (else the repository's default branch).
   */
  private async prepareAdditionalWorktrees(source: CodeSource): Promise<void> {
    const { automation, task, signal, discoveredAt } = this.request;
    const markReviewed = source.kind === 'base_branch' ? startFromOf(source) : undefined;
    for (const worktree of additionalWorktrees(automation, task.identity.taskType, task.identity.id)) {
      const { repository } = worktree;
      const checkout = await ensureCheckout({
        alias: repository.alias,
        remote: repository.remote,
        path: repository.checkoutPath,
        ...(repository.setup_script ? { setupScript: repository.setup_script } : {}),
        timeoutMs: this.timeoutMs,
        log: this.log,
        signal,
      });
      const prepared = await prepareWorktree({
        checkoutPath: checkout.path,
        automationId: automation.id,
        taskType: task.identity.taskType,
        taskId: task.identity.id,
        log: this.log,
        signal,
        ...(discoveredAt === undefined ? {} : { freshSince: discoveredAt }),
        reuse: this.deps.execution.reuse_worktrees,
        ...(markReviewed ? { markReviewed } : {}),
      });
      this.log.info(
        { ...this.fields, repository: repository.alias, path: prepared.path },
        'Prepared the worktree of an additional repository',
      );
    }
  }

  /** The worktree's agent configuration becomes the base branch's; a failure fails the run (closed). */
  private async pinAgentConfig(baseBranch: string): Promise<true | RunRecord> {
    try {
      const { restored } = await pinAgentConfig({ cwd: this.cwd, base: `refs/remotes/origin/${baseBranch}` });
      if (restored.length > 0)
        this.log.info(
          { ...this.runFields, base: baseBranch, files: restored },
          'Agent configuration taken from the base branch',
        );
      return true;
    } catch (error) {
      return this.finish(
        'failed',
        `could not take the agent configuration from the base branch ${baseBranch}: ${errorMessage(error)}`,
      );
    }
  }

  /** `transcript_in_worktree`: the agent's transcript copied into its worktree (never fails the run). */
  private async transcriptIntoWorktree(transcriptPath: string): Promise<void> {
    if (!this.request.automation.config.transcript_in_worktree || !this.worktree || transcriptPath === '')
      return;
    try {
      await copyTranscriptIntoWorktree(this.worktree.path, transcriptPath);
    } catch (error) {
      this.log.warn(
        { ...this.runFields, error: errorMessage(error) },
        'Could not write the transcript into the worktree',
      );
    }
  }

  /** The worktree's fields for the record (with the transcript path, or with the cleanup). */
  private where(): RunPatch {
    return this.worktree ? { worktreePath: this.worktree.path, branch: this.worktree.branch } : {};
  }

  /** The worktree is finished: removed, pooled, or kept when it holds work. */
  private async cleanup(): Promise<Cleaned> {
    this.trace?.phase('cleanup');
    const { worktree } = this;
    if (!worktree) return { patch: {} };
    const { automation, task } = this.request;
    try {
      const result = await finishWorktree({
        checkoutPath: automation.repository.checkoutPath,
        path: worktree.path,
        branch: worktree.branch,
        log: this.log,
        key: task.key,
        baseCommit: this.cutFrom,
        pool: poolSize(this.deps.execution),
        keepAlways: automation.config.keep_worktree === 'always',
      });
      const patch = { ...this.where(), worktreeKept: result.kept, commits: result.unpushedCommits };
      return {
        patch,
        head: result.head,
        heldWork: result.forInspection ? result.unpushedCommits > 0 || result.dirty : result.kept,
      };
    } catch (error) {
      this.log.warn({ ...this.runFields, error: errorMessage(error) }, 'Could not clean up worktree');
      return { patch: { ...this.where(), worktreeKept: true } };
    }
  }

  /** The session row is not durable on its own: the run's durable update right after carries it. */
  private async saveSession(sessionId: string): Promise<void> {
    const now = this.iso();
    const { automation, task } = this.request;
    await this.deps.store.saveSession(
      {
        taskKey: task.key,
        automationId: automation.id,
        runId: this.run.id,
        provider: automation.profile.provider,
        profile: automation.profileName,
        sessionId,
        prompt: this.originalPrompt,
        promptTemplateHash: this.templateHash,
        task,
        worktreePath: this.worktree?.path ?? null,
        branch: this.worktree?.branch ?? null,
        createdAt: this.saved?.createdAt ?? now,
        updatedAt: now,
      },
      { durable: false },
    );
    await this.update({ sessionId });
  }

  /**
   * A session id chosen here names nothing until the agent starts: if it never does, forget it,
   * or the next run would tell a brand-new session to "continue" a task it never saw.
   */
  private async forgetUnstartedSession(assignedSessionId: string | undefined): Promise<void> {
    if (this.spawned || this.saved || !assignedSessionId) return;
    await this.deps.store.deleteSession(this.request.task.key);
  }

  /** A step failed before the agent ran: the run fails (or is cancelled) with the worktree cleaned. */
  private async failBeforeAgent(
    status: RunStatus,
    reason: string,
    assignedSessionId?: string,
  ): Promise<RunRecord> {
    await this.forgetUnstartedSession(assignedSessionId);
    return this.finish(status, reason, (await this.cleanup()).patch);
  }

  /**
   * Step 6: the agent's command line and environment (built from an allowlist), its session id
   * when curupira chooses it, and the transcript path in the record. Returns the launch, or the
   * finished run when the agent cannot be started.
   */
  private async prepareAgent(): Promise<Launch | RunRecord> {
    const { automation, remediation } = this.request;
    const { profile } = automation;
    const { deps, saved } = this;
    const driver = await loadDriver(profile.provider);
    const executable = profile.executable ?? driver.executable;
    const githubToken = profile.github_token && deps.tokens ? await deps.tokens.get() : undefined;
    const baseEnv = baseAgentEnv(deps, automation, driver, this.cwd, githubToken);
    // The version probe runs in a sandbox of its own when the run will have one (no prompt, but
    // still the CLI's code, which then never sees curupira's home or keys).
    const choice = sandboxChoice(automation, deps.execution);
    const resolvedCli =
      choice.mode === 'none' ? undefined : findExecutable(executable, baseEnv.PATH, this.cwd);
    const version = await cliVersion(
      driver,
      executable,
      baseEnv,
      resolvedCli
        ? (args) =>
            versionInSandbox({
              choice,
              executable: resolvedCli,
              args,
              env: baseEnv,
              stateDir: join(dirname(deps.execution.state_db_path), 'sandbox'),
              limits: sandboxLimits(deps.execution),
              keyEnv: (driver.sandbox?.keys ?? []).flatMap((route) => route.keyEnv),
            })
        : undefined,
    );
    let assignedSessionId: string | undefined;
    if (driver.assignsSessionId) {
      assignedSessionId = saved?.sessionId ?? randomUUID();
      await this.saveSession(assignedSessionId);
    }
    const mcpServers = await this.agentServers(driver, choice);
    let invocation: ReturnType<AgentDriver['buildInvocation']>;
    try {
      invocation = driver.buildInvocation({
        ...(mcpServers.length > 0 ? { mcpServers } : {}),
        env: baseEnv,
        profile,
        prompt: remediation ? remediation.prompt : saved ? RESUME_SESSION_PROMPT : this.originalPrompt,
        worktree: this.cwd,
        ...(saved && !driver.assignsSessionId ? { resumeSessionId: saved.sessionId } : {}),
        ...(assignedSessionId ? { assignedSessionId } : {}),
        ...(version ? { version } : {}),
      });
    } catch (error) {
      const status = runStatusFor(classifyFailure(error, { stage: 'launch' }));
      return this.failBeforeAgent(status, errorMessage(error), assignedSessionId);
    }
    // The run id lets a restart find this agent even if curupira dies before saving its pid.
    const env = { ...baseEnv, ...invocation.env, [RUN_ID_ENV]: this.run.id };
    const transcriptPath = join(deps.transcriptsDir, automation.id, `${this.run.id}.jsonl`);
    // The run counts as running (and, for `once`, its item as handled) only once the agent has started.
    await this.update({ ...this.where(), ...this.code, transcriptPath });
    const tooLong = argvProblem(invocation.args, env);
    if (tooLong)
      return this.failBeforeAgent('failed', `could not start ${executable}: ${tooLong}`, assignedSessionId);
    if (this.baseCommit === null) this.baseCommit = await headCommit(this.cwd).catch(() => null);
    const launch: Launch = {
      driver,
      executable,
      args: invocation.args,
      env,
      ...(assignedSessionId ? { assignedSessionId } : {}),
      ...(mcpServers.length > 0 ? { mcpServers } : {}),
    };
    return this.contain(launch);
  }

  /**
   * The `curupira mcp` server the run's trigger offers its agent (a review's findings tools),
   * declared to the CLI for this run only; none, with the reason logged, when it cannot be.
   */
  private async agentServers(driver: AgentDriver, choice: SandboxChoice): Promise<McpServerSpec[]> {
    const { automation, task } = this.request;
    const offered = automation.trigger.agentTools?.(task, this.run.id);
    // A step that declares outcomes offers the result tool (result_report); its agent can always
    // end with the result line instead, so going without the tool is no warning.
    const resultOnly = !offered && automation.config.outcomes !== undefined;
    const tools =
      offered ?? (resultOnly ? { name: 'curupira-result', args: ['--run', this.run.id] } : undefined);
    if (!tools) return [];
    const self = this.deps.selfCommand;
    const without = (reason: string): McpServerSpec[] => {
      this.log[resultOnly ? 'info' : 'warn'](
        { ...this.runFields, server: tools.name, reason },
        resultOnly
          ? 'The agent is not offered the result tool for this run; its result line is read'
          : 'The agent is not offered curupira’s tools for this run',
      );
      return [];
    };
    // A CLI that reads MCP servers from its settings file only (Gemini CLI) gets them in the
    // sandbox's private home, or outside a sandbox in a home of curupira's that a variable names
    // (`McpSettingsFile.outsideHomeEnv`); never in the user's or the repository's file.
    const contained = await willContain(choice);
    const settingsFile = driver.sandbox?.mcpSettingsFile;
    if (!driver.declaresMcpServers && !(settingsFile && (contained || settingsFile.outsideHomeEnv)))
      return without(
        settingsFile
          ? `${driver.displayName} reads MCP servers from its settings file only, and curupira declares them there only in a sandbox's private home (this run has no sandbox)`
          : `curupira does not declare MCP servers to ${driver.displayName} yet`,
      );
    // Inside a sandbox curupira's settings and state are out of reach on purpose: the CLI starts a
    // relay to the run's tools, which the engine serves on a socket in the run's folder.
    if (contained) {
      this.toolsSocket = runToolsSocket({
        store: this.deps.store,
        runId: this.run.id,
        automation,
        commit: offered?.commit,
        log: this.log,
        fields: this.runFields,
      });
      return [{ name: tools.name, ...toolsRelay(this.run.id), env: {} }];
    }
    if (!self) return without('this curupira was started without a command its agents can start');
    return [{ name: tools.name, command: self.command, args: [...self.args, 'mcp', ...tools.args], env: {} }];
  }

  /**
   * Step 6b: the sandbox (src/sandbox/): the agent's argv and environment for the inside, or the
   * run fails closed when its automation requires a sandbox that cannot start. A CLI that is not
   * installed is left to the agent step, which reports it as before.
   */
  private async contain(launch: Launch): Promise<Launch | RunRecord> {
    const { automation, task } = this.request;
    const { profile } = automation;
    const { deps } = this;
    const resolved = findExecutable(launch.executable, launch.env.PATH, this.cwd);
    if (!resolved) return launch;
    try {
      const early = await this.early.take();
      const request: SandboxRequest = {
        choice: sandboxChoice(automation, deps.execution),
        runId: this.run.id,
        homeKey: sandboxHomeKey(this.request),
        cwd: this.cwd,
        env: launch.env,
        executable: resolved,
        args: launch.args,
        realHome: deps.env.HOME,
        stateDir: join(dirname(deps.execution.state_db_path), 'sandbox'),
        driver: launch.driver.sandbox,
        profile: {
          readPaths: [...profile.sandbox_read_paths, ...(automation.trigger.sandboxReadPaths?.(task) ?? [])],
          // A task across repositories: the agent writes in each repository's worktree and checkout.
          writePaths: [
            ...profile.sandbox_write_paths,
            ...additionalWorktrees(automation, task.identity.taskType, task.identity.id).flatMap((w) => [
              w.path,
              w.repository.checkoutPath,
            ]),
          ],
          hosts: profile.sandbox_hosts,
        },
        automationHosts: automation.config.sandbox_hosts,
        githubHosts: profile.github_token ? githubHosts(deps.execution.github.api_url) : [],
        limits: sandboxLimits(deps.execution),
        ...(this.toolsSocket ? { tools: this.toolsSocket } : {}),
        ...(launch.mcpServers ? { mcpServers: launch.mcpServers } : {}),
      };
      const sandbox = early ? await prepareEarlySandbox(request, early) : await prepareSandbox(request);
      if (sandbox.policy.backend === 'none' && sandbox.policy.summary.includes('"auto"'))
        this.log.warn({ ...this.runFields, reason: sandbox.policy.summary }, 'Agent runs without a sandbox');
      return { ...launch, sandbox };
    } catch (error) {
      const status = runStatusFor(classifyFailure(error, { stage: 'launch' }));
      return this.failBeforeAgent(status, errorMessage(error), launch.assignedSessionId);
    }
  }

  /** Step 7: the agent runs, watched for its session, usage, budget, silence and checkpoints. */
  private async runAgent(launch: Launch): Promise<RunRecord> {
    const { automation, signal } = this.request;
    const { deps } = this;
    const watch = new AgentWatch(this, deps.budgets?.meter(automation, this.run.id), launch);
    const stall = watchForStall(deps.clock, stallTimeoutMs(deps.execution, automation));
    const checkpoints = this.startCheckpoints();
    this.trace?.phase('agent');
    let result: Awaited<ReturnType<typeof spawnAgent>>;
    try {
      // The sandbox's argv and environment when there is one; messages still name the agent's CLI.
      const started = launch.sandbox ?? launch;
      result = await spawnAgent({
        executable: started.executable,
        args: started.args,
        cwd: this.cwd,
        env: started.env,
        timeoutMs: this.timeoutMs,
        ...(deps.killGraceMs === undefined ? {} : { killGraceMs: deps.killGraceMs }),
        maxOutputBytes: deps.execution.max_output_bytes,
        maxLineLength: deps.execution.max_output_bytes,
        stdoutFile: watch.transcriptPath,
        stderrFile: watch.transcriptPath.replace(/\.jsonl$/, '.stderr.log'),
        onStdoutLine: (line) => {
          stall.touch();
          watch.events(watch.parser.parseLine(line));
        },
        onStderrLine: () => stall.touch(),
        onSpawn: (pid) => {
          this.spawned = true;
          const startedAt = this.iso();
          watch.queue(() => this.update({ status: 'running', startedAt, agentPid: pid }));
        },
        signal: AbortSignal.any([signal, stall.signal, watch.budgetStop.signal, watch.unrecorded.signal]),
        ...(launch.sandbox?.place ? { beforeStart: launch.sandbox.place } : {}),
        ...(launch.sandbox?.channel ? { channel: launch.sandbox.channel } : {}),
        ...(launch.sandbox?.endsWithLeader ? { groupEndsWithLeader: true } : {}),
        ...(launch.sandbox?.prestarted ? { prestarted: launch.sandbox.prestarted } : {}),
      });
      watch.events(watch.parser.end());
    } catch (error) {
      await launch.sandbox?.dispose();
      stall.stop();
      await checkpoints?.stop();
      watch.meter?.end();
      await watch.writes;
      const status = runStatusFor(classifyFailure(error, { stage: 'launch' }));
      return this.failBeforeAgent(status, errorMessage(error), launch.assignedSessionId);
    }
    stall.stop();
    // The sandbox's remains (its proxy, tools socket, folder and group) go while the run finishes;
    // the run ends once they are gone (`execute`).
    this.disposing = launch.sandbox?.dispose().catch((error: unknown) => {
      this.log.warn({ ...this.runFields, error: errorMessage(error) }, 'Could not remove the sandbox');
    });
    await checkpoints?.stop();
    await watch.writes;
    watch.meter?.end();
    await this.transcriptIntoWorktree(watch.transcriptPath);
    return this.settle(launch, watch, result, stall.stalled);
  }

  /** Pushes the branch now and then while a delivering agent works (`push_checkpoints`). */
  private startCheckpoints(): ReturnType<typeof startCheckpoints> | undefined {
    const { automation } = this.request;
    const { delivery } = this.deps;
    const { deliver } = automation.config;
    // `deliver = "head"` pushes to someone's pull request: only a finished, successful run does.
    if (!delivery || !deliver || deliver === 'head' || !automation.config.push_checkpoints || !this.worktree)
      return undefined;
    return startCheckpoints({
      cwd: this.cwd,
      remote: automation.repository.remote,
      branch: this.worktree.branch,
      remoteBranch: remoteBranchOf(automation, this.run),
      intervalMs: automation.config.checkpoint_interval * 1000,
      startedAt: this.baseCommit,
      log: this.log,
      env: this.deps.env,
      ...(automation.config.allow_config_edits === undefined
        ? {}
        : { allowConfigEdits: automation.config.allow_config_edits }),
      ...(delivery.tokens ? { tokens: delivery.tokens } : {}),
    });
  }

  /**
   * Step 8: the outcome map decides what the agent's exit means; the exit is recorded before
   * anything else (a crash from here on finishes this run on restart instead of resuming a
   * session whose work is done), then the run completes.
   */
  private async settle(
    launch: Launch,
    watch: AgentWatch,
    result: Awaited<ReturnType<typeof spawnAgent>>,
    stalled: boolean,
  ): Promise<RunRecord> {
    const { automation, remediation, signal } = this.request;
    const { deps } = this;
    const now = deps.clock.now();
    const limit = exitLimit(launch.driver, watch, result, now);
    const outcomes = automation.config.outcomes;
    const reportedResult =
      outcomes === undefined
        ? undefined
        : await reportedResultOf(deps.store, this.run.id, outcomes, watch.finalText);
    const {
      status,
      reason,
      retryAt,
      result: reported,
    } = agentOutcome({
      executable: launch.executable,
      exitCode: result.exitCode,
      signal: result.signal,
      cancelled: result.cancelled,
      timedOut: result.timedOut,
      ...(result.writeError ? { writeError: result.writeError } : {}),
      stderrTail: result.stderrTail,
      ...sandboxHint(launch.sandbox?.policy.backend, result),
      stalled,
      stallMs: stallTimeoutMs(deps.execution, automation),
      timeoutMs: this.timeoutMs,
      stopping: signal.aborted,
      cancelledAlone: signal.aborted && signal.reason === RUN_CANCELLED,
      ...(watch.budgetReason === undefined ? {} : { budgetReason: watch.budgetReason }),
      ...(watch.unrecordedReason === undefined ? {} : { unrecordedReason: watch.unrecordedReason }),
      reported: watch.reported,
      doneWithError: watch.doneWithError,
      ...(watch.reportedError === undefined ? {} : { reportedError: watch.reportedError }),
      ...(limit ? { limit: { ...limit, provider: launch.driver.displayName } } : {}),
      knownSession: watch.knownSession !== undefined,
      warning: watch.meter?.warning() ?? null,
      parkUntil: now + DEFAULT_PARK_MS,
      ...(outcomes === undefined ? {} : { outcomes }),
      ...(reportedResult === undefined ? {} : { reportedResult }),
    });
    this.trace?.phase('cleanup');
    await this.update({
      exitCode: result.exitCode,
      signal: result.signal,
      usage: watch.usage,
      model: automation.profile.model ?? null,
      costUsd: runCost(watch.usage, automation.profile.provider, automation.profile.model, deps.pricing),
      agentPid: null,
      agentOutcome: { status, reason },
      ...(retryAt ? { retryAt } : {}),
      ...(reported === undefined ? {} : { result: reported }),
      ...(launch.sandbox
        ? { screeningFindings: [...(this.run.screeningFindings ?? []), ...launch.sandbox.findings()] }
        : {}),
    });
    crashPoint('agent-exited');
    return completeRun(deps, automation, this.request.task, this.run, {
      status,
      reason,
      ...(remediation ? { remediation } : {}),
      resumed: this.saved !== undefined,
      ...(this.saved !== undefined && sessionMissing(launch.driver, [watch.reportedError, result.stderrTail])
        ? { sessionMissing: true }
        : {}),
      baseCommit: this.baseCommit,
      checkNoChanges: status === 'succeeded',
      cwd: this.cwd,
      ...(this.worktree ? { worktree: this.worktree } : {}),
      finish: (s, r, patch) => this.finish(s, r, patch),
      cleanup: () => this.cleanup(),
    });
  }

  /** For the agent watch: the run's id and fields, and saving a session it announces. */
  get watchContext(): {
    runId: string;
    runFields: Record<string, string>;
    log: Logger;
    transcriptsDir: string;
  } {
    return {
      runId: this.run.id,
      runFields: this.runFields,
      log: this.log,
      transcriptsDir: this.deps.transcriptsDir,
    };
  }

  reportedChanged(reported: boolean): void {
    this.deps.onReported?.(reported);
  }

  announceSession(sessionId: string): Promise<void> {
    return this.saveSession(sessionId);
  }

  get savedSessionId(): string | undefined {
    return this.saved?.sessionId;
  }

  get transcriptPath(): string {
    return this.run.transcriptPath ?? '';
  }
}

/** Where a worktree starts when it is not the default branch (issue 25). */
function startFromOf(source: CodeSource): StartFrom | undefined {
  if (source.kind === 'base_branch')
    return {
      remoteRef: `refs/heads/${source.branch}`,
      trackingRef: `refs/remotes/origin/${source.branch}`,
      label: `pr_base_branch ${source.branch}`,
    };
  if (source.kind === 'commit')
    return {
      remoteRef: `refs/heads/${source.branch}`,
      trackingRef: `refs/remotes/origin/${source.branch}`,
      commit: source.sha,
      label: `${source.branch} at ${source.sha.slice(0, 12)}`,
    };
  if (source.kind === 'pr_head')
    return {
      remoteRef: `refs/pull/${source.number}/head`,
      trackingRef: `refs/remotes/origin/pull/${source.number}/head`,
      ...(source.headSha ? { commit: source.headSha } : {}),
      label: `pull request #${source.number}'s head`,
    };
  return undefined;
}

/**
 * What the run sees of a running agent, from its output: the session it announces (saved at
 * once, in order), its usage (metered against the budgets: a spent budget stops the agent like a
 * cancel does, its session kept), and the error it reports.
 */
class AgentWatch {
  readonly parser: ReturnType<AgentDriver['createParser']>;
  readonly budgetStop = new AbortController();
  /** Aborted when the store did not take the run's start or session (see `queue`). */
  readonly unrecorded = new AbortController();
  unrecordedReason: string | undefined;
  budgetReason: string | undefined;
  reportedError: string | undefined;
  doneWithError = false;
  /** The provider's closing event said the task succeeded, and nothing came after it. */
  reported = false;
  usage: Usage | null = null;
  knownSession: string | undefined;
  /** The agent's last words: its closing event's result, else its last message (the result line's place). */
  finalText = '';
  writes: Promise<void> = Promise.resolve();
  readonly transcriptPath: string;

  constructor(
    private readonly pipeline: RunPipeline,
    readonly meter: RunMeter | undefined,
    launch: Launch,
  ) {
    this.parser = launch.driver.createParser();
    this.knownSession = pipeline.savedSessionId ?? launch.assignedSessionId;
    this.transcriptPath = pipeline.transcriptPath;
  }

  /**
   * Record writes happen one after another, in the order the agent's output asked for them. A
   * start (or session) the store did not take stops the agent: a run nobody can see as started,
   * or a session nobody can resume, would be run again from scratch later.
   */
  queue(work: () => Promise<void>): void {
    const { log, runFields } = this.pipeline.watchContext;
    this.writes = this.writes.then(work).catch((error: unknown) => {
      log.error({ ...runFields, error: errorMessage(error) }, 'Could not save the agent session');
      this.unrecordedReason ??= errorMessage(error);
      this.unrecorded.abort();
    });
  }

  events(events: AgentEvent[]): void {
    const { log, runFields } = this.pipeline.watchContext;
    for (const event of events) {
      if (event.kind === 'session' && event.sessionId !== this.knownSession) {
        this.knownSession = event.sessionId;
        const id = event.sessionId;
        log.info({ ...runFields, session: id }, 'Agent session started');
        this.queue(() => this.pipeline.announceSession(id));
      } else if (event.kind === 'usage') {
        this.usage = addUsage(this.usage, event);
        const reading = this.meter?.usage(this.usage);
        if (reading?.stop !== undefined && this.budgetReason === undefined) {
          this.budgetReason = reading.stop;
          log.warn({ ...runFields, reason: this.budgetReason }, 'Budget reached: stopping the agent');
          this.budgetStop.abort();
        }
      } else if (event.kind === 'error') {
        this.reportedError = event.message;
      } else if (event.kind === 'done' && event.isError) {
        this.doneWithError = true;
        if (event.result) this.reportedError = event.result;
      }
      this.finalText = lastWords(this.finalText, event);
      this.setReported(reportedAfter(this.reported, event, this.doneWithError));
    }
  }

  private setReported(reported: boolean): void {
    if (reported === this.reported) return;
    this.reported = reported;
    this.pipeline.reportedChanged(reported);
  }
}

/**
 * A run that a person's `allow` let through, and that failed before its agent started (a clone or
 * checkout that failed, say), never used the allowance: it is given back, so the retry (or the next
 * dispatch) of the same text runs instead of being held again.
 */
async function giveBackAllowance(
  deps: ExecutorDeps,
  request: RunRequest,
  run: RunRecord,
  spawned: boolean,
): Promise<void> {
  const allowance = request.screening?.allowance;
  if (!allowance || spawned || run.status !== 'failed') return;
  try {
    await deps.store.addAllowance(allowance.runId, allowance.allowedBy, allowance.allowedAt);
    deps.log.info(
      { run: run.id, blocked: allowance.runId },
      'The allowed run failed before its agent started: the allowance stays for its next run',
    );
  } catch (error) {
    deps.log.warn({ run: run.id, error: errorMessage(error) }, 'Could not give the allowance back');
  }
}

/** The agent CLI's output says it has no conversation to resume (`AgentDriver.missingSession`). */
function sessionMissing(driver: AgentDriver, texts: readonly (string | undefined)[]): boolean {
  const patterns = driver.missingSession ?? [];
  return texts.some((text) => text !== undefined && patterns.some((pattern) => pattern.test(text)));
}

/** Names a run's private home: the runs of one task and profile share it (a resumed session finds its files). */
function sandboxHomeKey(request: RunRequest): string {
  return `${request.task.key}\0${request.automation.profileName}`;
}

/** A failed sandboxed agent that could not see a file it needed: the reason says which and what to do. */
function sandboxHint(
  backend: string | undefined,
  result: { exitCode: number | null; stderrTail: string },
): { hint?: string } {
  if (!backend || backend === 'none' || result.exitCode === 0 || result.exitCode === null) return {};
  const hint = hiddenPathHint(result.stderrTail, backend);
  return hint === undefined ? {} : { hint };
}

/** A provider's usage or rate limit in a failed agent's output (none for a success). */
function exitLimit(
  driver: AgentDriver,
  watch: AgentWatch,
  result: { exitCode: number | null; stderrTail: string },
  now: number,
): ReturnType<typeof detectLimit> {
  if (result.exitCode === 0 && !watch.doneWithError) return undefined;
  return detectLimit(driver.limits ?? [], [watch.reportedError, result.stderrTail], now);
}

/**
 * A run works on in the worktree an earlier run of its item kept (a resume, a retry, a run after a
 * restart): that worktree is this run's now, and the earlier runs no longer keep it (else the
 * board's Needs attention would go on offering to remove a worktree this run delivered and pooled).
 */
async function takeOverKeptWorktree(
  store: Store,
  log: Logger,
  runId: string,
  taskKey: string,
  path: string,
): Promise<void> {
  const earlier = await store.listRuns({ taskKey, limit: 50 }).catch(() => [] as RunRecord[]);
  for (const run of earlier) {
    if (run.id === runId || !run.worktreeKept || run.worktreePath !== path) continue;
    await store.updateRun(run.id, { worktreeKept: false }).catch((error: unknown) => {
      log.warn(
        { run: run.id, error: errorMessage(error) },
        'Could not record that a later run took over a kept worktree',
      );
    });
  }
}
