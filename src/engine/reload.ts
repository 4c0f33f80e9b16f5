/**
 * Watch mode: the settings file is checked for changes at most once per `reloadIntervalMs`. A
 * valid edit takes effect at once (changed automations get fresh feeds, their queued tasks are
 * dropped and found again); an invalid one keeps the last good configuration and says why.
 */
import { ConfigError } from '../core/errors.js';
import { printableStateLocation } from '../store/index.js';
import { type KernelState, sameAutomation } from './state.js';

export class Reloader {
  private lastReloadCheck = 0;

  constructor(private readonly s: KernelState) {}

  /** Re-reads the settings file when it changed (at most once per `reloadIntervalMs`). */
  maybeReload(): void {
    const { reload, clock, log } = this.s.options;
    if (!reload) return;
    const now = clock.now();
    if (now - this.lastReloadCheck < (this.s.options.reloadIntervalMs ?? 1000)) return;
    this.lastReloadCheck = now;
    const next = reload();
    if (next === undefined) return;
    if (next instanceof ConfigError) {
      if (this.s.reloadError?.message !== next.message) {
        this.s.reloadError = { message: next.message, at: new Date(now).toISOString() };
        this.s.emitStatus();
      }
      log.warn({ error: next.message }, 'Configuration reload failed; keeping the last good configuration');
      return;
    }
    if (next.execution.state_db_path !== this.s.settings.execution.state_db_path) {
      log.warn(
        { from: this.s.settings.execution.state_db_path, to: next.execution.state_db_path },
        'state_db_path changed: the new state file is used after a restart; this process keeps the current one',
      );
    }
    if (next.execution.state_db_url !== this.s.settings.execution.state_db_url) {
      log.warn(
        {
          from: printableStateLocation(this.s.settings.execution),
          to: printableStateLocation(next.execution),
        },
        'state_db_url changed: the new state database is used after a restart; this process keeps the current one',
      );
    }
    const removed = this.s.settings.automations
      .filter((a) => !next.automations.some((b) => b.id === a.id))
      .map((a) => a.id);
    const changed = next.automations.filter((a) => {
      const old = this.s.settings.automations.find((b) => b.id === a.id);
      return !old || !sameAutomation(old, a);
    });
    this.s.settings = next;
    this.s.reloadError = null;
    this.s.core.setLimits(this.s.limits());
    this.s.feeds = this.s.buildFeeds(next, this.s.feeds);
    // A waiting remediation keeps its place: its remediator waits for it (it runs with the new settings).
    const dropped = this.s.core.clearQueue(
      (c) =>
        !this.s.pending.get(c.task.key)?.remediation &&
        (removed.includes(c.automationId) || changed.some((a) => a.id === c.automationId)),
    );
    for (const candidate of dropped) this.s.pending.delete(candidate.task.key);
    log.info(
      { automations: next.automations.length, changed: changed.map((a) => a.id), removed },
      'Configuration reloaded',
    );
  }
}
