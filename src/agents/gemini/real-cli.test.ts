/**
 * The Gemini CLI driver's invocations against the real Gemini CLI, driven by a local stand-in for
 * Google's Gemini API (test/helpers/model-stand-in/gemini.ts), which Gemini CLI reaches through
 * GOOGLE_GEMINI_BASE_URL with GEMINI_API_KEY (the API-key login chosen in ~/.gemini/settings.json):
 * a committing run in a plain worktree, the same inside the bubblewrap sandbox with the model key
 * held by the key proxy, and a resume (`--resume ID`) inside the sandbox after kill -9.
 *
 * Skipped unless CURUPIRA_REAL_GEMINI names a Gemini CLI executable: the suite installs nothing
 * and reaches no network. Run it with the CLI installed outside the repository, e.g.
 *   (mkdir -p /tmp/clis/gemini && cd /tmp/clis/gemini && npm install @google/gemini-cli)
 *   CURUPIRA_REAL_GEMINI=/tmp/clis/gemini/node_modules/.bin/gemini npx vitest run src/agents/gemini/real-cli.test.ts
 * Last run green with Gemini CLI 0.61.0 (3 of 3), Node 20, 2026-12-06 (the resume once the turn is
 * saved: `turnSaved`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startGeminiStandIn } from '../../../test/helpers/model-stand-in/gemini.js';
import { describeRealCli } from '../../../test/helpers/real-cli.js';
import { createGeminiDriver } from './index.js';
import { GeminiProfile } from './schema.js';

const CANARY = `canary-gemini-cli-${'7'.repeat(32)}`;

describeRealCli({
  label: 'Gemini CLI',
  variable: 'CURUPIRA_REAL_GEMINI',
  driver: createGeminiDriver(),
  profile: GeminiProfile.parse({
    provider: 'gemini',
    model: 'gemini-2.5-flash',
    approval_mode: 'yolo',
    skip_trust: true,
  }),
  canary: CANARY,
  keyEnv: 'GEMINI_API_KEY',
  startModel: startGeminiStandIn,
  prepareHome(home) {
    mkdirSync(join(home, '.gemini'), { recursive: true });
    writeFileSync(
      join(home, '.gemini', 'settings.json'),
      JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
    );
  },
  env: (home, baseUrl) => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GEMINI_API_KEY: CANARY,
    GOOGLE_GEMINI_BASE_URL: baseUrl,
  }),
  // Gemini CLI 0.61.0 prints the tool's result before it records the call and its result in the
  // session (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, a `functionResponse` line): killed
  // before that, `--resume` finds the session without the turn.
  turnSaved: (files) =>
    files.some(
      (file) =>
        /\/chats\/[^/]+\.jsonl$/.test(file) && readFileSync(file, 'utf8').includes('"functionResponse"'),
    ),
});
