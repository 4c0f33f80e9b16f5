/**
 * OpenCode: `opencode run --format json [--session ID] [--model M] [--agent A] [--variant E]
 * [--auto] <isolation> -- MSG`.
 *
 * Isolation depends on the installed major version (`opencode --version`), and its flags go after
 * the profile's options, just before `--`:
 * - 1.x: `--dir <worktree>`, and `OPENCODE_DB=<worktree>.opencode.db` so the task's sessions and
 *   project entries stay with the task;
 * - 2.x, or a version that cannot be read: `--standalone`, so a headless run does not join the
 *   shared background service (2.x has no `--dir`; the worktree is its working directory).
 *
 * The run's MCP servers (a review's findings tools, the result tool) go in
 * `OPENCODE_CONFIG_CONTENT`, `{"mcp":{NAME:{"type":"local","command":[cmd, ...args],
 * "environment":{…}}}}`: OpenCode 1.18.33's configuration loader reads that variable last and
 * deep-merges it over the global, `OPENCODE_CONFIG` and project configurations, so the user's own
 * MCP servers stay; a value the user already set in that variable is kept and extended. Checked
 * against the real CLI, which starts the server so declared and completes the MCP handshake.
 */
import { COMMON_MODEL_ENV, defineDriver, isObject } from '../driver-kit.js';
import { API_LIMITS } from '../limits.js';
import { createOpenCodeStreamParser } from '../streams/opencode-stream.js';
import type { AgentDriver, AgentInvocation, McpServerSpec } from '../types.js';
import type { OpenCodeProfile } from './schema.js';

/** The major version in `opencode --version` output (`1.4.2`, `opencode 2.0.1`…), if any. */
export function openCodeMajorVersion(version: string | undefined): number | undefined {
  const match = /(\d+)\.\d+/.exec(version ?? '');
  return match ? Number(match[1]) : undefined;
}

/**
 * `OPENCODE_CONFIG_CONTENT` for a run with MCP servers: the user's own value (a JSON object; kept
 * as it is) with the run's servers added to its `mcp`. A value that is not a JSON object is
 * replaced, as OpenCode could not read it either.
 */
export function openCodeConfigContent(
  servers: readonly McpServerSpec[],
  current: string | undefined,
): string {
  let base: Record<string, unknown> = {};
  try {
    const parsed: unknown = current === undefined ? {} : JSON.parse(current);
    if (isObject(parsed)) base = parsed;
  } catch {
    // Not JSON: replaced.
  }
  const mcp = isObject(base.mcp) ? { ...base.mcp } : {};
  for (const s of servers)
    mcp[s.name] = { type: 'local', command: [s.command, ...s.args], environment: { ...s.env } };
  return JSON.stringify({ ...base, mcp });
}

/**
 * The model keys the key proxy holds for OpenCode and its derivative Kilo: both read
 * OPENAI_BASE_URL / ANTHROPIC_BASE_URL for their built-in providers and in a provider's
 * configuration (`{env:…}`).
 */
export const OPENCODE_STYLE_KEYS = [
  { keyEnv: ['OPENAI_API_KEY'], baseUrlEnv: 'OPENAI_BASE_URL', defaultBaseUrl: 'https://api.openai.com/v1' },
  {
    keyEnv: ['ANTHROPIC_API_KEY'],
    baseUrlEnv: 'ANTHROPIC_BASE_URL',
    defaultBaseUrl: 'https://api.anthropic.com/v1',
  },
];

/**
 * The screening classifier's call of OpenCode and Kilo (`prefix` names their variables,
 * `OPENCODE` or `KILO`): every permission denied (`<prefix>_PERMISSION`, MCP tools too), the
 * project's configuration ignored (`<prefix>_DISABLE_PROJECT_CONFIG`), no external plugin (`--pure`).
 */
export function openCodeStyleClassifier<P extends { model?: string | undefined }>(
  prefix: 'OPENCODE' | 'KILO',
): (profile: P, prompt: string) => AgentInvocation {
  return (profile, prompt) => {
    const args = ['run', '--format', 'json', '--pure'];
    if (profile.model) args.push('--model', profile.model);
    args.push('--', prompt);
    return {
      args,
      env: {
        [`${prefix}_PERMISSION`]: JSON.stringify({ '*': 'deny' }),
        [`${prefix}_DISABLE_PROJECT_CONFIG`]: '1',
      },
    };
  };
}

function withoutTrailingSlash(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? path : trimmed;
}

export function createOpenCodeDriver(): AgentDriver<OpenCodeProfile> {
  return defineDriver({
    provider: 'opencode',
    displayName: 'OpenCode',
    executable: 'opencode',
    installUrl: 'https://opencode.ai/docs/',
    assignsSessionId: false,
    declaresMcpServers: true,
    envAllowlist: ['OPENCODE_*', ...COMMON_MODEL_ENV],
    versionArgs: ['--version'],
    // OpenCode 1.18.33 sends its built-in `openai` and `anthropic` providers' requests to
    // OPENAI_BASE_URL and ANTHROPIC_BASE_URL, and a custom provider's configuration can read both
    // (`"baseURL": "{env:OPENAI_BASE_URL}", "apiKey": "{env:OPENAI_API_KEY}"`): in a sandbox the
    // key proxy holds those keys (checked against the real CLI, real-cli.test.ts). A key stored by
    // `opencode auth login` (auth.json) or written into the configuration still goes inside.
    sandbox: {
      homePaths: ['.local/share/opencode/auth.json', '.config/opencode'],
      hosts: ['api.anthropic.com', 'api.openai.com', 'opencode.ai', 'models.dev'],
      // 1.x keeps its sessions in OPENCODE_DB, next to the worktree: inside a sandbox, in the private home.
      homeFileEnv: ['OPENCODE_DB'],
      keys: OPENCODE_STYLE_KEYS,
    },
    invocation(profile, input) {
      const args = ['run', '--format', 'json'];
      const env: Record<string, string> = {};
      if (input.resumeSessionId) args.push('--session', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.agent) args.push('--agent', profile.agent);
      if (profile.effort) args.push('--variant', profile.effort);
      if (profile.auto_approve) args.push('--auto');
      const major = openCodeMajorVersion(input.version);
      if (major !== undefined && major < 2) {
        const worktree = withoutTrailingSlash(input.worktree);
        args.push('--dir', worktree);
        env.OPENCODE_DB = `${worktree}.opencode.db`;
      } else {
        args.push('--standalone');
      }
      if (input.mcpServers && input.mcpServers.length > 0)
        env.OPENCODE_CONFIG_CONTENT = openCodeConfigContent(
          input.mcpServers,
          input.env?.OPENCODE_CONFIG_CONTENT,
        );
      args.push('--', input.prompt);
      return { args, env };
    },
    // The screening classifier's call (checked against `opencode run --help` of opencode 1.18.33
    // and its configuration loader; OPENCODE_PERMISSION is merged over the configuration).
    classifier: openCodeStyleClassifier<OpenCodeProfile>('OPENCODE'),
    limits: API_LIMITS,
    // OpenCode 1.18: `run --session <id>` of a session it does not have.
    missingSession: [/Session not found/],
    createParser: createOpenCodeStreamParser,
  });
}
