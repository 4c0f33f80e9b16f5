/**
 * The Copilot CLI driver's invocations against the real GitHub Copilot CLI in its BYOK mode
 * (`copilot help environment`: COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_API_KEY, COPILOT_MODEL,
 * and COPILOT_OFFLINE=true so that it reaches nothing else), driven by a local stand-in for an
 * OpenAI-compatible model API (test/helpers/model-stand-in/openai-chat.ts): a committing run in a
 * plain worktree, the same inside the bubblewrap sandbox with the provider key held by the key
 * proxy, and a resume (the same `--session-id`) inside the sandbox after kill -9.
 *
 * Copilot's own login (a GitHub token exchanged for Copilot's) is not covered: that token goes
 * inside the sandbox (docs/sandbox.md).
 *
 * Skipped unless CURUPIRA_REAL_COPILOT names a Copilot CLI executable: the suite installs nothing
 * and reaches no network. Run it with the CLI installed outside the repository, e.g.
 *   (mkdir -p /tmp/clis/copilot && cd /tmp/clis/copilot && npm install @github/copilot)
 *   CURUPIRA_REAL_COPILOT=/tmp/clis/copilot/node_modules/.bin/copilot npx vitest run src/agents/copilot/real-cli.test.ts
 * Last run green with Copilot CLI 1.0.102 (3 of 3), Node 20.
 */
import { startOpenAiChatStandIn } from '../../../test/helpers/model-stand-in/openai-chat.js';
import { describeRealCli } from '../../../test/helpers/real-cli.js';
import { createCopilotDriver } from './index.js';
import { CopilotProfile } from './schema.js';

const CANARY = `canary-copilot-cli-${'8'.repeat(32)}`;

describeRealCli({
  label: 'GitHub Copilot',
  variable: 'CURUPIRA_REAL_COPILOT',
  driver: createCopilotDriver(),
  // The hunt for the canary reads /proc, the home and /tmp: paths outside the worktree, which
  // Copilot CLI refuses in an unattended run without --allow-all-paths.
  profile: CopilotProfile.parse({
    provider: 'copilot',
    model: 'gpt-4.1',
    allow_all_tools: true,
    allow_all_paths: true,
  }),
  canary: CANARY,
  keyEnv: 'COPILOT_PROVIDER_API_KEY',
  startModel: startOpenAiChatStandIn,
  env: (home, baseUrl) => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_PROVIDER_BASE_URL: baseUrl,
    COPILOT_PROVIDER_API_KEY: CANARY,
    COPILOT_MODEL: 'gpt-4.1',
  }),
});
