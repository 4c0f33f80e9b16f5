/**
 * The Qwen Code driver's invocations against the real Qwen Code CLI, driven by a local stand-in for
 * an OpenAI-compatible model API (test/helpers/model-stand-in/openai-chat.ts), which Qwen Code
 * reaches through OPENAI_BASE_URL with OPENAI_API_KEY and OPENAI_MODEL: a committing run in a plain
 * worktree, the same inside the bubblewrap sandbox with the model key held by the key proxy, and a
 * resume (`--resume ID`) inside the sandbox after kill -9.
 *
 * Skipped unless CURUPIRA_REAL_QWEN names a Qwen Code executable: the suite installs nothing and
 * reaches no network. Run it with the CLI installed outside the repository, e.g.
 *   (mkdir -p /tmp/clis/qwen && cd /tmp/clis/qwen && npm install @qwen-code/qwen-code)
 *   CURUPIRA_REAL_QWEN=/tmp/clis/qwen/node_modules/.bin/qwen npx vitest run src/agents/qwen/real-cli.test.ts
 * Last run green with Qwen Code 0.15.10 (3 of 3), Node 20.
 */
import { startOpenAiChatStandIn } from '../../../test/helpers/model-stand-in/openai-chat.js';
import { describeRealCli } from '../../../test/helpers/real-cli.js';
import { createQwenDriver } from './index.js';
import { QwenProfile } from './schema.js';

const CANARY = `canary-qwen-code-${'6'.repeat(32)}`;

describeRealCli({
  label: 'Qwen Code',
  variable: 'CURUPIRA_REAL_QWEN',
  driver: createQwenDriver(),
  profile: QwenProfile.parse({ provider: 'qwen', model: 'm1', approval_mode: 'yolo' }),
  canary: CANARY,
  keyEnv: 'OPENAI_API_KEY',
  startModel: startOpenAiChatStandIn,
  env: (home, baseUrl) => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    OPENAI_API_KEY: CANARY,
    OPENAI_BASE_URL: baseUrl,
    OPENAI_MODEL: 'm1',
  }),
});
