/**
 * At start: agents a dead curupira process left running are stopped and their runs closed; saved
 * sessions are offered first, with their original tasks.
 */
import type { ResolvedAutomation } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import type { RunRecord, Task } from '../core/types.js';
import { groupsOfRun, processWorksIn, terminateGroup } from '../process/process-group.js';
import type { SessionRecord } from '../store/types.js';
import { finishInterruptedRun, reportedInTranscript } from './executor.js';
import type { KernelState } from './state.js';

/**
 * Stops agents a dead curupira process left running, and closes their runs. A run whose agent
 * had already exited is finished as its saved outcome says (its session is not resumed), and so
 * is one whose transcript ends with the agent's reported success.
 */
export async function recover(s: KernelState, inFlight?: (run: RunRecord) => boolean): Promise<RunRecord[]> {
  const { store, log, clock } = s.options;
  const closed: RunRecord[] = [];
  // A fleet poller's unfinished runs belong to the hosts running them (src/fleet/ takes back a lost host's).
  if (s.options.runner) return closed;
  const unfinished = await store.listUnfinishedRuns(
    s.options.host === undefined ? undefined : { host: s.options.host },
  );
  for (const run of unfinished) {
    // A fleet host back from a database cut: its runs still in flight here are not left over.
    // Asked run by run, now: a run the host started while this recovery was under way is its own too.
    if (inFlight?.(run)) continue;
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
    // Its agent had reported its result (the exit was never recorded): finished, not resumed.
    if (await reportedInTranscript(run)) {
      const automation = s.settings.automations.find((a) => a.id === run.automationId);
      const reported = await store.updateRun(run.id, {
        agentPid: null,
        agentOutcome: {
          status: 'succeeded',
          reason: 'the agent reported its result; its exit was not recorded',
        },
      });
      await finishInterruptedRun(s.executorDeps(), automation, reported);
      continue;
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
 * operator). A paused automation's sessions are kept for when it is resumed. A session whose
 * item no longer matches (closed, its label removed: usually why its agent was stopped) is kept
 * for a person and not resumed; it resumes when its item matches again and is offered anew.
 */
export async function resumeSessions(s: KernelState, only?: string): Promise<void> {
  const { store, log } = s.options;
  const sessions: SessionRecord[] = [];
  for (const session of await store.listSessions()) {
    if (only !== undefined && session.automationId !== only) continue;
    if (s.isPaused(session.automationId)) continue;
    if (!s.settings.automations.some((a) => a.id === session.automationId)) {
      log.info(
        { automation: session.automationId, session: session.sessionId },
        'A saved session belongs to an automation that is no longer configured; keeping it',
      );
      continue;
    }
    // A retry or a parked run waits for its time; the watch loop offers it then.
    if (s.features.some((f) => f.defers?.(session.taskKey) === true)) continue;
    sessions.push(session);
  }
  await offerSessions(s, sessions);
}

/** Offers saved sessions whose items still match; the others are kept for a person. */
export async function offerSessions(s: KernelState, sessions: readonly SessionRecord[]): Promise<void> {
  const resumable = sessions.flatMap((session) => {
    const automation = s.settings.automations.find((a) => a.id === session.automationId);
    return automation ? [{ automation, session }] : [];
  });
  const unmatched = await unmatchedSessions(s, resumable);
  for (const { automation, session } of resumable) {
    const reason = unmatched.get(session.taskKey);
    if (reason === undefined) {
      s.offer(automation, session.task, { resume: session });
      continue;
    }
    s.options.log.info(
      { automation: automation.id, id: session.task.item.id, session: session.sessionId, reason },
      'A saved session is kept, not resumed: its item no longer matches',
    );
  }
}

/**
 * Which saved sessions' items no longer match, by task key: one read per automation (its
 * trigger's reconciliation). A read that fails leaves them to be resumed, as before the check.
 */
async function unmatchedSessions(
  s: KernelState,
  sessions: readonly { automation: ResolvedAutomation; session: SessionRecord }[],
): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  const byAutomation = new Map<ResolvedAutomation, Task[]>();
  for (const { automation, session } of sessions) {
    if (!automation.trigger.unmatched) continue;
    byAutomation.set(automation, [...(byAutomation.get(automation) ?? []), session.task]);
  }
  for (const [automation, tasks] of byAutomation) {
    if (!automation.trigger.unmatched) continue;
    try {
      const found = await automation.trigger.unmatched(automation, tasks, {
        github: s.options.github,
        signal: s.pollSignal,
      });
      for (const [key, reason] of found) reasons.set(key, reason);
    } catch (error) {
      s.options.log.warn(
        { automation: automation.id, error: errorMessage(error) },
        'Could not check the items of saved sessions; resuming them',
      );
    }
  }
  return reasons;
}
