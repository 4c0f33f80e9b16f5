/**
 * A trigger type from a test folder, added with `registerTrigger`, goes through validate,
 * `validate --explain`, doctor and a run: nothing outside its folder and the registry knows it.
 * In process (the test trigger is not in dist/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../../src/cli/testing.js';
import { registerTrigger } from '../../src/triggers/registry.js';
import { echoTrigger } from '../fixtures/triggers/echo/index.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ECHO = `[automations.echo]
trigger_type = "tests/echo"
repository = "api"
words = ["alpha", "beta"]
prompt = "Say \${echo_word} (task \${task_number})"
`;

let h: Harness;
let unregister: () => void;
beforeAll(async () => {
  unregister = registerTrigger(echoTrigger);
  h = await createHarness({ automation: ECHO });
});
afterAll(async () => {
  unregister();
  await h.cleanup();
});

describe('a trigger type registered from a test folder', () => {
  it('is validated by its own schema, placeholders included', async () => {
    const ok = await runCliCaptured(['validate', '-c', h.settingsFile], { env: h.env });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    h.writeSettings(readFileSync(h.settingsFile, 'utf8').replace('"beta"', '"Beta"'));
    const bad = await runCliCaptured(['validate', '-c', h.settingsFile], { env: h.env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('words are lowercase letters');
    h.configure({ automation: ECHO });
  });

  it('is explained by its own hook', async () => {
    const result = await runCliCaptured(['validate', '-c', h.settingsFile, '--explain'], { env: h.env });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/echoes: +alpha, beta/);
    expect(result.stdout).toContain('echo_word');
  });

  it('is checked by doctor through its own hook, without GitHub', async () => {
    const result = await runCliCaptured(['doctor', '-c', h.settingsFile], { env: h.env });
    expect(result.stdout).toContain('ok    GitHub: not needed');
    expect(result.stdout).toContain('ok    automation echo: 2 words to echo');
    expect(result.code).toBe(0);
  });

  it('runs: one run per word, with its prompt fields', async () => {
    const result = await runCliCaptured(['run', '-c', h.settingsFile], { env: h.env });
    expect(result.code).toBe(0);
    // `run` has released the state lock by the time it returns (it awaits the release).
    expect(existsSync(`${h.settings().execution.state_db_path}.lock`)).toBe(false);
    const prompts = h
      .agentRuns('claude')
      .map((call) => call.prompt)
      .sort();
    expect(prompts).toEqual(['Say alpha (task alpha)', 'Say beta (task beta)']);
    const store = await h.openStore();
    try {
      const runs = await store.listRuns({ automationId: 'echo', limit: 10 });
      expect(runs.map((r) => [r.itemId, r.status]).sort()).toEqual([
        ['alpha', 'succeeded'],
        ['beta', 'succeeded'],
      ]);
    } finally {
      await store.close();
    }
  });
});
