/**
 * Gemini CLI: `gemini --output-format stream-json [--resume ID] [--model M] [--approval-mode X]
 * [--skip-trust] --allowed-mcp-server-names NAMES --prompt=MSG`. The allowed names are the
 * profile's `mcp_servers` (none by default: a name no configuration has), so the MCP servers a
 * repository declares are not loaded (checked against Gemini CLI 0.61.0's `--help`). A sandboxed
 * run's own MCP servers (a review's findings tools, the result tool) are declared in the private
 * home's `.gemini/settings.json` and allowed by name; outside a sandbox, in the same file of a home
 * of curupira's that `GEMINI_CLI_HOME` names (the agent's `HOME` unchanged). The session id comes
 * from the stream's `init` event.
 */
import { approvalModeCheck, defineDriver } from '../driver-kit.js';
import { GEMINI_LIMITS } from '../limits.js';
import type { AgentDriver, McpServerSpec } from '../types.js';
import { createGeminiParser } from './parser.js';
import type { GeminiProfile } from './schema.js';

/** An MCP server name no configuration has: allowing only it allows none. */
export const NO_MCP_SERVER = 'curupira-no-mcp-server';

/**
 * The run's MCP servers in Gemini CLI's settings (`mcpServers`, the shape `gemini mcp add` writes:
 * `command`, `args`, `env`, `trust`), over what the file already declares. `trust` lets their
 * tools run without a confirmation an unattended run could not give: they are curupira's own.
 */
export function geminiMcpSettings(
  existing: Record<string, unknown>,
  servers: readonly McpServerSpec[],
): Record<string, unknown> {
  const declared = existing.mcpServers;
  const current = declared && typeof declared === 'object' && !Array.isArray(declared) ? declared : {};
  return {
    ...existing,
    mcpServers: {
      ...current,
      ...Object.fromEntries(
        servers.map((server) => [
          server.name,
          { command: server.command, args: [...server.args], env: { ...server.env }, trust: true },
        ]),
      ),
    },
  };
}

export function createGeminiDriver(): AgentDriver<GeminiProfile> {
  return defineDriver({
    provider: 'gemini',
    displayName: 'Gemini CLI',
    executable: 'gemini',
    installUrl: 'https://github.com/google-gemini/gemini-cli',
    assignsSessionId: false,
    envAllowlist: ['GEMINI_*', 'GOOGLE_*'],
    // Gemini CLI reads GOOGLE_GEMINI_BASE_URL with GEMINI_API_KEY; an OAuth login must go inside.
    sandbox: {
      homePaths: ['.gemini/settings.json', '.gemini/oauth_creds.json', '.gemini/google_accounts.json'],
      // Gemini CLI has no option that adds an MCP server: inside a sandbox, the private home's
      // settings file declares the run's (docs/mcp.md).
      mcpSettingsFile: {
        path: '.gemini/settings.json',
        merge: geminiMcpSettings,
        // Outside a sandbox: `GEMINI_CLI_HOME` moves `~/.gemini` only (Gemini CLI 0.61.0's
        // `homedir()`). Not its system settings (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`): it skips a file
        // there unless it and every folder above it are root's and closed to others.
        outsideHomeEnv: 'GEMINI_CLI_HOME',
      },
      hosts: ['generativelanguage.googleapis.com', 'oauth2.googleapis.com', 'cloudcode-pa.googleapis.com'],
      keys: [
        {
          keyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
          baseUrlEnv: 'GOOGLE_GEMINI_BASE_URL',
          defaultBaseUrl: 'https://generativelanguage.googleapis.com',
        },
      ],
    },
    unattended: {
      login: {
        env: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI'],
        homeFiles: ['.gemini/oauth_creds.json'],
      },
      approval: approvalModeCheck<GeminiProfile>('auto_edit'),
    },
    invocation(profile, input) {
      const args = ['--output-format', 'stream-json'];
      if (input.resumeSessionId) args.push('--resume', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.approval_mode) args.push('--approval-mode', profile.approval_mode);
      if (profile.skip_trust) args.push('--skip-trust');
      // Only the MCP servers the profile names and the run's own, never what the repository declares.
      const allowed = [
        ...(profile.mcp_servers ?? []),
        ...(input.mcpServers ?? []).map((server) => server.name),
      ];
      args.push(
        '--allowed-mcp-server-names',
        allowed.length > 0 ? [...new Set(allowed)].join(',') : NO_MCP_SERVER,
      );
      args.push(`--prompt=${input.prompt}`);
      return { args, env: {} };
    },
    // The screening classifier's call (checked against `gemini --help` of Gemini CLI 0.61.0):
    // `--approval-mode plan` is its read-only mode, and `--allowed-mcp-server-names` naming a
    // server nobody has loads no MCP server. Its read-only tools (reading files) remain; the call
    // runs in an empty folder.
    classifier(profile, prompt) {
      const args = ['--output-format', 'stream-json', '--approval-mode', 'plan'];
      args.push('--allowed-mcp-server-names', NO_MCP_SERVER);
      if (profile.model) args.push('--model', profile.model);
      if (profile.skip_trust) args.push('--skip-trust');
      args.push(`--prompt=${prompt}`);
      return { args, env: {} };
    },
    limits: GEMINI_LIMITS,
    // Gemini CLI 0.61: `--resume <id>` with no session saved for the project, or none with that id.
    missingSession: [/Error resuming session: (No previous sessions found|Invalid session identifier)/],
    createParser: createGeminiParser,
  });
}
