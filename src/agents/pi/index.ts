/**
 * pi coding agent: `pi --mode json [--session ID] [--provider P] [--model M] [--thinking E]
 * [--tools a,b] [--exclude-tools c,d] [--approve | --no-approve] -- MSG`. The session id comes
 * from the stream's `{"type":"session",…,"id":…}` header.
 */
import { COMMON_MODEL_ENV, defineDriver } from '../driver-kit.js';
import { API_LIMITS } from '../limits.js';
import type { AgentDriver } from '../types.js';
import { createPiParser } from './parser.js';
import type { PiProfile } from './schema.js';

export function createPiDriver(): AgentDriver<PiProfile> {
  return defineDriver({
    provider: 'pi',
    displayName: 'pi',
    executable: 'pi',
    installUrl: 'https://github.com/badlogic/pi-mono/tree/main/packages/coding-agent',
    assignsSessionId: false,
    envAllowlist: ['PI_*', ...COMMON_MODEL_ENV],
    // pi keeps its model keys in its agent folder: they go inside.
    sandbox: {
      homePaths: ['.pi/agent/auth.json', '.pi/agent/settings.json', '.pi/agent/models.json'],
      hosts: ['api.anthropic.com', 'api.openai.com', 'generativelanguage.googleapis.com', 'openrouter.ai'],
    },
    invocation(profile, input) {
      const args = ['--mode', 'json'];
      if (input.resumeSessionId) args.push('--session', input.resumeSessionId);
      if (profile.model_provider) args.push('--provider', profile.model_provider);
      if (profile.model) args.push('--model', profile.model);
      if (profile.effort) args.push('--thinking', profile.effort);
      if (profile.tools.length > 0) args.push('--tools', profile.tools.join(','));
      if (profile.exclude_tools.length > 0) args.push('--exclude-tools', profile.exclude_tools.join(','));
      if (profile.approve === true) args.push('--approve');
      if (profile.approve === false) args.push('--no-approve');
      args.push('--', input.prompt);
      return { args, env: {} };
    },
    limits: API_LIMITS,
    createParser: createPiParser,
  });
}
