import { describe, expect, it } from 'vitest';
import { loadDriver } from './registry.js';
import type { Provider } from './schemas.js';

/**
 * What each real CLI printed when asked to resume a conversation it did not have (run by hand
 * with an empty home against each package from the registry: Claude Code 2.1.197, Codex 0.171.0,
 * Gemini CLI 0.61.0, Qwen Code 0.15.10, OpenCode 1.18.33). Gemini's second form is its message for
 * an identifier it does not know when it has other sessions (from its source).
 */
const SEEN: Record<string, string[]> = {
  claude: ['No conversation found with session ID: 3f1c2a9e-1111-4222-8333-444455556666'],
  codex: [
    'Error: thread/resume: thread/resume failed: no rollout found for thread id 3f1c2a9e-1111-4222-8333-444455556666 (code -32600)',
  ],
  gemini: [
    'Error resuming session: No previous sessions found for this project.',
    'Error resuming session: Invalid session identifier "3f1c2a9e-1111-4222-8333-444455556666".',
  ],
  qwen: [
    'No saved session found with ID 3f1c2a9e-1111-4222-8333-444455556666. Run `qwen --resume` without an ID to choose from existing sessions.',
  ],
  opencode: ['\u001b[91m\u001b[1mError: \u001b[0mSession not found'],
};

/** Failures that are not a missing conversation: the session is kept for the next resume. */
const OTHER = [
  'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
  'Error: Request timed out.',
  'claude: error: simulated failure of a resumed session',
];

describe("a resume of a conversation the agent CLI does not have (each driver's missingSession)", () => {
  for (const [provider, lines] of Object.entries(SEEN)) {
    it(`${provider}: recognised in what the CLI printed, and nothing else is`, async () => {
      const driver = await loadDriver(provider as Provider);
      const patterns = driver.missingSession ?? [];
      expect(patterns.length).toBeGreaterThan(0);
      for (const line of lines) expect(patterns.some((p) => p.test(line))).toBe(true);
      for (const line of OTHER) expect(patterns.some((p) => p.test(line))).toBe(false);
    });
  }
});
