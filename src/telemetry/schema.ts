/**
 * The telemetry feature's keys of `[settings]` (composed into the settings schema by
 * src/config/schema.ts, each where the generated docs list it). Imports only zod.
 */
import { z } from 'zod';

export const telemetrySettingsShape = {
  otlp_endpoint: z
    .string()
    .regex(/^https?:\/\/\S+$/, 'otlp_endpoint must be an http(s) URL (OTLP/HTTP); grpc:// is not supported')
    .optional()
    .describe(
      'OpenTelemetry collector (OTLP/HTTP, e.g. `http://127.0.0.1:4318`): with it, curupira exports a trace per run and its metrics to `<url>/v1/traces` and `<url>/v1/metrics` (docs/telemetry.md); without it no telemetry code is loaded (curupira extension).',
    ),
  otlp_headers_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name (letters, digits, `_`)')
    .optional()
    .describe(
      'Environment variable holding headers sent with every OTLP export, as `key=value,key2=value2` (an API key); never logged (curupira extension).',
    ),
};
