/**
 * Kilo Code CLI, an OpenCode derivative with the same headless events:
 * `kilo run --format json [--session ID] [--model M] [--agent A] [--variant E] [--auto] -- MSG`.
 */
import { COMMON_MODEL_ENV, defineDriver } from '../driver-kit.js';
import { API_LIMITS } from '../limits.js';
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
    envAllowlist: ['KILO_*', 'KILOCODE_*', 'OPENCODE_*', ...COMMON_MODEL_ENV],
    // Kilo (an OpenCode fork) keeps its credentials in its data folder: they go inside.
    sandbox: {
      homePaths: ['.local/share/kilo/auth.json', '.config/kilo'],
      hosts: ['api.kilocode.ai', 'kilocode.ai', 'api.anthropic.com', 'api.openai.com', 'openrouter.ai'],
    },
    invocation(profile, input) {
      const args = ['run', '--format', 'json'];
      if (input.resumeSessionId) args.push('--session', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.agent) args.push('--agent', profile.agent);
      if (profile.effort) args.push('--variant', profile.effort);
      if (profile.auto_approve) args.push('--auto');
      args.push('--', input.prompt);
      return { args, env: {} };
    },
    limits: API_LIMITS,
    createParser: createOpenCodeStreamParser,
  });
}
