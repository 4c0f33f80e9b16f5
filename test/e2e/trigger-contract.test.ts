/**
 * A trigger type from a test folder, added with `registerTrigger`, goes through validate,
 * `validate --explain`, doctor and a run: nothing outside its folder and the registry knows it.
 * A second one uses the optional capabilities (it fires from a schedule, names its items' author,
 * takes webhooks): the kernel, the board and the webhook route ask it for them, never its name.
 * In process (the test triggers are not in dist/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../../src/cli/testing.js';
import { automationCards } from '../../src/server/board-data.js';
import { concernedAutomations } from '../../src/server/webhooks.js';
import { registerTrigger } from '../../src/triggers/registry.js';
import { chimeTrigger } from '../fixtures/triggers/chime/index.js';
import { echoTrigger } from '../fixtures/triggers/echo/index.js';
import { createHarness, type Harness, waitFor } from '../helpers/harness.js';
import { startWatching } from '../helpers/watch.js';

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

const CHIME = `[automations.chime]
trigger_type = "tests/chime"
repository = "api"
note = "ring twice"
ringer = "quasimodo"
listens_to = "acme/bells"
prompt = "Chime: \${chime_note}"
`;

describe('a trigger type with optional capabilities, registered from a test folder', () => {
  it('fires from a schedule, takes its webhooks and names its author, with no edit outside its folder', async () => {
    const unregisterChime = registerTrigger(chimeTrigger);
    const harness = await createHarness({ automation: `${ECHO}\n${CHIME}` });
    const watching = await startWatching(harness);
    try {
      const { automations } = harness.settings();
      // Webhooks: the trigger says which events and which deliveries concern it.
      expect(concernedAutomations(automations, 'ping', { repository: { full_name: 'acme/bells' } })).toEqual([
        'chime',
      ]);
      expect(concernedAutomations(automations, 'ping', { repository: { full_name: 'acme/api' } })).toEqual(
        [],
      );
      expect(
        concernedAutomations(automations, 'issues', { repository: { full_name: 'acme/bells' } }),
      ).toEqual([]);
      // Only an event-driven feed polls on a webhook (the echo's polled feed is one; the chime's is not).
      expect(watching.engine.pollNow(['echo', 'chime'])).toEqual(['echo']);
      // The board asks the trigger for its next fire.
      const now = new Date('2026-03-01T10:20:00Z');
      const cards = automationCards(watching.engine, now);
      expect(cards.find((c) => c.id === 'chime')?.nextFireAt).toBe('2026-03-01T11:00:00.000Z');
      expect(cards.find((c) => c.id === 'echo')?.nextFireAt).toBeNull();
      // "Run now" fires an occurrence through the feed's own `fire`.
      expect(watching.engine.trigger('chime')).toBe('fired');
      await waitFor('the chime run', () => watching.runs.some((r) => r.automationId === 'chime'), 30_000);
      const run = watching.runs.find((r) => r.automationId === 'chime')!;
      expect(run.status).toBe('succeeded');
      expect(run.scheduledFor).not.toBeNull();
      // Its untrusted note is fenced and headed by the author the trigger names.
      const prompt = harness
        .agentRuns('claude')
        .map((call) => call.prompt)
        .find((p) => p?.startsWith('Chime:'));
      expect(prompt).toContain('ring twice');
      expect(prompt).toContain('(written by @quasimodo)');
      // A retry fires the same occurrence again.
      expect(await watching.engine.retry(run.id)).toBe('fired');
      await waitFor(
        'the retried chime',
        () => watching.runs.filter((r) => r.automationId === 'chime').length === 2,
        30_000,
      );
      const again = watching.runs.filter((r) => r.automationId === 'chime')[1]!;
      expect(again.scheduledFor).toBe(run.scheduledFor);
    } finally {
      await watching.stop();
      await harness.cleanup();
      unregisterChime();
    }
  });
});
