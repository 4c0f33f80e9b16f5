/**
 * Options every agent profile accepts, whatever its provider. The provider folders extend this
 * shape in their `schema.ts`. Leaf module: imports nothing but zod, so `src/config/` can compose it.
 */
import { z } from 'zod';

export const EnvName = z
  .string()
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*\*?$/,
    'must be an environment variable name (a trailing * matches a prefix)',
  );

export const profileBaseShape = {
  model: z
    .string()
    .trim()
    .min(1, 'model must not be empty')
    .optional()
    .describe('Model identifier passed to the agent CLI.'),
  executable: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Agent executable to run instead of the provider default (a name on PATH or an absolute path).',
    ),
  env: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), z.string())
    .default({})
    .describe('Extra environment variables set for the agent (curupira extension).'),
  pass_env: z
    .array(EnvName)
    .default([])
    .describe(
      'Names of variables from curupira’s own environment passed through to the agent; `NAME_*` passes a prefix (curupira extension).',
    ),
  github_token: z
    .boolean()
    .default(false)
    .describe(
      'Pass the GitHub token to the agent as GH_TOKEN and GITHUB_TOKEN (curupira extension; off by default).',
    ),
} as const;
