/**
 * Qwen Code: `qwen --output-format stream-json [--resume ID] [--model M] [--approval-mode X]
 * [--max-session-turns N] --prompt=MSG`. Its stream follows Claude Code's stream-json.
 */
import { defineDriver } from '../driver-kit.js';
import { QWEN_LIMITS } from '../limits.js';
import { createClaudeStreamParser } from '../streams/claude-stream.js';
import type { AgentDriver } from '../types.js';
import type { QwenProfile } from './schema.js';

export function createQwenDriver(): AgentDriver<QwenProfile> {
  return defineDriver({
    provider: 'qwen',
    displayName: 'Qwen Code',
    executable: 'qwen',
    installUrl: 'https://github.com/QwenLM/qwen-code',
    assignsSessionId: false,
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
    invocation(profile, input) {
      const args = ['--output-format', 'stream-json'];
      if (input.resumeSessionId) args.push('--resume', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.approval_mode) args.push('--approval-mode', profile.approval_mode);
      if (profile.max_session_turns !== undefined)
        args.push('--max-session-turns', String(profile.max_session_turns));
      args.push(`--prompt=${input.prompt}`);
      return { args, env: {} };
    },
    limits: QWEN_LIMITS,
    createParser: () => createClaudeStreamParser({ inputIncludesCache: true }),
  });
}
