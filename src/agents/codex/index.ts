/**
 * Codex CLI: `codex exec [resume ID] [--model M] [--profile A] [--config model_reasoning_effort="E"]
 * [--sandbox S] [--config approval_policy="on-request" --config approvals_reviewer="auto_review"]
 * --json -- MSG`. Config values are TOML, so strings go JSON-quoted inside one argument.
 */
import { assertProvider } from '../driver-kit.js';
import type { AgentDriver } from '../types.js';
import { createCodexParser } from './parser.js';
import type { CodexProfile } from './schema.js';

export function createCodexDriver(): AgentDriver<CodexProfile> {
  return {
    provider: 'codex',
    displayName: 'Codex CLI',
    executable: 'codex',
    installUrl: 'https://github.com/openai/codex',
    assignsSessionId: false,
    envAllowlist: ['OPENAI_*', 'CODEX_*', 'AZURE_OPENAI_*'],
    buildInvocation(input) {
      assertProvider('codex', input.profile);
      const { profile } = input;
      const args = ['exec'];
      if (input.resumeSessionId) args.push('resume', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.agent) args.push('--profile', profile.agent);
      if (profile.effort) args.push('--config', `model_reasoning_effort=${JSON.stringify(profile.effort)}`);
      if (profile.sandbox) args.push('--sandbox', profile.sandbox);
      if (profile.auto_review) {
        args.push(
          '--config',
          `approval_policy=${JSON.stringify('on-request')}`,
          '--config',
          `approvals_reviewer=${JSON.stringify('auto_review')}`,
        );
      }
      args.push('--json', '--', input.prompt);
      return { args, env: {} };
    },
    createParser: createCodexParser,
  };
}
