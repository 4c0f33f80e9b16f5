/**
 * The Kilo Code CLI driver's invocations against the real Kilo CLI (`@kilocode/cli`, an OpenCode
 * derivative), driven by a local stand-in for an OpenAI-compatible model API
 * (test/helpers/model-stand-in/openai-chat.ts): a committing run in a plain worktree, the same
 * inside the bubblewrap sandbox with the model key held by the key proxy, and a resume after
 * kill -9 inside the sandbox.
 *
 * Kilo reads its provider from its configuration (`~/.config/kilo/kilo.json`): a custom provider
 * (`@ai-sdk/openai-compatible`) whose `baseURL` and `apiKey` are `{env:OPENAI_BASE_URL}` and
 * `{env:OPENAI_API_KEY}`, as OpenCode's configuration reads them.
 *
 * Skipped unless CURUPIRA_REAL_KILO names a Kilo executable: the suite installs nothing and reaches
 * no network. Run it with the CLI installed outside the repository, e.g.
 *   (mkdir -p /tmp/clis/kilo && cd /tmp/clis/kilo && npm install @kilocode/cli@7.7.7)
 *   CURUPIRA_REAL_KILO=/tmp/clis/kilo/node_modules/.bin/kilo npx vitest run src/agents/kilo/real-cli.test.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { standInProvider, startOpenAiChatStandIn } from '../../../test/helpers/model-stand-in/openai-chat.js';
import { describeRealCli } from '../../../test/helpers/real-cli.js';
import { createKiloDriver } from './index.js';
import { KiloProfile } from './schema.js';

const CANARY = `canary-kilo-${'6'.repeat(32)}`;

describeRealCli({
  label: 'Kilo',
  variable: 'CURUPIRA_REAL_KILO',
  driver: createKiloDriver(),
  profile: KiloProfile.parse({ provider: 'kilo', model: 'standin/m1', auto_approve: true }),
  canary: CANARY,
  keyEnv: 'OPENAI_API_KEY',
  startModel: startOpenAiChatStandIn,
  prepareHome(home) {
    mkdirSync(join(home, '.config', 'kilo'), { recursive: true });
    writeFileSync(
      join(home, '.config', 'kilo', 'kilo.json'),
      JSON.stringify({
        autoupdate: false,
        provider: standInProvider(),
      }),
    );
  },
  env: (home, baseUrl) => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    OPENAI_API_KEY: CANARY,
    OPENAI_BASE_URL: baseUrl,
    KILO_DISABLE_MODELS_FETCH: '1',
    KILO_DISABLE_AUTOUPDATE: '1',
  }),
});
