/**
 * Leases as a feature (lease.ts, lease-hooks.ts): a look at the item before screening (someone
 * else's lease skips it), the claim the executor makes before the agent starts, the release of a
 * run that ended without one, and the releases a crash left undone. Built only when an automation
 * sets `lease_ttl` (or `[settings] lease_ttl` is set) and GitHub writes are possible.
 */
import type { ResolvedAutomation } from '../config/types.js';
import type { Claim, Feature, GateRequest, GateVerdict, KernelPort } from '../core/feature.js';
import type { RunRecord, Task } from '../core/types.js';
import { createGitHubClient, type GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import type { RunWrites } from '../github/write-port.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { type LeaseDeps, type Leases, wantsLeases } from './lease.js';
import { LeaseHooks } from './lease-hooks.js';

export interface LeasesOptions {
  port: KernelPort;
  store: Store;
  log: Logger;
  github(): GitHubClient;
  tokens?: TokenSource;
  stopSignal: AbortSignal;
  writes(): RunWrites | undefined;
  trust: LeaseDeps['trust'];
}

type ClaimDeps = { claim(automation: ResolvedAutomation, task: Task, run: RunRecord): Promise<Claim> };

export class LeasesFeature implements Feature<ClaimDeps> {
  readonly name = 'leases';
  private built: LeaseHooks | undefined;

  constructor(private readonly options: LeasesOptions) {}

  /** The lease hooks, only when some automation takes leases (and writes are possible). */
  hooks(): LeaseHooks | undefined {
    const writes = this.options.writes();
    const { tokens, store, log, stopSignal, port } = this.options;
    if (!this.built && writes && tokens && wantsLeases(port.settings())) {
      const client = createGitHubClient({
        apiUrl: this.options.github().apiUrl,
        tokens,
        clock: port.clock,
        log,
        maxAttempts: 1,
        signal: stopSignal,
      });
      this.built = new LeaseHooks({
        settings: () => port.settings(),
        client,
        clock: port.clock,
        log,
        store,
        trust: this.options.trust,
        queueEdit: (item, runId, marker, body) => writes.queueEdit(item, runId, marker, body),
      });
    }
    return this.built;
  }

  leases(): Leases | undefined {
    return this.hooks()?.leases;
  }

  async gate({ automation, task }: GateRequest): Promise<GateVerdict> {
    const lease = await this.hooks()?.gate(automation, task);
    if (lease?.kind === 'hold') return { kind: 'hold' };
    if (lease?.kind === 'skip') return { kind: 'record', run: lease.run };
    return { kind: 'go' };
  }

  runDeps(): ClaimDeps | undefined {
    const hooks = this.hooks();
    return hooks ? { claim: (automation, task, run) => hooks.claim(automation, task, run) } : undefined;
  }

  /** A resumed session takes its lease back; the leases of the other interrupted runs are released. */
  async started(interrupted: readonly RunRecord[], resumed: (taskKey: string) => boolean): Promise<void> {
    await this.hooks()?.releaseInterrupted(interrupted.filter((run) => !resumed(run.taskKey)));
  }

  /**
   * Whatever became of a run (even one that could not be recorded): a lease it still holds is
   * released, and a task not run because of a lease (or GitHub unreachable while claiming) is
   * polled again by a watch.
   */
  async finished(automationId: string, task: Task): Promise<void> {
    if (!this.built) return;
    await this.built.abandon(task.key);
    if (this.built.retry.delete(task.key) && this.options.port.mode === 'watch')
      this.options.port.forget(task.key, { automationId, task });
  }
}
