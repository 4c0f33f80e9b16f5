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
  sandbox_mode: z
    .enum(['none', 'auto', 'required', 'bubblewrap'])
    .optional()
    .describe(
      'This profile’s sandbox (`none`, `auto`, `required`, `bubblewrap`), over `[settings] sandbox`; an automation’s `sandbox` wins over it. Opting out with `none` is reported by `validate` (curupira extension; docs/sandbox.md).',
    ),
  sandbox_read_paths: z
    .array(z.string().regex(/^(?:~|~\/|\/)/, 'must be an absolute path or start with ~/'))
    .default([])
    .describe(
      'Paths the sandboxed agent may read besides the system’s, its CLI’s install and its provider’s files (`~/` is curupira’s home) (curupira extension).',
    ),
  sandbox_write_paths: z
    .array(z.string().regex(/^(?:~|~\/|\/)/, 'must be an absolute path or start with ~/'))
    .default([])
    .describe(
      'Paths the sandboxed agent may write besides its worktree and git directories (a shared cache, say) (curupira extension).',
    ),
  sandbox_hosts: z
    .array(
      z.string().regex(/^(?:\*\.)?[A-Za-z0-9.-]+(?::\d{1,5})?$/, 'must be `host`, `host:port` or `*.domain`'),
    )
    .default([])
    .describe(
      'Hosts the sandboxed agent may reach through the egress proxy besides its provider’s API (`host`, `host:port`, `*.domain`; port 443 unless given) (curupira extension).',
    ),
} as const;
