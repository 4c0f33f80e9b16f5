/**
 * The live status on a terminal: one line, redrawn in place, saying what runs and for how long,
 * what is queued and when the next poll is. Log lines print above it.
 */
import type { EngineStatus } from '../engine/engine.js';

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/**
 * One line of at most `width` characters. The running count comes first and the queued count and
 * the poll or stop notice last; when the line is too long, per-run details give way to `+N more`,
 * so the counts stay visible on an 80-column terminal.
 */
export function renderStatus(status: EngineStatus, now: number, width = 80): string {
  const head = `${status.running.length}/${status.maxActive} running`;
  const tail: string[] = [];
  if (status.queued > 0) tail.push(`${status.queued} queued`);
  if (status.waiting > 0) tail.push(`${status.waiting} waiting beyond the batch`);
  if (status.stopping) tail.push('stopping…');
  else if (status.draining) tail.push('finishing running agents (Ctrl+C again stops them now)');
  else if (status.nextPollAt !== undefined && status.running.length === 0)
    tail.push(`next poll in ${formatDuration(status.nextPollAt - now)}`);
  const details = status.running
    .slice(0, 3)
    .map(
      (run) =>
        `${run.automationId} ${run.item} ${run.status === 'running' ? formatDuration(now - run.startedAt) : run.status}`,
    );
  const join = (shown: string[], hidden: number): string =>
    [head, ...shown, ...(hidden > 0 ? [`+${hidden} more`] : []), ...tail].join(' · ');
  for (let shown = details.length; shown >= 0; shown -= 1) {
    const line = join(details.slice(0, shown), status.running.length - shown);
    if (line.length <= width) return line;
  }
  const bare = [head, ...tail].join(' · ');
  return bare.length > width ? `${bare.slice(0, width - 1)}…` : bare;
}

export class StatusLine {
  private status: EngineStatus | undefined;
  private shown = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stream: NodeJS.WritableStream & { columns?: number },
    private readonly now: () => number = Date.now,
  ) {}

  update(status: EngineStatus): void {
    this.status = status;
    this.draw();
    if (!this.timer) {
      this.timer = setInterval(() => this.draw(), 1000);
      this.timer.unref();
    }
  }

  private draw(): void {
    if (!this.status) return;
    const columns = this.stream.columns && this.stream.columns >= 20 ? this.stream.columns : 80;
    this.stream.write(`\r${renderStatus(this.status, this.now(), columns - 1)}\x1b[K`);
    this.shown = true;
  }

  /** Prints a line above the status line. */
  write(text: string): void {
    if (this.shown) this.stream.write('\r\x1b[K');
    this.stream.write(text);
    if (this.shown) this.draw();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.shown) this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
