import { describe, expect, it } from 'vitest';
import { UsageError } from './errors.js';
import { importOptional, missingOptionalPackage } from './optional.js';

/** What Node's ESM loader throws for a package it cannot find. */
function notFound(specifier: string): Error {
  return Object.assign(
    new Error(`Cannot find package '${specifier}' imported from /opt/curupira/dist/telemetry/otel.js`),
    { code: 'ERR_MODULE_NOT_FOUND' },
  );
}

describe('importOptional', () => {
  it('returns what the loader returns when the packages are there', async () => {
    await expect(
      importOptional(async () => ({ ok: 1 }), 'OpenTelemetry export', ['@opentelemetry/']),
    ).resolves.toEqual({
      ok: 1,
    });
  });

  it('turns a missing optional package into a usage error that names it, the feature and the install command', async () => {
    const failing = importOptional(
      async () => {
        throw notFound('@opentelemetry/exporter-trace-otlp-http');
      },
      'OpenTelemetry export (otlp_endpoint)',
      ['@opentelemetry/'],
    );
    await expect(failing).rejects.toBeInstanceOf(UsageError);
    await expect(failing).rejects.toThrow(
      /^OpenTelemetry export \(otlp_endpoint\) needs @opentelemetry\/exporter-trace-otlp-http, an optional dependency this install left out \(--omit=optional\)\. Install curupira with its optional dependencies: `npm install -g curupira` /,
    );
  });

  it('lets any other error through unchanged: another missing package, a missing file of our own, a throw', async () => {
    const other = notFound('left-pad');
    await expect(importOptional(() => Promise.reject(other), 'x', ['graphql'])).rejects.toBe(other);
    const ownFile = Object.assign(new Error("Cannot find module '/opt/curupira/dist/simulator/index.js'"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    await expect(importOptional(() => Promise.reject(ownFile), 'x', ['graphql'])).rejects.toBe(ownFile);
    const thrown = new TypeError('boom');
    await expect(importOptional(() => Promise.reject(thrown), 'x', ['graphql'])).rejects.toBe(thrown);
  });

  it('matches a package by its exact name or, for a prefix ending in /, by its scope', () => {
    expect(missingOptionalPackage(notFound('graphql'), ['graphql'])).toBe('graphql');
    expect(missingOptionalPackage(notFound('graphql-tag'), ['graphql'])).toBeUndefined();
    expect(missingOptionalPackage(notFound('@opentelemetry/api'), ['@opentelemetry/'])).toBe(
      '@opentelemetry/api',
    );
    // CommonJS's require says it differently.
    const required = Object.assign(new Error("Cannot find module 'graphql'\nRequire stack:\n- /x.js"), {
      code: 'MODULE_NOT_FOUND',
    });
    expect(missingOptionalPackage(required, ['graphql'])).toBe('graphql');
  });
});
