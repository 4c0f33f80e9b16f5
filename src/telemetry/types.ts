/**
 * What the engine and the executor see of telemetry (src/telemetry/otel.ts implements it). This
 * file imports nothing of OpenTelemetry: without `otlp_endpoint` none of it is ever loaded.
 */
import type { RunRecord } from '../core/types.js';
import type { RateLimitInfo } from '../github/client.js';

/** The phases of a run, each a child span of its `curupira.run` span. */
export type RunPhase = 'discovery' | 'checkout' | 'agent' | 'cleanup';

/** The trace of one run: `phase` ends the current phase's span and starts the next one. */
export interface RunTrace {
  phase(name: RunPhase): void;
  /** Ends the open phase and the run's span with the final record's attributes, and counts the run. */
  end(run: RunRecord): void;
}

export interface Telemetry {
  /** Starts the trace of a run just recorded; `discoveredAt` (epoch ms) opens a discovery span. */
  startRun(run: RunRecord, discoveredAt?: number): RunTrace;
  /** One poll of an automation's feed: a `curupira.poll` span and its duration. */
  poll(automation: string, startedAt: number, found: number, error?: string): void;
  /** A rate-limit state GitHub reported (response headers): the points spent since the last one. */
  rateLimit(rate: RateLimitInfo): void;
  /** Exports what is buffered, then stops (engine stop). */
  shutdown(): Promise<void>;
}
