/**
 * Kilo Code CLI, an OpenCode derivative with the same headless events:
 * `kilo run --format json [--session ID] [--model M] [--agent A] [--variant E] [--auto] -- MSG`.
 *
 * The run's MCP servers (a review's findings tools, the result tool) go in `KILO_CONFIG_CONTENT`,
 * Kilo's name for OpenCode's `OPENCODE_CONFIG_CONTENT` (same `mcp` shape, read last and merged
 * over the user's configuration); a value the user set in that variable is kept and extended.
 * Checked against the real Kilo CLI 7.7.7 (test/e2e/real-kilo-tools.test.ts).
 */
import { COMMON_MODEL_ENV, defineDriver } from '../driver-kit.js';
import { API_LIMITS } from '../limits.js';
import { OPENCODE_STYLE_KEYS, openCodeConfigContent, openCodeStyleClassifier } from '../opencode/index.js';
import { createOpenCodeStreamParser } from '../streams/opencode-stream.js';
import type { AgentDriver } from '../types.js';
import type { KiloProfile } from './schema.js';

export function createKiloDriver(): AgentDriver<KiloProfile> {
  return defineDriver({
    provider: 'kilo',
    displayName: 'Kilo Code CLI',
    executable: 'kilo',
    installUrl: 'https://kilo.ai/cli',
    assignsSessionId: false,
    declaresMcpServers: true,
    envAllowlist: ['KILO_*', 'KILOCODE_*', 'OPENCODE_*', ...COMMON_MODEL_ENV],
    // Kilo (an OpenCode fork) keeps its credentials in its data folder: they go inside. Like
    // OpenCode, a custom provider's configuration can read OPENAI_BASE_URL and OPENAI_API_KEY
    // (`{env:…}`), so in a sandbox the key proxy holds those keys (checked against the real CLI,
    // real-cli.test.ts).
    sandbox: {
      homePaths: ['.local/share/kilo/auth.json', '.config/kilo'],
      hosts: ['api.kilocode.ai', 'kilocode.ai', 'api.anthropic.com', 'api.openai.com', 'openrouter.ai'],
      keys: OPENCODE_STYLE_KEYS,
    },
    invocation(profile, input) {
      const args = ['run', '--format', 'json'];
      if (input.resumeSessionId) args.push('--session', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.agent) args.push('--agent', profile.agent);
      if (profile.effort) args.push('--variant', profile.effort);
      if (profile.auto_approve) args.push('--auto');
      const env: Record<string, string> = {};
      if (input.mcpServers && input.mcpServers.length > 0)
        env.KILO_CONFIG_CONTENT = openCodeConfigContent(input.mcpServers, input.env?.KILO_CONFIG_CONTENT);
      args.push('--', input.prompt);
      return { args, env };
    },
    // The screening classifier's call, as OpenCode's (checked against the real Kilo CLI 7.7.7,
    // test/e2e/real-kilo-tools.test.ts: the model is offered no tool).
    classifier: openCodeStyleClassifier<KiloProfile>('KILO'),
    limits: API_LIMITS,
    createParser: createOpenCodeStreamParser,
  });
}
