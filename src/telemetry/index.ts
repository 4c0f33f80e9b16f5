/**
 * OpenTelemetry export (`[settings] otlp_endpoint`, docs/telemetry.md). The SDK is imported only
 * when an endpoint is set, so without one start-up and idle memory are unchanged.
 */
import { connect } from 'node:net';
import type { ExecutionSettings } from '../config/types.js';
import { importOptional } from '../core/optional.js';
import { observeRateLimits } from '../github/client.js';
import type { Logger } from '../log.js';
import { registerSecret } from '../security/redact.js';
import type { Telemetry } from './types.js';

export type { RunPhase, RunTrace, Telemetry } from './types.js';

/** The optional dependencies `otel.ts` imports. */
export const OTEL_PACKAGES = ['@opentelemetry/'] as const;

/** How long a stop waits for the last exports. */
const SHUTDOWN_LIMIT_MS = 5000;

export interface TelemetryOptions {
  execution: ExecutionSettings;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** How often metrics are exported (default 60 s); everything left is exported on shutdown. */
  exportIntervalMs?: number;
  /** Loads the implementation (tests count the loads). */
  load?: () => Promise<typeof import('./otel.js')>;
  /** How long a stop waits, at most, for the last exports (default 5 s). */
  shutdownLimitMs?: number;
}

/** How long the look for a listening collector at a stop may take. */
const REACH_LIMIT_MS = 1000;

/**
 * Resolves with the reason when nothing can be sent to the collector (nobody listens at its port,
 * its name does not resolve); never resolves while something listens, or when the look takes
 * longer than `REACH_LIMIT_MS` (a slow network is not an absent collector).
 */
function unreachable(endpoint: string): { found: Promise<string>; cancel(): void } {
  let cancel = (): void => {};
  const found = new Promise<string>((resolve) => {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      return;
    }
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port });
    const timer = setTimeout(() => socket.destroy(), REACH_LIMIT_MS);
    timer.unref();
    cancel = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    socket.once('connect', cancel);
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const code = error.code ?? '';
      if (['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(code))
        resolve(code);
    });
  });
  return { found, cancel: () => cancel() };
}

/** `key=value,key2=value2` → headers; pieces without `=` are ignored. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const piece of (text ?? '').split(',')) {
    const at = piece.indexOf('=');
    if (at <= 0) continue;
    const key = piece.slice(0, at).trim();
    const value = piece.slice(at + 1).trim();
    if (key) headers[key] = decodeURIComponentSafe(value);
  }
  return headers;
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The telemetry of `otlp_endpoint`, or undefined (nothing loaded) without one. */
export async function loadTelemetry(options: TelemetryOptions): Promise<Telemetry | undefined> {
  const { execution, env, log } = options;
  const endpoint = execution.otlp_endpoint;
  if (!endpoint) return undefined;
  const variable = execution.otlp_headers_env;
  if (variable && env[variable] === undefined) {
    log.warn({ variable }, 'otlp_headers_env names an unset variable: exporting without its headers');
  }
  const headers = parseOtlpHeaders(variable ? env[variable] : undefined);
  // Header values are credentials (an API key): redacted wherever one would be shown.
  registerSecret(variable ? env[variable] : undefined);
  for (const value of Object.values(headers)) registerSecret(value);
  // The OpenTelemetry packages are optional dependencies: an install without them says so here.
  const { createTelemetry } = await importOptional(
    options.load ?? (() => import('./otel.js')),
    'OpenTelemetry export (otlp_endpoint)',
    OTEL_PACKAGES,
  );
  const telemetry = createTelemetry({
    endpoint,
    headers,
    exportIntervalMs: options.exportIntervalMs ?? 60_000,
  });
  const unobserve = observeRateLimits((rate) => telemetry.rateLimit(rate));
  log.info({ endpoint }, 'Exporting OpenTelemetry traces and metrics');
  return {
    ...telemetry,
    async shutdown() {
      unobserve();
      // A collector that does not answer never holds up a stop for long, and one that is not
      // there at all (nothing listens at its port) not at all: the exporter would only retry.
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, options.shutdownLimitMs ?? SHUTDOWN_LIMIT_MS);
        timer.unref();
      });
      const absent = unreachable(endpoint);
      await Promise.race([
        telemetry.shutdown().catch((error: unknown) => {
          log.warn(
            { error: error instanceof Error ? error.message : String(error) },
            'Could not export telemetry',
          );
        }),
        limit,
        absent.found.then((reason) => {
          log.warn(
            { endpoint, reason },
            'No OpenTelemetry collector at the endpoint: the last exports are dropped',
          );
        }),
      ]);
      absent.cancel();
      clearTimeout(timer);
    },
  };
}
