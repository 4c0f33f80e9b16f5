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
 * Last run green with opencode 1.18.33.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ChatStandIn,
  startOpenAiChatStandIn,
} from '../../../test/helpers/model-stand-in/openai-chat.js';
import { commitCommand, explain, lastSubject, makeWorktree, runReal } from '../../../test/helpers/real-cli.js';
import { sandboxBackend } from '../../sandbox/registry.js';
import { createOpenCodeDriver } from './index.js';
import { OpenCodeProfile } from './schema.js';

const OPENCODE = process.env.CURUPIRA_REAL_OPENCODE;
const probe = OPENCODE ? await sandboxBackend('bubblewrap').probe() : { ok: false, reason: 'not asked' };
const CANARY = `canary-opencode-${'5'.repeat(32)}`;
/**
 * Looks for the canary everywhere the agent can: its environment, every process's, its home and
 * /tmp. The pattern is written to a file by a shell builtin, so that no command line holds it.
 */
const HUNT = `printf '%s%s\\n' canary-open code-5555 > hunt.pat; { env | sed 's/^/env: /'; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f | sed "s|^|$f: |"; done; grep -rs --exclude=hunt.pat -f hunt.pat "$HOME" /tmp; } 2>/dev/null | grep -f hunt.pat | cut -c1-160 > seen.txt; rm hunt.pat; git add seen.txt`;

describe.skipIf(!OPENCODE)('the real OpenCode CLI (CURUPIRA_REAL_OPENCODE)', () => {
  const driver = createOpenCodeDriver();
  let model: ChatStandIn;
  let layout: ReturnType<typeof makeWorktree>;
  let home: string;
  let version: string;

  beforeAll(async () => {
    model = await startOpenAiChatStandIn();
    layout = makeWorktree('curupira-real-opencode-');
    home = join(layout.root, 'home');
    mkdirSync(join(home, '.config', 'opencode'), { recursive: true });
    writeFileSync(
      join(home, '.config', 'opencode', 'opencode.json'),
      JSON.stringify({
        $schema: 'https://opencode.ai/config.json',
        autoupdate: false,
        provider: {
          standin: {
            npm: '@ai-sdk/openai-compatible',
            name: 'stand-in',
            options: { baseURL: '{env:OPENAI_BASE_URL}', apiKey: '{env:OPENAI_API_KEY}' },
            models: { m1: { name: 'm1', tool_call: true } },
          },
        },
      }),
    );
    version = execFileSync(OPENCODE!, ['--version'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: home },
    });
  });
  afterAll(async () => {
    await model?.close();
    if (layout) rmSync(layout.root, { recursive: true, force: true });
  });

  const profile = OpenCodeProfile.parse({ provider: 'opencode', model: 'standin/m1', auto_approve: true });
  const baseEnv = (): Record<string, string> => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    OPENAI_API_KEY: CANARY,
    OPENAI_BASE_URL: model.baseUrl,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
  });
  const invoke = (prompt: string, resumeSessionId?: string) =>
    driver.buildInvocation({
      profile,
      prompt,
      worktree: layout.worktree,
      version,
      ...(resumeSessionId ? { resumeSessionId } : {}),
    });

  it('commits in a plain worktree through the stand-in, which receives the key', async () => {
    model.pending = `${HUNT}; ${commitCommand('plain')}`;
    const invocation = invoke('commit');
    const run = await runReal({
      driver,
      executable: OPENCODE!,
      args: invocation.args,
      cwd: layout.worktree,
      env: { ...baseEnv(), ...invocation.env },
    });
    expect(run.exitCode, explain(run)).toBe(0);
    expect(lastSubject(layout.worktree)).toBe('plain');
    expect(model.requests.some((r) => r.authorization === `Bearer ${CANARY}`)).toBe(true);
    // Unsandboxed, the agent holds the key: the hunt finds it (so the check below can fail).
    expect(readFileSync(join(layout.worktree, 'seen.txt'), 'utf8')).toContain('env: OPENAI_API_KEY=canary-opencode-');
  }, 180_000);

  it.skipIf(!probe.ok)(
    'commits inside the sandbox; the stand-in receives the key through the key proxy and the agent never holds it',
    async () => {
      model.requests.length = 0;
      model.pending = `${HUNT}; ${commitCommand('sandboxed')}`;
      const invocation = invoke('commit');
      const run = await runReal({
        driver,
        executable: OPENCODE!,
        args: invocation.args,
        cwd: layout.worktree,
        env: { ...baseEnv(), ...invocation.env },
        sandbox: { stateDir: join(layout.root, 'state'), realHome: home, homeKey: 'opencode-task' },
      });
      expect(run.exitCode, explain(run)).toBe(0);
      expect(lastSubject(layout.worktree)).toBe('sandboxed');
      expect(model.requests.length).toBeGreaterThan(0);
      expect(model.requests.every((r) => r.authorization === `Bearer ${CANARY}`)).toBe(true);
      expect(Object.values(run.env).join('\n')).not.toContain(CANARY);
      expect(readFileSync(join(layout.worktree, 'seen.txt'), 'utf8')).toBe('');
    },
    180_000,
  );

  it.skipIf(!probe.ok)(
    'resumes its session inside the sandbox after kill -9 and commits again',
    async () => {
      model.requests.length = 0;
      model.pending = commitCommand('before-kill');
      // The turn after the tool result never answers: the agent is mid-session when killed.
      model.hold = (request) => request.lastRole === 'tool';
      const sandbox = { stateDir: join(layout.root, 'state'), realHome: home, homeKey: 'opencode-task' };
      const invocation = invoke('commit');
      const killed = await runReal({
        driver,
        executable: OPENCODE!,
        args: invocation.args,
        cwd: layout.worktree,
        env: { ...baseEnv(), ...invocation.env },
        sandbox,
        onEvent: (event, kill) => {
          if (event.kind === 'tool_result') kill();
        },
      });
      expect(killed.signal, explain(killed)).toBe('SIGKILL');
      expect(lastSubject(layout.worktree)).toBe('before-kill');
      expect(killed.sessionId).toBeDefined();

      model.hold = undefined;
      model.pending = commitCommand('resumed');
      const again = invoke('go on', killed.sessionId);
      expect(again.args).toContain('--session');
      const resumed = await runReal({
        driver,
        executable: OPENCODE!,
        args: again.args,
        cwd: layout.worktree,
        env: { ...baseEnv(), ...again.env },
        sandbox,
      });
      expect(resumed.exitCode, explain(resumed)).toBe(0);
      expect(lastSubject(layout.worktree)).toBe('resumed');
      expect(resumed.sessionId).toBe(killed.sessionId);
      // The resumed request carries the killed run's history (its tool call and result).
      expect(model.requests.at(-1)?.messages).toBeGreaterThan(3);
    },
    240_000,
  );
});
