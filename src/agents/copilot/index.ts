/**
 * GitHub Copilot CLI: `copilot --output-format=json --no-ask-user --session-id=ID [--model=M]
 * [--agent=A] [--reasoning-effort=E] [--allow-all-tools] [--allow-all-paths] [--allow-tool=a,b]
 * [--deny-tool=c] --prompt=MSG`. Curupira chooses the session id and saves it before the start; a resumed run
 * passes the same id again.
 *
 * The run's MCP servers (a review's findings tools, the result tool) go in one
 * `--additional-mcp-config=JSON` (`{"mcpServers":{NAME:{"type":"local","command":…,"args":[…],
 * "env":{…},"tools":["*"]}}}`, the shape `copilot mcp add --json` prints), which Copilot CLI 1.0.102
 * adds to the user's `~/.copilot/mcp-config.json` "for this session" (its `--help`), and their tools
 * are approved with `--allow-tool=NAME` (a `--deny-tool` still wins): they are curupira's own, and
 * `--no-ask-user` would refuse them otherwise. Checked against the real CLI, which starts the
 * server so declared and completes the MCP handshake with it.
 *
 * Copilot authenticates with a GitHub token: its own `COPILOT_GITHUB_TOKEN` passes with the
 * provider's variables, while `GH_TOKEN` / `GITHUB_TOKEN` reach it only with `github_token = true`.
 */
import { CurupiraError } from '../../core/errors.js';
import { defineDriver } from '../driver-kit.js';
import { COPILOT_LIMITS } from '../limits.js';
import type { AgentDriver, McpServerSpec } from '../types.js';
import { createCopilotParser } from './parser.js';
import type { CopilotProfile } from './schema.js';

/** The run's MCP servers as one `--additional-mcp-config` JSON string. */
export function copilotMcpConfig(servers: readonly McpServerSpec[]): string {
  const mcpServers = Object.fromEntries(
    servers.map((s) => [
      s.name,
      { type: 'local', command: s.command, args: [...s.args], env: { ...s.env }, tools: ['*'] },
    ]),
  );
  return JSON.stringify({ mcpServers });
}

export function createCopilotDriver(): AgentDriver<CopilotProfile> {
  return defineDriver({
    provider: 'copilot',
    displayName: 'GitHub Copilot CLI',
    executable: 'copilot',
    installUrl: 'https://github.com/github/copilot-cli',
    assignsSessionId: true,
    declaresMcpServers: true,
    envAllowlist: ['COPILOT_*', 'GH_HOST'],
    // Copilot CLI authenticates with a GitHub token (the profile's `github_token`) or its own login,
    // which go inside. With a model provider of one's own (BYOK, `copilot help environment` of
    // 1.0.102: COPILOT_PROVIDER_BASE_URL with COPILOT_PROVIDER_API_KEY or _BEARER_TOKEN) the key
    // proxy holds the provider's key (checked against the real CLI, real-cli.test.ts).
    sandbox: {
      homePaths: ['.copilot/config.json'],
      hosts: ['api.githubcopilot.com', '*.githubcopilot.com', 'api.github.com', 'github.com'],
      keys: [
        {
          keyEnv: ['COPILOT_PROVIDER_API_KEY', 'COPILOT_PROVIDER_BEARER_TOKEN'],
          baseUrlEnv: 'COPILOT_PROVIDER_BASE_URL',
          defaultBaseUrl: 'https://api.openai.com/v1',
        },
      ],
    },
    unattended: {
      approval: (profile) =>
        !profile.allow_all_tools && profile.allow_tools.length === 0
          ? {
              key: 'allow_all_tools',
              advice:
                'true (or list the tools in allow_tools): otherwise Copilot CLI asks before each tool and an unattended run refuses them',
            }
          : undefined,
    },
    invocation(profile, input) {
      const sessionId = input.resumeSessionId ?? input.assignedSessionId;
      if (!sessionId) {
        throw new CurupiraError(
          'agent_start',
          'copilot needs a session id chosen and saved before it starts',
        );
      }
      const args = ['--output-format=json', '--no-ask-user', `--session-id=${sessionId}`];
      if (profile.model) args.push(`--model=${profile.model}`);
      if (profile.agent) args.push(`--agent=${profile.agent}`);
      if (profile.effort) args.push(`--reasoning-effort=${profile.effort}`);
      if (profile.allow_all_tools) args.push('--allow-all-tools');
      if (profile.allow_all_paths) args.push('--allow-all-paths');
      const servers = input.mcpServers ?? [];
      const allowed = [...profile.allow_tools, ...servers.map((s) => s.name)];
      if (allowed.length > 0) args.push(`--allow-tool=${allowed.join(',')}`);
      if (profile.deny_tools.length > 0) args.push(`--deny-tool=${profile.deny_tools.join(',')}`);
      if (servers.length > 0) args.push(`--additional-mcp-config=${copilotMcpConfig(servers)}`);
      args.push(`--prompt=${input.prompt}`);
      return { args, env: {} };
    },
    limits: COPILOT_LIMITS,
    createParser: createCopilotParser,
  });
}
