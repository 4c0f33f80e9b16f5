/**
 * Chained automations (a trigger whose tasks follow another automation's runs). The run ledger is
 * the source of truth: a chain feed looks for finished upstream runs (since the chain was first seen)
 * that have no downstream run yet. A crash between the upstream finishing and the downstream starting therefore loses nothing.
 */
import { createHash } from 'node:crypto';
import type { ResolvedAutomation } from '../config/types.js';
import { changedNothing } from '../core/outcome.js';
import type { Task } from '../core/types.js';
import { runItemName } from '../triggers/registry.js';
import type { ChainSpec } from '../triggers/types.js';
import type { Feed, PollContext } from './feed.js';
import { taskFromItem } from './task.js';

/** How far back a chain looks in its upstream's history, per poll. */
const LOOKBACK = 200;

function chainHash(chain: ChainSpec): string {
  return createHash('sha256').update(chain.identity).digest('hex').slice(0, 16);
}

export class ChainFeed implements Feed {
  nextPollAt = 0;
  private readonly dispatched = new Set<string>();

  constructor(
    readonly automation: ResolvedAutomation,
    private readonly chain: ChainSpec,
    private readonly intervalSeconds: number,
    /** The upstream automation delivers (`deliver` is set): its runs that changed nothing do not fire by default. */
    private readonly upstreamDelivers = false,
    /** The upstream automation, when the settings have it (how its runs' items are named). */
    private readonly upstreamAutomations: readonly ResolvedAutomation[] = [],
  ) {}

  /** Whether an upstream run that changed nothing starts this chain (`on_no_changes`). */
  private firesOnNoChanges(): boolean {
    return (this.chain.onNoChanges ?? (this.upstreamDelivers ? 'skip' : 'fire')) === 'fire';
  }

  /** Polls at once when its upstream's run settled. */
  settled(automationId: string): void {
    if (automationId === this.chain.upstream) this.nextPollAt = 0;
  }

  /** Takes the chain's baseline when the engine starts, before any upstream run can finish. */
  async start(context: PollContext): Promise<void> {
    await this.since(context);
  }

  /** Runs of the upstream that finished after this moment may start this chain. */
  private async since(context: PollContext): Promise<string> {
    const key = `chain:${this.automation.id}`;
    const hash = chainHash(this.chain);
    const stored = await context.store.getMeta(key);
    const [storedHash, storedSince] = stored?.split('|') ?? [];
    if (storedHash === hash && storedSince) return storedSince;
    const now = new Date(context.clock.now()).toISOString();
    if (!context.preview) await context.store.setMeta(key, `${hash}|${now}`);
    return now;
  }

  async poll(context: PollContext): Promise<Task[]> {
    this.nextPollAt = context.clock.now() + this.intervalSeconds * 1000;
    const since = await this.since(context);
    const upstream = await context.store.listRuns({
      automationId: this.chain.upstream,
      status: this.chain.statuses,
      limit: LOOKBACK,
    });
    // A chain on an outcome fires on it whatever the run changed (a triage changes no code).
    const { outcome } = this.chain;
    const fires = outcome !== undefined || this.firesOnNoChanges();
    const candidates = upstream.filter(
      (run) =>
        run.finishedAt !== null &&
        run.finishedAt >= since &&
        !this.dispatched.has(run.id) &&
        (outcome === undefined || run.result?.outcome === outcome) &&
        (fires || !changedNothing(run)),
    );
    if (candidates.length === 0) return [];
    const done = new Set(
      (await context.store.listRuns({ automationId: this.automation.id, limit: Number.POSITIVE_INFINITY }))
        .map((run) => run.upstreamRunId)
        .filter((id): id is string => id !== null),
    );
    // Upstream runs that already have their downstream run need no second look (this poll runs every
    // `cron_poll_interval_seconds`; without this, the full downstream history would be read each time).
    for (const run of candidates) if (done.has(run.id)) this.dispatched.add(run.id);
    const fresh = candidates
      .filter((run) => !done.has(run.id))
      .reverse()
      .slice(0, context.limit);
    // What each delivered (its branch as pushed, and the commit): the prompt's `upstream_branch`.
    const deliveries = new Map(
      await Promise.all(
        fresh.map(
          async (run) => [run.id, await context.store.getPullRequest(run.id).catch(() => undefined)] as const,
        ),
      ),
    );
    const items = await this.chain.items(
      fresh,
      (run) => runItemName(run, this.upstreamAutomations),
      (run) => {
        const delivery = deliveries.get(run.id);
        return delivery?.headSha ? delivery : undefined;
      },
    );
    return items.map((item) => taskFromItem(this.automation, item));
  }

  markDispatched(task: Task): void {
    this.dispatched.add(task.item.id);
  }

  async runFinished(): Promise<void> {}
}
