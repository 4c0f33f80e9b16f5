/**
 * Placement only where a job can run (issue 33). A worker advertises what its settings file lets it
 * run (`HostCapabilities`) on every heartbeat; the poller gives a job only to a host whose
 * capabilities cover it, and says why when none does. A worker checks a job against its own
 * settings again before it runs it and refuses one it cannot run (an older poller, a settings file
 * changed since), so the job goes elsewhere instead of being lost. Pure functions, no I/O.
 */
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { automationRepo } from '../engine/task.js';
import type { HostCapabilities } from './types.js';

/**
 * What a job needs of the host that runs it. A host runs a job with its own settings' automation
 * (its profile, hence its provider), so the automation and its repository decide; the providers
 * and the sandbox a host advertises are shown, not matched.
 */
export interface JobNeeds {
  automationId: string;
  /** `owner/name`. */
  repo: string;
}

/**
 * The repository every task of an automation has, or undefined when its tasks may come from any
 * (a project board's cards without a `repo` filter: each card's own repository).
 */
export function pinnedRepo(automation: ResolvedAutomation): string | undefined {
  if (automation.trigger?.itemsFromAnyRepository && !automation.config.repo) return undefined;
  return automationRepo(automation);
}

/** What a host with these settings can run. */
export function capabilitiesOf(settings: Pick<Settings, 'automations'>): HostCapabilities {
  const automations = settings.automations;
  const pinned = automations.flatMap((a) => pinnedRepo(a) ?? []);
  const anyRepository = automations.filter((a) => pinnedRepo(a) === undefined).map((a) => a.id);
  return {
    automations: automations.map((a) => a.id).sort(),
    repositories: [...new Set(pinned)].sort(),
    ...(anyRepository.length > 0 ? { anyRepository: anyRepository.sort() } : {}),
    providers: [...new Set(automations.map((a) => a.profile.provider))].sort(),
    sandbox: 'none',
  };
}

/**
 * What a host lacks to run a job (`automation extra`, `repository acme/web`), or
 * undefined when it can run it. A host that advertises nothing (an older build) is given any job.
 */
export function lacks(capabilities: HostCapabilities | null, needs: JobNeeds): string | undefined {
  if (capabilities === null) return undefined;
  if (!capabilities.automations.includes(needs.automationId)) return `automation ${needs.automationId}`;
  if (capabilities.anyRepository?.includes(needs.automationId)) return undefined;
  if (!capabilities.repositories.includes(needs.repo)) return `repository ${needs.repo}`;
  return undefined;
}

/**
 * Why a worker refuses a job its poller sent: its own settings have no such automation, or the
 * automation works on another repository. Undefined when it can run it.
 */
export function refusalOf(
  automations: readonly ResolvedAutomation[],
  job: { automationId: string; repo: string },
): string | undefined {
  const automation = automations.find((a) => a.id === job.automationId);
  if (!automation) return `automation ${job.automationId} is not configured on this host`;
  const repo = pinnedRepo(automation);
  if (repo !== undefined && repo !== job.repo)
    return `automation ${job.automationId} works on ${repo} on this host, not on ${job.repo}`;
  return undefined;
}

/** The reason when no worker is live at all. */
export const NO_LIVE_WORKER = 'no live worker';

/** A live worker as placement sees it. */
export interface Candidate {
  name: string;
  capabilities: HostCapabilities | null;
}

/**
 * Why no live worker can run a job (undefined: one can). `refusedBy` are hosts that refused this
 * job although they advertised it. One short line for `status` and the fleet page.
 */
export function unplaceable(
  workers: readonly Candidate[],
  needs: JobNeeds,
  refusedBy: ReadonlyMap<string, string> = new Map(),
): string | undefined {
  if (workers.length === 0) return NO_LIVE_WORKER;
  const reasons: string[] = [];
  for (const worker of workers) {
    const refused = refusedBy.get(worker.name);
    if (refused !== undefined) {
      reasons.push(`${worker.name} refused it (${refused})`);
      continue;
    }
    const missing = lacks(worker.capabilities, needs);
    if (missing === undefined) return undefined;
    reasons.push(`${worker.name} has no ${missing}`);
  }
  return `no live worker can run it: ${reasons.join('; ')}`;
}
