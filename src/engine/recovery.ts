/**
 * At start: agents a dead curupira process left running are stopped and their runs closed; saved
 * sessions are offered first, with their original tasks.
 */
import type { RunRecord } from '../core/types.js';
import { groupsOfRun, processWorksIn, terminateGroup } from '../process/process-group.js';
import { finishInterruptedRun } from './executor.js';
import type { KernelState } from './state.js';

/**
 * Stops agents a dead curupira process left running, and closes their runs. A run whose agent
 * had already exited is finished as its saved outcome says (its session is not resumed).
 */
export async function recover(s: KernelState): Promise<RunRecord[]> {
  const { store, log, clock } = s.options;
  const closed: RunRecord[] = [];
  // A fleet poller's unfinished runs belong to the hosts running them (src/fleet/ takes back a lost host's).
  if (s.options.runner) return closed;
  const unfinished = await store.listUnfinishedRuns(
    s.options.host === undefined ? undefined : { host: s.options.host },
  );
  for (const run of unfinished) {
    closed.push(run);
    if (run.agentOutcome) {
      const automation = s.settings.automations.find((a) => a.id === run.automationId);
      await finishInterruptedRun(s.executorDeps(), automation, run);
      continue;
    }
    // A `checkout = "main"` run has no worktree: its agent worked in the repository's checkout.
    const folder =
      run.worktreePath ??
      s.settings.automations.find((a) => a.id === run.automationId)?.repository.checkoutPath;
    const orphans = new Set(groupsOfRun(run.id));
    if (run.agentPid && folder && processWorksIn(run.agentPid, folder)) orphans.add(run.agentPid);
    for (const pgid of orphans) {
      log.warn(
        { automation: run.automationId, run: run.id, pid: pgid },
        'Stopping an agent left running by a previous curupira process',
      );
      await terminateGroup(pgid, s.options.killGraceMs ?? 10_000);
    }
    await store.updateRun(run.id, {
      status: 'cancelled',
      reason:
        'interrupted: curupira stopped (crash, kill or reboot) while this run was in progress; a saved session resumes in a new run',
      finishedAt: new Date(clock.now()).toISOString(),
      agentPid: null,
    });
  }
  return closed;
}

/**
 * Saved sessions go first, with their original tasks (of one automation, when resumed by an
 * operator). A paused automation's sessions are kept for when it is resumed.
 */
export async function resumeSessions(s: KernelState, only?: string): Promise<void> {
  const { store, log } = s.options;
  for (const session of await store.listSessions()) {
    if (only !== undefined && session.automationId !== only) continue;
    if (s.isPaused(session.automationId)) continue;
    const automation = s.settings.automations.find((a) => a.id === session.automationId);
    if (!automation) {
      log.info(
        { automation: session.automationId, session: session.sessionId },
        'A saved session belongs to an automation that is no longer configured; keeping it',
      );
      continue;
    }
    // A retry or a parked run waits for its time; the watch loop offers it then.
    if (s.features.some((f) => f.defers?.(session.taskKey) === true)) continue;
    s.offer(automation, session.task, { resume: session });
  }
}
