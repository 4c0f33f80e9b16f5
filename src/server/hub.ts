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
  /** The last status as boards show it (`setStatus`). */
  private shown: string | undefined;

  constructor(private readonly intervalMs = 150) {}

  /** The engine's last status (undefined until it reported one). */
  get status(): EngineStatus | undefined {
    return this.latest;
  }

  get version(): number {
    return this.sequence;
  }

  /**
   * The engine's status after each of its ticks. Only a change boards show tells them: the next
   * poll's time moves at every poll (an idle watch with a chain looks every second), and the
   * board moves its times itself, so a notice for it alone would have every open board fetch and
   * render itself again each second while nothing happens.
   */
  setStatus(status: EngineStatus): void {
    this.latest = status;
    const { nextPollAt: _moves, ...shown } = status;
    const signature = JSON.stringify(shown);
    if (signature === this.shown) return;
    this.shown = signature;
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
