/**
 * Gemini CLI: `gemini --output-format stream-json [--resume ID] [--model M] [--approval-mode X]
 * [--skip-trust] --prompt=MSG`. The session id comes from the stream's `init` event.
 */
import { defineDriver } from '../driver-kit.js';
import { GEMINI_LIMITS } from '../limits.js';
import type { AgentDriver } from '../types.js';
import { createGeminiParser } from './parser.js';
import type { GeminiProfile } from './schema.js';

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
      hosts: ['generativelanguage.googleapis.com', 'oauth2.googleapis.com', 'cloudcode-pa.googleapis.com'],
      keys: [
        {
          keyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
          baseUrlEnv: 'GOOGLE_GEMINI_BASE_URL',
          defaultBaseUrl: 'https://generativelanguage.googleapis.com',
        },
      ],
    },
    invocation(profile, input) {
      const args = ['--output-format', 'stream-json'];
      if (input.resumeSessionId) args.push('--resume', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.approval_mode) args.push('--approval-mode', profile.approval_mode);
      if (profile.skip_trust) args.push('--skip-trust');
      args.push(`--prompt=${input.prompt}`);
      return { args, env: {} };
    },
    limits: GEMINI_LIMITS,
    createParser: createGeminiParser,
  });
}
