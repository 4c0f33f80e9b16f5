/**
 * Cursor agent CLI (executable `agent`): `agent --print --output-format stream-json [--resume ID]
 * [--mode A] [--model M] [--force] [--trust] -- MSG`.
 */
import { defineDriver } from '../driver-kit.js';
import { CURSOR_LIMITS } from '../limits.js';
import type { AgentDriver } from '../types.js';
import { createCursorParser } from './parser.js';
import type { CursorProfile } from './schema.js';

export function createCursorDriver(): AgentDriver<CursorProfile> {
  return defineDriver({
    provider: 'cursor',
    displayName: 'Cursor Agent',
    executable: 'agent',
    installUrl: 'https://cursor.com/cli',
    assignsSessionId: false,
    envAllowlist: ['CURSOR_*'],
    // Cursor's agent keeps its login in its config folder: it goes inside.
    sandbox: {
      homePaths: ['.cursor/cli-config.json', '.config/cursor'],
      hosts: ['api2.cursor.sh', '*.cursor.sh', 'cursor.com'],
    },
    invocation(profile, input) {
      const args = ['--print', '--output-format', 'stream-json'];
      if (input.resumeSessionId) args.push('--resume', input.resumeSessionId);
      if (profile.agent) args.push('--mode', profile.agent);
      if (profile.model) args.push('--model', profile.model);
      if (profile.force) args.push('--force');
      if (profile.trust) args.push('--trust');
      args.push('--', input.prompt);
      return { args, env: {} };
    },
    limits: CURSOR_LIMITS,
    createParser: createCursorParser,
  });
}
