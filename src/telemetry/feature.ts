/**
 * Telemetry as a feature (`otlp_endpoint`): loaded when the engine starts (nothing is loaded
 * without an endpoint), a trace per run through the executor, a span per poll, shut down when the
 * engine returns.
 */
import type { Settings } from '../config/types.js';
import type { Feature } from '../core/feature.js';
import type { Logger } from '../log.js';
import { loadTelemetry } from './index.js';
import type { Telemetry } from './types.js';

export interface TelemetryFeatureOptions {
  settings(): Settings;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** How often metrics are exported (default 60 s; tests shorten it). */
  exportIntervalMs?: number;
}

export class TelemetryFeature implements Feature<{ telemetry: Telemetry }> {
  readonly name = 'telemetry';
  private telemetry: Telemetry | undefined;
  private loaded = false;

  constructor(private readonly options: TelemetryFeatureOptions) {}

  async start(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    const { env, log, exportIntervalMs } = this.options;
    this.telemetry = await loadTelemetry({
      execution: this.options.settings().execution,
      env,
      log,
      ...(exportIntervalMs === undefined ? {} : { exportIntervalMs }),
    });
  }

  runDeps(): { telemetry: Telemetry } | undefined {
    return this.telemetry ? { telemetry: this.telemetry } : undefined;
  }

  polled(automationId: string, startedAt: number, found: number, error?: string): void {
    this.telemetry?.poll(automationId, startedAt, found, error);
  }

  async stop(): Promise<void> {
    await this.telemetry?.shutdown();
  }
}
