/**
 * Delivery as a feature: pushes and pull requests of automations with `deliver` (through the
 * executor), an item whose delivery is open (or closed and decided by a person) held back, and,
 * in watch mode, the delivered pull requests followed until they merge, with remediation runs
 * for reviews, failing checks and conflicts.
 */

import type { ResolvedAutomation } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import type { Feature, GateRequest, GateVerdict, KernelPort } from '../core/feature.js';
import { recordSkippedRun } from '../core/task-fields.js';
import type { RunRecord, Task } from '../core/types.js';
import { createGitHubClient, type GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import type { ServiceWriteSender, WriteQueueTiming } from '../github/write-queue.js';
import type { Logger } from '../log.js';
import type { NotificationEvent } from '../notify/index.js';
import type { Store } from '../store/types.js';
import { type DeliveryDeps, deliveryName, earlierFireDelivery } from './deliver.js';
import { createFollower, DEFAULT_FOLLOW_INTERVAL_SECONDS } from './follow.js';
import { followHooks } from './follow-hooks.js';
import { createDeliveryDeps, openDelivery } from './index.js';
import { createRemediator, type Remediator } from './remediation.js';
import type { RemediationRun } from './remediation-types.js';

export interface DeliveryFeatureOptions {
  port: KernelPort;
  store: Store;
  log: Logger;
  github(): GitHubClient;
  tokens?: TokenSource;
  stopSignal: AbortSignal;
  /** The engine's environment (the review of what a remediation pushes). */
  env?: NodeJS.ProcessEnv;
  notify(event: NotificationEvent): void;
  /** Sends the follower's writes to items outside GitHub (a Linear or Jira issue moved at merge). */
  sendServiceWrite?: ServiceWriteSender;
  /** The follower's write queue's pace and backoff (default the queue's). */
  timing?: WriteQueueTiming;
  /** Runs a remediation through the kernel's scheduler (see `Kernel.remediate`). */
  remediate(
    automation: ResolvedAutomation,
    task: Task,
    remediation: RemediationRun,
    onRun: (run: RunRecord) => void,
  ): Promise<RunRecord | undefined>;
}

/** Answers the follower keeps for conditional reads: about eight per open pull request. */
const FOLLOW_READS_KEPT = 400;

export class DeliveryFeature implements Feature<{ delivery: DeliveryDeps }> {
  readonly name = 'delivery';
  private follower: ReturnType<typeof createFollower> | undefined;
  private remediator: Remediator | undefined;
  /** The stable source `createDeliveryDeps` caches its deps by. */
  private readonly source: Parameters<typeof createDeliveryDeps>[1];

  constructor(private readonly options: DeliveryFeatureOptions) {
    const { store, log, port, tokens, github, stopSignal } = options;
    this.source = { store, log, clock: port.clock, github, stopSignal, ...(tokens ? { tokens } : {}) };
  }

  private automation(id: string): ResolvedAutomation | undefined {
    return this.options.port.settings().automations.find((a) => a.id === id);
  }

  runDeps(): { delivery: DeliveryDeps } | undefined {
    const delivery = createDeliveryDeps(this.options.port.settings().automations, this.source);
    return delivery ? { delivery } : undefined;
  }

  async gate({ automation, task, resumed }: GateRequest): Promise<GateVerdict> {
    if (!automation.config.deliver) return { kind: 'go' };
    if (automation.trigger.firesAreOccasions && !resumed) {
      const skipped = await this.occasionHeld(automation, task);
      if (skipped) return { kind: 'record', run: skipped };
    }
    const delivered = await openDelivery(this.options.store, task.key);
    if (!delivered) return { kind: 'go' };
    this.options.log.info(
      { automation: automation.id, id: task.item.id, pullRequest: delivered.number, run: delivered.runId },
      'Its delivery holds it back (pull request open, or closed and decided by a person): not run again',
    );
    return { kind: 'hold' };
  }

  /**
   * A schedule's fire while a pull request of an earlier fire is still open (or waits for a
   * person): recorded as skipped, with the pull request and what lets the next fire run.
   */
  private async occasionHeld(automation: ResolvedAutomation, task: Task): Promise<RunRecord | undefined> {
    const { store, port, log } = this.options;
    const open = await earlierFireDelivery(store, automation.id, task.key);
    if (!open) return undefined;
    const pr = deliveryName(open);
    const waits = open.state === 'open' ? 'is still open' : 'waits for a person';
    const reason = `skipped: ${pr} of run ${open.runId} ${waits}; this fire opens no second one beside it (merge or close it, and the next fire runs)`;
    const id = await recordSkippedRun(
      store,
      automation,
      task,
      reason,
      new Date(port.clock.now()).toISOString(),
    );
    log.info(
      { automation: automation.id, id: task.item.id, pullRequest: open.number, run: id },
      'Skipped a fire: a pull request of an earlier fire is still open',
    );
    return store.getRun(id);
  }

  /** Watch mode: reads the delivered pull requests still open, each at most once per `follow_interval`. */
  async tick(): Promise<void> {
    const { tokens, port, store, log, stopSignal } = this.options;
    const following = port.settings().automations.filter((a) => a.config.deliver === 'pr');
    if (!tokens || following.length === 0) return;
    const clock = port.clock;
    const github = createGitHubClient({
      apiUrl: this.options.github().apiUrl,
      tokens,
      clock,
      log,
      maxAttempts: 1,
      signal: stopSignal,
      // A pull request waiting for a review is read the same every `follow_interval`: conditional
      // reads of what did not change cost no rate limit (about eight URLs per pull request).
      conditionalReads: FOLLOW_READS_KEPT,
    });
    this.remediator ??= createRemediator({
      store,
      clock,
      log,
      github,
      tokens,
      ...(this.options.env ? { env: this.options.env } : {}),
      automation: (id) => this.automation(id),
      execute: (automation, task, remediation, onRun) =>
        this.options.remediate(automation, task, remediation, onRun),
      stopping: () => stopSignal.aborted,
    });
    const remediator = this.remediator;
    this.follower ??= createFollower({
      store,
      clock,
      log,
      github,
      remediate: (record, request) => remediator.remediate(record, request),
      inFlight: (record) => remediator.resumeInFlight(record),
      intervalSeconds: (id) => this.automation(id)?.config.follow_interval ?? DEFAULT_FOLLOW_INTERVAL_SECONDS,
      ...this.options.timing,
      ...(this.options.sendServiceWrite ? { sendServiceWrite: this.options.sendServiceWrite } : {}),
      ...followHooks({
        store,
        log,
        automation: (id) => this.automation(id),
        notify: (event) => this.options.notify(event),
        redevelop: (record) => {
          port.forget(record.taskKey, { automationId: record.automationId });
          port.pollSoon(record.automationId);
        },
      }),
    });
    await this.follower.sweep().catch((error: unknown) => {
      log.warn({ error: errorMessage(error) }, 'Could not follow the delivered pull requests');
    });
  }

  /** Remediations still running finish (or give up) before the engine returns. */
  async stop(): Promise<void> {
    await this.remediator?.idle();
  }
}
