/**
 * The feature list, in order, and the engine it makes with the kernel. Only the composition roots
 * (`curupira run`, `serve`, the fleet's hosts, the demo) and tests import this file.
 *
 * The order matters where hooks of several features meet:
 * - gates: an operator's cancel, a budget park, the failure budget, an open delivery, a lease, then screening (the
 *   first answer other than `go` wins, so the cheap local checks come before GitHub reads);
 * - after a run: counted (failure budget), planned (retries); then its writes, its notification,
 *   an automatic pause;
 * - teardown runs backwards: remediations settle, notifications and writes flush, telemetry last.
 */

import { CancelHoldFeature } from './coordination/cancel-hold-feature.js';
import { FailureBudgetFeature } from './coordination/failure-budget-feature.js';
import { LeasesFeature } from './coordination/leases-feature.js';
import { WritesFeature } from './coordination/writes-feature.js';
import type { Feature, KernelPort } from './core/feature.js';
import type { BudgetReachedEvent } from './cost/budget.js';
import { CostFeature } from './cost/feature.js';
import { DeliveryFeature } from './delivery/feature.js';
import {
  type EngineResult,
  type ExecutorDepsPart,
  Kernel,
  type KernelOptions,
  type RemediationHost,
} from './engine/engine.js';
import type { WriteQueueTiming } from './github/write-queue.js';
import { NotifyFeature } from './notify/feature.js';
import type { Notifier } from './notify/index.js';
import { DedupeFeature } from './pipeline/dedupe.js';
import { RetriesFeature } from './retries/feature.js';
import type { EngineEvent } from './retries/unattended.js';
import type { Classifier, ClassifierSettings } from './screening/classifier/types.js';
import { ScreeningFeature } from './screening/feature.js';
import { PullRequestConfigFeature } from './screening/pr-config.js';
import { TelemetryFeature } from './telemetry/feature.js';
import { createServiceKit } from './triggers/service.js';

export type {
  AutomationStatus,
  DispatchedTask,
  EngineResult,
  EngineStatus,
  RetryResult,
  RunningTask,
  TaskRunner,
} from './engine/engine.js';
export type { EngineEvent } from './retries/unattended.js';

/** What the features take beyond the kernel's options. */
export interface FeatureOptions {
  /** A budget ran out: the run was stopped and its automation (or all, for the global one) parked. */
  onBudgetReached?(event: BudgetReachedEvent): void;
  /** Builds the screening classifier (default `createClassifier`; tests pass scripted ones). */
  classifierFactory?(settings: ClassifierSettings): Classifier | null;
  /** How often telemetry exports metrics (default 60 s; tests shorten it). */
  telemetryIntervalMs?: number;
  /** Retries scheduled, providers parked, automations paused automatically (for notifications). */
  onEvent?(event: EngineEvent): void;
  /** The retry backoff's jitter source, a number in [0, 1) (default Math.random; tests fix it). */
  random?: () => number;
  /** Notifications (default: built from `[notifications]`, the URLs read from `env`). */
  notifier?: Notifier;
  /**
   * The GitHub write queues' pace between writes and backoff after a failed one (default 1 s, and
   * 2 s doubling: GitHub's secondary limits); tests against the simulator shorten them.
   */
  writeQueue?: WriteQueueTiming;
}

export type EngineOptions = Omit<KernelOptions, 'features'> & FeatureOptions;

/** What a registered feature's factory is given: the engine's options and the kernel's port. */
export interface FeatureContext {
  options: EngineOptions;
  port: KernelPort;
}

export type FeatureFactory = (context: FeatureContext) => Feature<ExecutorDepsPart>;

/** Features registered from outside this list (tests, plugins): they come after the built-in ones. */
const registered: FeatureFactory[] = [];

/**
 * Adds a feature to every engine made from now on, after the built-in ones; returns the function
 * that removes it again. A new feature is a folder with its factory and one call here.
 */
export function registerFeature(factory: FeatureFactory): () => void {
  registered.push(factory);
  return () => {
    const at = registered.indexOf(factory);
    if (at >= 0) registered.splice(at, 1);
  };
}

/** The features in their order (see the head of this file). */
export function createFeatures(
  options: EngineOptions,
  port: KernelPort,
  kernel: RemediationHost,
): Feature<ExecutorDepsPart>[] {
  const { store, log, github, stopSignal, env } = options;
  const tokens = options.tokens ? { tokens: options.tokens } : {};
  const telemetry = new TelemetryFeature({
    settings: () => port.settings(),
    env,
    log,
    ...(options.telemetryIntervalMs === undefined ? {} : { exportIntervalMs: options.telemetryIntervalMs }),
  });
  const notify = new NotifyFeature({
    settings: options.settings,
    env,
    store,
    clock: options.clock,
    log,
    ...(options.notifier ? { notifier: options.notifier } : {}),
  });
  const cost = new CostFeature({
    port,
    store,
    log,
    onBudgetReached: (event) => {
      options.onBudgetReached?.(event);
      notify.notify({
        event: 'budget_reached',
        id: `budget:${event.budget}:${event.automationId}:${event.parkedUntil}`,
        automation: event.automationId,
        summary: `${event.automationId}: ${event.reason}`,
        details: {
          budget: event.budget,
          run: event.runId,
          limitUsd: event.limitUsd,
          spentUsd: event.spentUsd,
          parkedUntil: event.parkedUntil,
        },
      });
    },
  });
  let writes: WritesFeature | undefined;
  let leases: LeasesFeature | undefined;
  const failures = new FailureBudgetFeature({
    port,
    store,
    log,
    github,
    writing: () => writes?.writes() !== undefined,
  });
  writes = new WritesFeature({
    port,
    store,
    log,
    github,
    stopSignal,
    ...tokens,
    escalation: () => failures.escalation,
    leases: () => leases?.leases(),
    service: () => createServiceKit({ env, dir: port.settings().dir }),
    ...(options.writeQueue ? { timing: options.writeQueue } : {}),
  });
  const delivery = new DeliveryFeature({
    port,
    store,
    log,
    github,
    stopSignal,
    env,
    ...tokens,
    notify: (event) => notify.notify(event),
    sendServiceWrite: (write, record) => writes!.sendServiceWrite(write, record),
    ...(options.writeQueue ? { timing: options.writeQueue } : {}),
    remediate: (automation, task, remediation, onRun) =>
      kernel.remediate(automation, task, remediation, onRun),
  });
  const screening = new ScreeningFeature({
    port,
    store,
    log,
    github,
    writes: () => writes?.writes(),
    env,
    ...(options.classifierFactory ? { classifierFactory: options.classifierFactory } : {}),
  });
  leases = new LeasesFeature({
    port,
    store,
    log,
    github,
    stopSignal,
    ...tokens,
    writes: () => writes?.writes(),
    trust: (automation) => screening.trust(automation),
  });
  const prConfig = new PullRequestConfigFeature({
    port,
    store,
    log,
    github,
    writes: () => writes?.writes(),
    trust: (automation) => screening.trust(automation),
    screeningOff: (automation) => screening.off(automation),
  });
  const retries = new RetriesFeature({
    port,
    store,
    log,
    ...(options.random ? { random: options.random } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  const dedupe = new DedupeFeature({ github, clock: options.clock, log });
  const extra = registered.map((factory) => factory({ options, port }));
  const cancels = new CancelHoldFeature({ store, log });
  return [
    telemetry,
    cancels,
    cost,
    failures,
    writes,
    notify,
    delivery,
    leases,
    screening,
    prConfig,
    dedupe,
    retries,
    ...extra,
  ];
}

/** The kernel with the feature list: what `curupira run`, `serve` and the fleet's hosts run. */
export class Engine extends Kernel {
  constructor(options: EngineOptions) {
    super({ ...options, features: (port, kernel) => createFeatures(options, port, kernel) });
  }
}

export async function runEngine(options: EngineOptions): Promise<EngineResult> {
  return new Engine(options).run();
}
