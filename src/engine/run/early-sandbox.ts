/**
 * A contained run's sandbox started while its worktree is filled (src/sandbox/index.ts,
 * `startSandboxEarly`): bubblewrap with its mounts, control group and proxy forwarder start as
 * soon as the worktree is registered at its path, so their start overlaps git writing the files,
 * and the agent step later only launches the agent in it. A run holds at most one; whatever it
 * does not take is stopped when the run ends.
 */
import { dirname, join } from 'node:path';
import { loadDriver } from '../../agents/registry.js';
import type { ResolvedAutomation } from '../../config/types.js';
import { additionalWorktrees } from '../../delivery/repositories.js';
import type { Logger } from '../../log.js';
import { findExecutable } from '../../process/env.js';
import { RUN_ID_ENV } from '../../process/process-group.js';
import { sandboxChoice, sandboxLimits } from '../../sandbox/choice.js';
import { type EarlySandbox, startSandboxEarly } from '../../sandbox/index.js';
import { baseAgentEnv } from './helpers.js';
import type { ExecutorDeps, RunRequest } from './types.js';

export class EarlySandboxSlot {
  private pending: Promise<EarlySandbox | undefined> | undefined;
  private readonly automation: ResolvedAutomation;
  private readonly log: Logger;

  constructor(
    private readonly deps: ExecutorDeps,
    private readonly request: RunRequest,
    private readonly homeKey: string,
    private readonly fields: Record<string, string>,
  ) {
    this.automation = request.automation;
    this.log = deps.log;
  }

  /**
   * The worktree step's `onLocated`, when this run's sandbox may start early: a contained run of a
   * worktree of its own (a task across repositories mounts worktrees made later, and is left to the
   * usual start).
   */
  watch(runId: string): { onLocated?(path: string | null): void } {
    const { automation } = this;
    const { identity } = this.request.task;
    if (sandboxChoice(automation, this.deps.execution).mode === 'none') return {};
    if (additionalWorktrees(automation, identity.taskType, identity.id).length > 0) return {};
    return { onLocated: (path) => this.located(path, runId) };
  }

  /** The worktree is at `cwd` (null: the one announced before was dropped, and its sandbox goes). */
  located(cwd: string | null, runId: string): void {
    void this.drop();
    if (cwd !== null) this.pending = this.start(cwd, runId).catch(() => undefined);
  }

  /** The sandbox started early, for the agent step to launch in; the run then owns it. */
  async take(): Promise<EarlySandbox | undefined> {
    const pending = this.pending;
    this.pending = undefined;
    const early = await pending;
    if (early)
      this.log.debug({ ...this.fields, cwd: early.cwd }, 'The sandbox started while the worktree was filled');
    return early;
  }

  /** Stops a sandbox nobody took. */
  drop(): Promise<void> {
    const pending = this.pending;
    this.pending = undefined;
    return pending ? pending.then((early) => early?.abandon()).catch(() => {}) : Promise.resolve();
  }

  private async start(cwd: string, runId: string): Promise<EarlySandbox | undefined> {
    const { automation, deps } = this;
    const { profile } = automation;
    const driver = await loadDriver(profile.provider);
    const executable = profile.executable ?? driver.executable;
    const path = baseAgentEnv(deps, automation, driver, cwd).PATH;
    const resolved = findExecutable(executable, path, cwd);
    if (!resolved) return undefined;
    return startSandboxEarly({
      choice: sandboxChoice(automation, deps.execution),
      runId,
      homeKey: this.homeKey,
      cwd,
      executable: resolved,
      realHome: deps.env.HOME,
      stateDir: join(dirname(deps.execution.state_db_path), 'sandbox'),
      driver: driver.sandbox,
      profile: {
        readPaths: [
          ...profile.sandbox_read_paths,
          ...(automation.trigger.sandboxReadPaths?.(this.request.task) ?? []),
        ],
        writePaths: profile.sandbox_write_paths,
      },
      limits: sandboxLimits(deps.execution),
      // Until the agent starts, the sandbox's processes carry only the run's id: a restart finds
      // them by it, as it finds an agent's.
      startEnv: { PATH: '/usr/bin:/bin', [RUN_ID_ENV]: runId },
    });
  }
}
