/**
 * Screening as a feature (gate.ts): a new event-triggered task is screened before its prompt is
 * rendered; a blocked item is recorded once as `blocked` and held while its text is unchanged; an
 * item allowed since (`curupira allow`) is offered again. Resumed sessions were screened when they
 * started. Also the trust rules that leases share.
 */
import { resolveScreening } from '../config/screening.js';
import type { ResolvedAutomation } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import type { Feature, GateRequest, GateVerdict, KernelPort } from '../core/feature.js';
import type { GitHubClient } from '../github/client.js';
import type { RunWrites } from '../github/write-port.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { createClassifier } from './classifier/lazy.js';
import type { Classifier, ClassifierSettings } from './classifier/types.js';
import { type GateDeps, gateTask, trustRules } from './gate.js';
import { TeamCache } from './gate-context.js';
import type { TrustRules } from './trust.js';

export interface ScreeningOptions {
  port: KernelPort;
  store: Store;
  log: Logger;
  github(): GitHubClient;
  writes(): RunWrites | undefined;
  /** The engine's environment (what an agent classifier's CLI environment is built from). */
  env?: NodeJS.ProcessEnv;
  /** Builds the screening classifier (default `createClassifier`; tests pass scripted ones). */
  classifierFactory?(settings: ClassifierSettings): Classifier | null;
}

export class ScreeningFeature implements Feature {
  readonly name = 'screening';
  private readonly classifiers = new Map<string, Classifier | null>();
  private readonly teams: TeamCache;

  constructor(private readonly options: ScreeningOptions) {
    this.teams = new TeamCache(() => options.port.clock.now());
  }

  private deps(): GateDeps {
    const { store, log, github, port } = this.options;
    return {
      store,
      log,
      clock: port.clock,
      github,
      teams: this.teams,
      classifier: (settings) => {
        const key = JSON.stringify(settings);
        if (!this.classifiers.has(key))
          this.classifiers.set(
            key,
            this.options.classifierFactory
              ? this.options.classifierFactory(settings)
              : createClassifier(settings, this.options.env),
          );
        return this.classifiers.get(key) ?? null;
      },
    };
  }

  private settingsFor(automation: ResolvedAutomation) {
    const settings = this.options.port.settings();
    return resolveScreening(settings.execution.screening, automation.config.screening, settings.dir, {
      own: automation.profileName,
      profiles: settings.agents.profiles,
    });
  }

  /** Whether screening is off for an automation (`mode = "off"`). */
  off(automation: ResolvedAutomation): boolean {
    return this.settingsFor(automation).mode === 'off';
  }

  /** Who an automation trusts (leases share these rules). */
  trust(automation: ResolvedAutomation): Promise<TrustRules> {
    return trustRules(this.deps(), this.settingsFor(automation));
  }

  async gate({ automation, task, resumed, signal }: GateRequest): Promise<GateVerdict> {
    if (resumed) return { kind: 'go' };
    const gate = await gateTask(this.deps(), automation, task, this.settingsFor(automation), signal);
    if (gate.kind === 'stopped') {
      await this.options.writes()?.finished(automation, task, gate.run);
      return { kind: 'record', run: gate.run };
    }
    if (gate.kind === 'held') {
      this.options.log.info(
        { automation: automation.id, id: task.item.id, run: gate.previous.id },
        'Still blocked: the text is unchanged since its blocked run; `curupira allow` lets it through once',
      );
      return { kind: 'hold', previous: gate.previous };
    }
    return { kind: 'go', task: gate.task, ...(gate.screening ? { screening: gate.screening } : {}) };
  }

  /** Watch mode: an item allowed (`curupira allow`) since it was blocked is offered again. */
  async beforePoll(): Promise<void> {
    try {
      const pending = await this.options.store.listAllowances({ pending: true });
      for (const allowance of pending) this.options.port.forget(allowance.taskKey, { pollNow: true });
    } catch (error) {
      this.options.log.warn({ error: errorMessage(error) }, 'Could not read allowances');
    }
  }
}
