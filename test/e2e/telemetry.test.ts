/**
 * Issue 15, item 9 (acceptance): OpenTelemetry over OTLP/HTTP. A real engine runs two issues (one
 * succeeds, one fails) with `otlp_endpoint` pointing at a local receiver; the spans (one trace per
 * run: `curupira.run` and its phases) and the metrics it receives as OTLP/JSON are checked. Without
 * `otlp_endpoint` nothing is sent, and the SDK is never imported (src/telemetry/index.ts).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { Engine } from '../../src/features.js';
import { silentLogger } from '../../src/log.js';
import { loadTelemetry } from '../../src/telemetry/index.js';
import { createHarness, type Harness, ROOT, runBuiltCli, waitFor } from '../helpers/harness.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

let h: Harness | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  await h?.cleanup();
  h = undefined;
  receiver = undefined;
});

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value: AnyValue };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: KeyValue[];
  status?: { code?: number };
}
interface OtlpPoint {
  attributes: KeyValue[];
  asInt?: number | string;
  asDouble?: number;
  count?: number | string;
  sum?: number;
}
interface OtlpMetric {
  name: string;
  unit?: string;
  sum?: { dataPoints: OtlpPoint[] };
  histogram?: { dataPoints: OtlpPoint[] };
}

function value(v: AnyValue): string | number | boolean | undefined {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue;
}

function attrs(list: KeyValue[] | undefined): Record<string, string | number | boolean | undefined> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

function bodies(r: Receiver, path: string): Record<string, unknown>[] {
  return r.requests.filter((q) => q.path === path).map((q) => JSON.parse(q.body) as Record<string, unknown>);
}

function spansOf(r: Receiver): { spans: OtlpSpan[]; resource: Record<string, unknown> } {
  const spans: OtlpSpan[] = [];
  let resource: Record<string, unknown> = {};
  for (const body of bodies(r, '/v1/traces')) {
    for (const rs of body.resourceSpans as {
      resource: { attributes: KeyValue[] };
      scopeSpans: { spans: OtlpSpan[] }[];
    }[]) {
      resource = attrs(rs.resource.attributes);
      for (const ss of rs.scopeSpans) spans.push(...ss.spans);
    }
  }
  return { spans, resource };
}

/** The metrics of the last export (cumulative: the last one holds every count). */
function lastMetrics(r: Receiver): Map<string, OtlpMetric> {
  const all = bodies(r, '/v1/metrics');
  const last = all.at(-1) as { resourceMetrics: { scopeMetrics: { metrics: OtlpMetric[] }[] }[] } | undefined;
  const out = new Map<string, OtlpMetric>();
  for (const rm of last?.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics) for (const m of sm.metrics) out.set(m.name, m);
  return out;
}

function points(
  m: OtlpMetric | undefined,
): { attributes: Record<string, unknown>; value: number; count?: number }[] {
  const list = m?.sum?.dataPoints ?? m?.histogram?.dataPoints ?? [];
  return list.map((p) => ({
    attributes: attrs(p.attributes),
    value: p.asDouble ?? Number(p.asInt ?? p.sum ?? 0),
    ...(p.count === undefined ? {} : { count: Number(p.count) }),
  }));
}

describe('OpenTelemetry export', () => {
  it('exports a trace per run with its phases, and the run metrics, over OTLP/HTTP', async () => {
    receiver = await startReceiver();
    const endpoint = new URL(receiver.url).origin;
    h = await createHarness({
      provider: 'claude',
      issues: [
        { title: 'First issue', labels: ['agent-ready'] },
        { title: 'Second issue [[fake:fail]]', labels: ['agent-ready'] },
      ],
      settingsExtra: `otlp_endpoint = "${endpoint}"\notlp_headers_env = "OTLP_HEADERS"\n`,
    });
    h.env.OTLP_HEADERS = 'x-api-key=otlp-secret-key,x-tenant=ops';
    const result = await h.run();
    const byStatus = Object.fromEntries(result.runs.map((r) => [r.status, r]));
    const ok = byStatus.succeeded;
    const bad = byStatus.failed;
    expect(ok, JSON.stringify(result.runs.map((r) => [r.status, r.reason]))).toBeDefined();
    expect(bad).toBeDefined();

    // Every export carries the headers of otlp_headers_env.
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request.headers['x-api-key']).toBe('otlp-secret-key');
      expect(request.headers['x-tenant']).toBe('ops');
      expect(request.headers['content-type']).toContain('application/json');
    }

    const { spans, resource } = spansOf(receiver);
    expect(resource['service.name']).toBe('curupira');
    expect(resource['service.version']).toMatch(/^\d+\.\d+\.\d+/);
    expect(typeof resource['host.name']).toBe('string');
    const roots = spans.filter((s) => s.name === 'curupira.run');
    expect(roots).toHaveLength(2);
    for (const run of [ok!, bad!]) {
      const root = roots.find((s) => attrs(s.attributes)['curupira.run_id'] === run.id);
      expect(root, run.id).toBeDefined();
      expect(root!.parentSpanId ?? '').toBe('');
      const a = attrs(root!.attributes);
      expect(a).toMatchObject({
        'curupira.automation': 'fix',
        'curupira.item': run.itemKey,
        'curupira.repo': 'acme/api',
        'curupira.outcome': run.status,
        'curupira.provider': 'claude',
      });
      // One trace per run: its phases are children of its root, in their order.
      const children = spans.filter((s) => s.traceId === root!.traceId && s !== root);
      expect(children.every((s) => s.parentSpanId === root!.spanId)).toBe(true);
      const names = children.map((s) => s.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'curupira.discovery',
          'curupira.checkout',
          'curupira.agent',
          'curupira.cleanup',
        ]),
      );
      expect(new Set(names).size).toBe(names.length);
    }
    const okRoot = attrs(roots.find((s) => attrs(s.attributes)['curupira.run_id'] === ok!.id)!.attributes);
    expect(okRoot['curupira.tokens.input']).toBe(ok!.usage!.inputTokens);
    expect(okRoot['curupira.tokens.output']).toBe(ok!.usage!.outputTokens);
    const badRoot = roots.find((s) => attrs(s.attributes)['curupira.run_id'] === bad!.id)!;
    expect(badRoot.status?.code).toBe(2); // ERROR
    // Each poll is a span of its own (a trace of its own).
    const polls = spans.filter((s) => s.name === 'curupira.poll');
    expect(polls.length).toBeGreaterThan(0);
    expect(attrs(polls[0]!.attributes)).toMatchObject({
      'curupira.automation': 'fix',
      'curupira.outcome': 'ok',
    });

    const metrics = lastMetrics(receiver);
    const runs = points(metrics.get('curupira.runs'));
    expect(runs.find((p) => p.attributes['curupira.outcome'] === 'succeeded')?.value).toBe(1);
    expect(runs.find((p) => p.attributes['curupira.outcome'] === 'failed')?.value).toBe(1);
    expect(runs.every((p) => p.attributes['curupira.automation'] === 'fix')).toBe(true);
    const durations = points(metrics.get('curupira.run.duration'));
    expect(durations.reduce((n, p) => n + (p.count ?? 0), 0)).toBe(2);
    expect(metrics.get('curupira.run.duration')?.unit).toBe('s');
    const tokens = points(metrics.get('curupira.tokens'));
    const inputTokens = result.runs.reduce((n, r) => n + (r.usage?.inputTokens ?? 0), 0);
    expect(
      tokens.filter((p) => p.attributes['curupira.direction'] === 'input').reduce((n, p) => n + p.value, 0),
    ).toBe(inputTokens);
    const cost = points(metrics.get('curupira.cost'));
    const totalCost = result.runs.reduce((n, r) => n + (r.costUsd ?? 0), 0);
    expect(cost.reduce((n, p) => n + p.value, 0)).toBeCloseTo(totalCost, 9);
    const pollDurations = points(metrics.get('curupira.poll.duration'));
    expect(pollDurations.reduce((n, p) => n + (p.count ?? 0), 0)).toBe(polls.length);
    // GitHub reported its rate limit: the points since the first report are counted by resource.
    const githubPoints = points(metrics.get('curupira.github.points'));
    expect(githubPoints.find((p) => p.attributes['curupira.resource'] === 'graphql')?.value).toBeGreaterThan(
      0,
    );
    expect(
      githubPoints.every((p) => p.value >= 0 && typeof p.attributes['curupira.resource'] === 'string'),
    ).toBe(true);
    // The headers' secret is never in what is exported.
    for (const request of receiver.requests) expect(request.body).not.toContain('otlp-secret-key');
  });

  it('exports metrics periodically while run --watch keeps going', async () => {
    receiver = await startReceiver();
    const endpoint = new URL(receiver.url).origin;
    h = await createHarness({
      provider: 'claude',
      settingsExtra: `otlp_endpoint = "${endpoint}"\n[settings.polling]\npoll_interval_seconds = 3600\n`,
    });
    const store = await h.openStore();
    const stop = new AbortController();
    const runs: RunRecord[] = [];
    const options = h.engineOptions(store, { mode: 'watch', stop: stop.signal, onRun: (r) => runs.push(r) });
    const done = new Engine({ ...options, telemetryIntervalMs: 200 }).run();
    try {
      await waitFor('a run', () => runs.length === 1, 20_000);
      // Before any stop: the periodic reader exported the run's count.
      await waitFor(
        'the run counted in an export',
        () => points(lastMetrics(receiver!).get('curupira.runs')).some((p) => p.value === 1),
        10_000,
      );
      expect(runs[0]!.status).toBe('succeeded');
    } finally {
      stop.abort();
      await done;
      await store.close();
    }
  });

  it('runs as usual when the collector is not there', async () => {
    const gone = await startReceiver();
    const endpoint = new URL(gone.url).origin;
    await gone.close();
    h = await createHarness({ provider: 'claude', settingsExtra: `otlp_endpoint = "${endpoint}"\n` });
    const result = await h.run();
    expect(result.runs.map((r) => r.status)).toEqual(['succeeded']);
  });

  it('sends nothing and loads no telemetry code without otlp_endpoint', async () => {
    receiver = await startReceiver();
    h = await createHarness({ provider: 'claude' });
    const result = await h.run();
    expect(result.runs.map((r) => r.status)).toEqual(['succeeded']);
    expect(receiver.requests).toEqual([]);
    let loads = 0;
    const load = async () => {
      loads += 1;
      return import('../../src/telemetry/otel.js');
    };
    const execution = h.settings().execution;
    expect(await loadTelemetry({ execution, env: {}, log: silentLogger(), load })).toBeUndefined();
    expect(loads).toBe(0);
  });

  it('loads the SDK in the built CLI only with otlp_endpoint (module resolution hook)', async () => {
    receiver = await startReceiver();
    h = await createHarness({ provider: 'claude' });
    // A resolve hook records every module the CLI loads whose URL names OpenTelemetry.
    const log = join(h.dir, 'otel-loads.txt');
    const hooks = join(h.dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.includes('opentelemetry') || result.url.includes('telemetry/otel.js')) appendFileSync(file, result.url + '\\n');
  return result;
}
`,
    );
    const register = join(h.dir, 'register.mjs');
    writeFileSync(
      register,
      `import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
register(pathToFileURL(${JSON.stringify(hooks)}), { data: { file: ${JSON.stringify(log)} } });
`,
    );
    const env = { ...h.env, NODE_OPTIONS: `--import=${pathToFileURL(register).href}` };
    const without = await runBuiltCli(['--config', h.settingsFile, 'run'], { env });
    expect(without.code, without.stderr).toBe(0);
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').toBe('');
    expect(receiver.requests).toEqual([]);

    // The same CLI with an endpoint does load it (the hook sees it), and exports.
    h.configure({ settingsExtra: `otlp_endpoint = "${new URL(receiver.url).origin}"\n` });
    h.world.addIssue('acme/api', { title: 'Another', body: '', labels: ['agent-ready'], author: 'octocat' });
    const withIt = await runBuiltCli(['--config', h.settingsFile, 'run'], { env });
    expect(withIt.code, withIt.stderr).toBe(0);
    expect(readFileSync(log, 'utf8')).toContain('/dist/telemetry/otel.js');
    expect(receiver.requests.map((r) => r.path)).toContain('/v1/traces');
  });

  it('imports the OpenTelemetry SDK only from src/telemetry/otel.ts, which only a dynamic import loads', () => {
    const files = listTs(join(ROOT, 'src')).filter((f) => !f.endsWith('.test.ts'));
    const importers = files.filter((f) => /from '@opentelemetry\//.test(readFileSync(f, 'utf8')));
    expect(importers.map((f) => f.slice(ROOT.length + 1))).toEqual(['src/telemetry/otel.ts']);
    const staticOtel = files.filter((f) =>
      /from '\.\/otel\.js'|from '\.\.\/telemetry\/otel\.js'/.test(readFileSync(f, 'utf8')),
    );
    expect(staticOtel).toEqual([]);
  });
});

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listTs(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
