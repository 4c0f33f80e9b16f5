/**
 * Opt-in GitHub writes as a feature (run-writes.ts): built the first time an automation
 * asks for a write; a finished run's result, escalation and run-log writes are queued; the repair
 * sweep runs when due; the queue is drained every round and flushed when the engine returns.
 */
import { GitHubAuthError } from '../core/errors.js';
import type { Feature, KernelPort, RunOutcome } from '../core/feature.js';
import type { GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import type { WriteQueueTiming } from '../github/write-queue.js';
import type { Logger } from '../log.js';
import type { ServiceWrite, Store, WriteRecord } from '../store/types.js';
import type { ServiceKit } from '../triggers/service.js';
import { afterRunWrites } from './after-run.js';
import type { Escalation } from './escalation.js';
import type { Leases } from './lease.js';
import { createRunWrites, type RunWrites, wantsGitHubWrites } from './run-writes.js';
import { Sweeper } from './sweep.js';

export interface WritesOptions {
  port: KernelPort;
  store: Store;
  log: Logger;
  github(): GitHubClient;
  tokens?: TokenSource;
  stopSignal: AbortSignal;
  escalation(): Escalation;
  leases(): Leases | undefined;
  /** Credentials and HTTP for writes to items outside GitHub (a Linear issue). */
  service?(): ServiceKit;
  /** The write queue's pace and backoff (default the queue's). */
  timing?: WriteQueueTiming;
}

/** The token source of an engine given none: every GitHub write fails, saying why. */
const NO_GITHUB_TOKEN: TokenSource = {
  get: () =>
    Promise.reject(
      new GitHubAuthError(
        'no GitHub token was given to the engine: GitHub writes cannot be sent (writes to Linear or Jira need none)',
      ),
    ),
  describe: async () => 'none given to the engine',
};

export class WritesFeature implements Feature<{ writes: RunWrites }> {
  readonly name = 'github-writes';
  private built: RunWrites | undefined;
  /** The periodic repair sweep (watch mode, with GitHub writes only); see sweep.ts. */
  private readonly sweeper = new Sweeper();

  constructor(private readonly options: WritesOptions) {}

  /**
   * The write queue's front, only when some automation opted in to a write. Built without a GitHub
   * token too: writes to items outside GitHub (a Linear or Jira issue) need none, and a GitHub
   * write then fails with an error that says so (queued, retried, logged), never skipped silently.
   */
  writes(): RunWrites | undefined {
    const { port } = this.options;
    const settings = port.settings();
    if (!this.built && wantsGitHubWrites(settings.automations, settings.execution)) {
      const tokens = this.options.tokens ?? NO_GITHUB_TOKEN;
      const { store, log, stopSignal } = this.options;
      const apiUrl = this.options.github().apiUrl;
      this.built = createRunWrites({
        store,
        apiUrl,
        tokens,
        clock: port.clock,
        log,
        signal: stopSignal,
        settings: () => port.settings(),
        ...this.options.timing,
        sendServiceWrite: (write, record) => this.sendServiceWrite(write, record),
      });
    }
    return this.built;
  }

  /** Sends one queued write to an item outside GitHub by its automation's trigger (any queue's). */
  async sendServiceWrite(write: ServiceWrite, record: WriteRecord): Promise<void> {
    const { port, service, stopSignal } = this.options;
    const automation = port.settings().automations.find((a) => a.id === write.automation);
    const back = automation?.trigger.writeBack;
    if (!automation || !back || !service)
      throw new Error(`automation ${write.automation} no longer writes to ${write.service}`);
    await back.send(write, record.marker, automation as never, service(), stopSignal);
  }

  runDeps(): { writes: RunWrites } | undefined {
    const writes = this.writes();
    return writes ? { writes } : undefined;
  }

  /** Writes a previous process queued but never sent go out first. */
  async started(): Promise<void> {
    void this.writes()?.drain();
  }

  async afterRun({ automation, task, run, renoted }: RunOutcome): Promise<void> {
    const writes = this.writes();
    if (!writes) return;
    // The reason of a stop is known only after the run: the result comment sent at its end is edited.
    if (renoted) await writes.resultChanged(automation, task, run);
    const { store, log, port } = this.options;
    await afterRunWrites(
      {
        store,
        settings: port.settings(),
        clock: port.clock,
        log,
        writes,
        escalation: this.options.escalation(),
      },
      automation,
      task,
      run,
    );
  }

  /** The repair sweep when due, then what is due in the queue. */
  async tick(): Promise<void> {
    // Only a queue already built is drained: building one is for the first write.
    const writes = this.built ?? this.writes();
    if (!writes) return;
    const { store, log, port } = this.options;
    const leases = this.options.leases();
    await this.sweeper.maybeRun({
      store,
      settings: port.settings(),
      clock: port.clock,
      log,
      queue: (w) => writes.queue(w),
      signal: port.pollSignal,
      ...(leases ? { leases } : {}),
    });
    void writes.drain();
  }

  stop(): Promise<void> {
    return this.built?.flush(this.options.stopSignal) ?? Promise.resolve();
  }
}
