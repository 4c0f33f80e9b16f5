/**
 * The OpenTelemetry side of src/telemetry (loaded by index.ts only with `otlp_endpoint`): a tracer
 * provider with a batch span processor and a meter provider with a periodic reader, both sending
 * OTLP/JSON over HTTP to `<endpoint>/v1/traces` and `<endpoint>/v1/metrics`.
 */
import { hostname } from 'node:os';
import { type Attributes, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { isFailure, type RunRecord } from '../core/types.js';
import type { RateLimitInfo } from '../github/client.js';
import { packageVersion } from '../version.js';
import type { RunPhase, RunTrace, Telemetry } from './types.js';

export interface OtelOptions {
  endpoint: string;
  headers: Record<string, string>;
  exportIntervalMs: number;
}

export function createTelemetry(options: OtelOptions): Telemetry {
  const base = options.endpoint.replace(/\/+$/, '');
  const resource = resourceFromAttributes({
    'service.name': 'curupira',
    'service.version': packageVersion(),
    'host.name': hostname(),
  });
  const tracerProvider = new TracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${base}/v1/traces`, headers: options.headers }),
      }),
    ],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics`, headers: options.headers }),
        exportIntervalMillis: options.exportIntervalMs,
        exportTimeoutMillis: Math.min(30_000, options.exportIntervalMs),
      }),
    ],
  });
  const tracer = tracerProvider.getTracer('curupira', packageVersion());
  const meter = meterProvider.getMeter('curupira', packageVersion());
  const metrics = {
    runs: meter.createCounter('curupira.runs', { description: 'Finished runs, by outcome.' }),
    duration: meter.createHistogram('curupira.run.duration', { unit: 's', description: 'Run duration.' }),
    tokens: meter.createCounter('curupira.tokens', { unit: '{token}', description: 'Agent tokens.' }),
    cost: meter.createCounter('curupira.cost', { unit: 'USD', description: 'Agent cost.' }),
    poll: meter.createHistogram('curupira.poll.duration', { unit: 's', description: 'Feed poll latency.' }),
    points: meter.createCounter('curupira.github.points', {
      unit: '{point}',
      description: 'GitHub rate-limit points spent.',
    }),
  };
  /** Per rate-limit resource, the last `used` seen and its window. */
  const windows = new Map<string, { used: number; resetAt: number }>();

  function startRun(run: RunRecord, discoveredAt?: number): RunTrace {
    const created = Date.parse(run.createdAt);
    const startTime = discoveredAt !== undefined && discoveredAt < created ? discoveredAt : created;
    const root = tracer.startSpan('curupira.run', { startTime, attributes: runAttributes(run) });
    const parent = trace.setSpan(context.active(), root);
    let current: Span | undefined;
    let currentName: RunPhase | undefined;
    const phase = (name: RunPhase, at?: number): void => {
      if (currentName === name) return;
      current?.end(at);
      currentName = name;
      current = tracer.startSpan(`curupira.${name}`, { startTime: at ?? Date.now() }, parent);
    };
    if (startTime < created) {
      phase('discovery', startTime);
      current?.end(created);
      current = undefined;
      currentName = undefined;
    }
    let ended = false;
    return {
      phase: (name) => phase(name),
      end(final) {
        if (ended) return;
        ended = true;
        const now = Date.now();
        current?.end(now);
        const attributes = runAttributes(final);
        root.setAttributes(attributes);
        if (isFailure(final.status))
          root.setStatus({ code: SpanStatusCode.ERROR, message: final.reason ?? '' });
        root.end(now);
        const labels = { 'curupira.automation': final.automationId, 'curupira.outcome': final.status };
        metrics.runs.add(1, labels);
        metrics.duration.record(Math.max(0, now - startTime) / 1000, labels);
        const byAgent = {
          'curupira.automation': final.automationId,
          'curupira.provider': final.provider ?? 'unknown',
          'curupira.model': final.model ?? 'default',
        };
        if (final.usage) {
          metrics.tokens.add(final.usage.inputTokens, { ...byAgent, 'curupira.direction': 'input' });
          metrics.tokens.add(final.usage.outputTokens, { ...byAgent, 'curupira.direction': 'output' });
        }
        if (typeof final.costUsd === 'number') metrics.cost.add(final.costUsd, byAgent);
      },
    };
  }

  return {
    startRun,
    poll(automation, startedAt, found, error) {
      const now = Date.now();
      const outcome = error === undefined ? 'ok' : 'error';
      const span = tracer.startSpan('curupira.poll', {
        startTime: startedAt,
        attributes: {
          'curupira.automation': automation,
          'curupira.found': found,
          'curupira.outcome': outcome,
        },
      });
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end(now);
      metrics.poll.record(Math.max(0, now - startedAt) / 1000, {
        'curupira.automation': automation,
        'curupira.outcome': outcome,
      });
    },
    rateLimit(rate: RateLimitInfo) {
      metrics.points.add(pointsSpent(windows, rate), { 'curupira.resource': rate.resource });
    },
    async shutdown() {
      await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/**
 * The points spent since the last report of the same resource: the growth of `used` within one
 * window, all of `used` in a new window. The first report only sets the baseline (0): the points
 * used before curupira looked may be anyone's.
 */
export function pointsSpent(
  windows: Map<string, { used: number; resetAt: number }>,
  rate: RateLimitInfo,
): number {
  const previous = windows.get(rate.resource);
  // A late answer from an older window changes nothing.
  if (previous && rate.resetAt < previous.resetAt) return 0;
  windows.set(rate.resource, { used: rate.used, resetAt: rate.resetAt });
  if (!previous) return 0;
  if (previous.resetAt !== rate.resetAt) return Math.max(0, rate.used);
  return Math.max(0, rate.used - previous.used);
}

function runAttributes(run: RunRecord): Attributes {
  const attributes: Attributes = {
    'curupira.automation': run.automationId,
    'curupira.item': run.itemKey,
    'curupira.item_id': run.itemId,
    'curupira.repo': run.repo,
    'curupira.task_type': run.taskType,
    'curupira.run_id': run.id,
    'curupira.outcome': run.status,
    'curupira.resumed': run.resumed,
  };
  if (run.attempt !== undefined) attributes['curupira.attempt'] = run.attempt;
  if (run.provider) attributes['curupira.provider'] = run.provider;
  if (run.profile) attributes['curupira.profile'] = run.profile;
  if (run.model) attributes['curupira.model'] = run.model;
  if (run.usage) {
    attributes['curupira.tokens.input'] = run.usage.inputTokens;
    attributes['curupira.tokens.output'] = run.usage.outputTokens;
  }
  if (typeof run.costUsd === 'number') attributes['curupira.cost_usd'] = run.costUsd;
  if (run.exitCode !== null) attributes['curupira.exit_code'] = run.exitCode;
  return attributes;
}
