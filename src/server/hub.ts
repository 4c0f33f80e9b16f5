/**
 * Tells board clients that something changed. Engine updates are coalesced (at most one notice per
 * `intervalMs`), so many open boards cost the engine one timer, not one write per client per change.
 */
import type { EngineStatus } from '../engine/engine.js';

export type HubListener = (sequence: number) => void;

export class Hub {
  private latest: EngineStatus | undefined;
  private readonly listeners = new Set<HubListener>();
  private timer: NodeJS.Timeout | undefined;
  private sequence = 0;

  constructor(private readonly intervalMs = 150) {}

  /** The engine's last status (undefined until it reported one). */
  get status(): EngineStatus | undefined {
    return this.latest;
  }

  get version(): number {
    return this.sequence;
  }

  setStatus(status: EngineStatus): void {
    this.latest = status;
    this.changed();
  }

  changed(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sequence += 1;
      for (const listener of this.listeners) listener(this.sequence);
    }, this.intervalMs);
    this.timer.unref();
  }

  subscribe(listener: HubListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get clients(): number {
    return this.listeners.size;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.listeners.clear();
  }
}
