/**
 * The OpenCode driver's invocations against the real OpenCode CLI, driven by a local stand-in for
 * an OpenAI-compatible model API (test/helpers/model-stand-in/openai-chat.ts): a committing run in
 * a plain worktree, the same inside the bubblewrap sandbox with the model key held by the key
 * proxy, and a resume after kill -9 inside the sandbox.
 *
 * OpenCode reads its provider from its configuration: a custom provider (`@ai-sdk/openai-compatible`)
 * whose `baseURL` and `apiKey` are `{env:OPENAI_BASE_URL}` and `{env:OPENAI_API_KEY}`; its built-in
 * `openai` and `anthropic` providers read the same variables (OPENAI_BASE_URL, ANTHROPIC_BASE_URL).
 *
 * Skipped unless CURUPIRA_REAL_OPENCODE names an OpenCode executable: the suite installs nothing
 * and reaches no network. Run it with the CLI installed outside the repository, e.g.
 *   (mkdir -p /tmp/clis/opencode && cd /tmp/clis/opencode && npm install opencode-ai)
 *   CURUPIRA_REAL_OPENCODE=/tmp/clis/opencode/node_modules/.bin/opencode \
 *     npx vitest run src/agents/opencode/real-cli.test.ts
 * Last run green with opencode 1.18.33 (3 of 3), Node 20.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { standInProvider, startOpenAiChatStandIn } from '../../../test/helpers/model-stand-in/openai-chat.js';
import { describeRealCli } from '../../../test/helpers/real-cli.js';
import { createOpenCodeDriver } from './index.js';
import { OpenCodeProfile } from './schema.js';

describeRealCli({
  label: 'OpenCode',
  variable: 'CURUPIRA_REAL_OPENCODE',
  driver: createOpenCodeDriver(),
  profile: OpenCodeProfile.parse({ provider: 'opencode', model: 'standin/m1', auto_approve: true }),
  canary: `canary-opencode-${'5'.repeat(32)}`,
  keyEnv: 'OPENAI_API_KEY',
  startModel: startOpenAiChatStandIn,
  prepareHome(home) {
    mkdirSync(join(home, '.config', 'opencode'), { recursive: true });
    writeFileSync(
      join(home, '.config', 'opencode', 'opencode.json'),
      JSON.stringify({
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        provider: standInProvider(),
      }),
    );
  },
  env: (home, baseUrl) => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    OPENAI_API_KEY: `canary-opencode-${'5'.repeat(32)}`,
    OPENAI_BASE_URL: baseUrl,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
  }),
});
