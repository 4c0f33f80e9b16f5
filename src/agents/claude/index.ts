/**
 * Claude Code: `claude -p --output-format stream-json --verbose [--resume ID] [--model M]
 * [--agent A] [--effort E] [--permission-mode P] [--permission-prompts Q] --strict-mcp-config
 * [--mcp-config FILE…] -- MSG`. `--strict-mcp-config` (checked against Claude Code 2.1.197's
 * `--help`: "Only use MCP servers from --mcp-config, ignoring all other MCP configurations") keeps
 * the MCP servers an unattended run may load to the profile's `mcp_config` list, plus the servers
 * curupira declares for the run (a review's findings tools) as one more `--mcp-config`, a JSON
 * string `{"mcpServers":{NAME:{"type":"stdio","command":…,"args":[…],"env":{…}}}}` (the help:
 * "Load MCP servers from JSON files or strings").
 */
import { defineDriver } from '../driver-kit.js';
import { CLAUDE_LIMITS } from '../limits.js';
import { createClaudeStreamParser } from '../streams/claude-stream.js';
import type { AgentDriver, McpServerSpec } from '../types.js';
import type { ClaudeProfile } from './schema.js';

/** The run's MCP servers as one `--mcp-config` JSON string. */
export function claudeMcpConfig(servers: readonly McpServerSpec[]): string {
  const mcpServers = Object.fromEntries(
    servers.map((s) => [s.name, { type: 'stdio', command: s.command, args: [...s.args], env: { ...s.env } }]),
  );
  return JSON.stringify({ mcpServers });
}

export function createClaudeDriver(): AgentDriver<ClaudeProfile> {
  return defineDriver({
    provider: 'claude',
    displayName: 'Claude Code',
    executable: 'claude',
    installUrl: 'https://docs.anthropic.com/en/docs/claude-code/setup',
    assignsSessionId: false,
    declaresMcpServers: true,
    // The API key and base URL, Claude Code's own settings, and the Bedrock (AWS_*) and Vertex
    // (CLOUD_ML_REGION, Google credentials) back ends. IS_SANDBOX=1 is what lets Claude Code run
    // as root with `--permission-mode bypassPermissions` (it refuses otherwise).
    envAllowlist: [
      'ANTHROPIC_*',
      'IS_SANDBOX',
      'CLAUDE_*',
      'AWS_*',
      'CLOUD_ML_REGION',
      'VERTEX_REGION_*',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'GOOGLE_CLOUD_PROJECT',
      'DISABLE_TELEMETRY',
      'DISABLE_AUTOUPDATER',
      'DISABLE_ERROR_REPORTING',
      'MAX_THINKING_TOKENS',
      'MCP_TIMEOUT',
      'MCP_TOOL_TIMEOUT',
      'BASH_DEFAULT_TIMEOUT_MS',
      'BASH_MAX_TIMEOUT_MS',
    ],
    // Claude Code reads ANTHROPIC_BASE_URL: in a sandbox the key proxy holds the key.
    sandbox: {
      homePaths: ['.claude/.credentials.json', '.claude/settings.json', '.claude.json'],
      hosts: ['api.anthropic.com', 'statsig.anthropic.com'],
      keys: [
        {
          keyEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'],
          baseUrlEnv: 'ANTHROPIC_BASE_URL',
          defaultBaseUrl: 'https://api.anthropic.com',
        },
      ],
    },
    unattended: {
      login: {
        env: [
          'ANTHROPIC_API_KEY',
          'ANTHROPIC_AUTH_TOKEN',
          'CLAUDE_CODE_OAUTH_TOKEN',
          'CLAUDE_CODE_USE_BEDROCK',
          'CLAUDE_CODE_USE_VERTEX',
        ],
        homeFiles: ['.claude/.credentials.json'],
      },
      approval: (profile) =>
        profile.permission_mode === undefined ||
        profile.permission_mode === 'default' ||
        profile.permission_mode === 'plan'
          ? {
              key: 'permission_mode',
              advice:
                '"acceptEdits", "dontAsk", "auto" or, in a sandbox, "bypassPermissions" (otherwise a tool call that needs approval is refused and the agent cannot edit or run commands)',
            }
          : undefined,
    },
    invocation(profile, input) {
      const args = ['-p', '--output-format', 'stream-json', '--verbose'];
      if (input.resumeSessionId) args.push('--resume', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.agent) args.push('--agent', profile.agent);
      if (profile.effort) args.push('--effort', profile.effort);
      if (profile.permission_mode) args.push('--permission-mode', profile.permission_mode);
      if (profile.permission_prompts) args.push('--permission-prompts', profile.permission_prompts);
      // Only the MCP servers the profile lists, never what the repository declares (`.mcp.json`).
      args.push('--strict-mcp-config');
      for (const config of profile.mcp_config ?? []) args.push('--mcp-config', config);
      if (input.mcpServers && input.mcpServers.length > 0)
        args.push('--mcp-config', claudeMcpConfig(input.mcpServers));
      args.push('--', input.prompt);
      // Claude Code 2.1.197 connects MCP servers in the background, so its first model turn may see
      // only a WaitForMcpServers tool instead of theirs; MCP_CONNECTION_NONBLOCKING=0 makes it wait
      // for them first (checked against the real CLI: test/e2e/real-claude-mcp.test.ts).
      const env: Record<string, string> =
        profile.mcp_config?.length || input.mcpServers?.length ? { MCP_CONNECTION_NONBLOCKING: '0' } : {};
      return { args, env };
    },
    // The screening classifier's call (checked against `claude --help` of Claude Code 2.1.197):
    // `--tools ""` disables every built-in tool, `--strict-mcp-config` with no `--mcp-config`
    // loads no MCP server, `--safe-mode` skips CLAUDE.md, skills, plugins, hooks and custom
    // agents, `--setting-sources user` ignores project and local settings, `--permission-mode
    // dontAsk` refuses whatever is not pre-approved, `--no-session-persistence` saves nothing.
    classifier(profile, prompt) {
      const args = ['-p', '--output-format', 'stream-json', '--verbose', '--tools', ''];
      args.push('--strict-mcp-config', '--safe-mode', '--setting-sources', 'user');
      args.push('--disable-slash-commands', '--permission-mode', 'dontAsk', '--no-session-persistence');
      if (profile.model) args.push('--model', profile.model);
      args.push('--', prompt);
      return { args, env: {} };
    },
    limits: CLAUDE_LIMITS,
    // Claude Code 2.1: `--resume <id>` of a conversation it does not have (also in its result's errors).
    missingSession: [/No conversation found with session ID/],
    createParser: () => createClaudeStreamParser({ inputIncludesCache: false }),
  });
}
