/**
 * Qwen Code: `qwen --output-format stream-json [--resume ID] [--model M] [--approval-mode X]
 * [--max-session-turns N] [--mcp-config JSON] --prompt=MSG`. Its stream follows Claude Code's
 * stream-json.
 *
 * The run's MCP servers (a review's findings tools, the result tool) go in `--mcp-config`, a JSON
 * string `{"mcpServers":{NAME:{"command":…,"args":[…],"env":{…},"trust":true}}}`: Qwen Code
 * 0.15.10 (its `--help`: "MCP server configuration as JSON string or file path") adds these servers
 * to those of its settings for that run (`{ ...settings.mcpServers, ...cli }` in its config
 * loader). `trust: true` skips the confirmation of their tools: they are curupira's own, and a
 * headless run could not confirm them. Checked against the real CLI, which starts the server so
 * declared and completes the MCP handshake with it.
 */
import { approvalModeCheck, defineDriver } from '../driver-kit.js';
import { QWEN_LIMITS } from '../limits.js';
import { createClaudeStreamParser } from '../streams/claude-stream.js';
import type { AgentDriver, McpServerSpec } from '../types.js';
import type { QwenProfile } from './schema.js';

/** The run's MCP servers as one `--mcp-config` JSON string. */
export function qwenMcpConfig(servers: readonly McpServerSpec[]): string {
  const mcpServers = Object.fromEntries(
    servers.map((s) => [s.name, { command: s.command, args: [...s.args], env: { ...s.env }, trust: true }]),
  );
  return JSON.stringify({ mcpServers });
}

export function createQwenDriver(): AgentDriver<QwenProfile> {
  return defineDriver({
    provider: 'qwen',
    displayName: 'Qwen Code',
    executable: 'qwen',
    installUrl: 'https://github.com/QwenLM/qwen-code',
    assignsSessionId: false,
    declaresMcpServers: true,
    // Qwen Code talks to OpenAI-compatible endpoints (DashScope among them).
    envAllowlist: ['QWEN_*', 'OPENAI_*', 'DASHSCOPE_*'],
    // Qwen Code's OpenAI-compatible mode reads OPENAI_BASE_URL and OPENAI_API_KEY.
    sandbox: {
      homePaths: ['.qwen/settings.json', '.qwen/oauth_creds.json'],
      hosts: ['dashscope.aliyuncs.com', 'dashscope-intl.aliyuncs.com', 'chat.qwen.ai'],
      keys: [
        {
          keyEnv: ['OPENAI_API_KEY'],
          baseUrlEnv: 'OPENAI_BASE_URL',
          defaultBaseUrl: 'https://api.openai.com/v1',
        },
      ],
    },
    unattended: {
      login: { env: ['OPENAI_API_KEY', 'DASHSCOPE_API_KEY'], homeFiles: ['.qwen/oauth_creds.json'] },
      approval: approvalModeCheck<QwenProfile>('auto-edit'),
    },
    invocation(profile, input) {
      const args = ['--output-format', 'stream-json'];
      if (input.resumeSessionId) args.push('--resume', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.approval_mode) args.push('--approval-mode', profile.approval_mode);
      if (profile.max_session_turns !== undefined)
        args.push('--max-session-turns', String(profile.max_session_turns));
      if (input.mcpServers && input.mcpServers.length > 0)
        args.push('--mcp-config', qwenMcpConfig(input.mcpServers));
      args.push(`--prompt=${input.prompt}`);
      return { args, env: {} };
    },
    limits: QWEN_LIMITS,
    // Qwen Code 0.15: `--resume <id>` of a session it has not saved.
    missingSession: [/No saved session found with ID/],
    createParser: () => createClaudeStreamParser({ inputIncludesCache: true }),
  });
}
