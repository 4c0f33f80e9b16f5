/**
 * Issue 33, defect 3: when the store does not take a run's start (the agent's session, its
 * "running" record) because the database went away at that moment, the agent must not go on
 * running unseen: it is stopped at once, its run recorded as cancelled with the reason, so the
 * item is not run a second time from scratch next to work nobody can see.
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { StateError } from '../../src/core/errors.js';
import { runEngine } from '../../src/features.js';
import type { Store } from '../../src/store/types.js';
import { createHarness, fakeProcessAlive, type Harness, issueAutomation } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** The store, except that saving an agent session fails as an unreachable database does. */
function sessionsRefused(store: Store): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'saveSession')
        return async () => {
          throw new StateError(
            'PostgreSQL state database cannot be reached (Connection terminated unexpectedly)',
          );
        };
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

it('an agent whose session could not be saved is stopped at once, its run cancelled with the reason', async () => {
  h = await createHarness({
    issues: [{ title: 'Long [[fake:sleep=20]]' }],
    automation: issueAutomation('fix', { prompt: 'Fix #${issue_number}: ${issue_title}' }),
  });
  const store = await h.openStore();
  const started = Date.now();
  try {
    await runEngine(h.engineOptions(sessionsRefused(store)));
  } finally {
    await store.close();
  }
  const elapsed = Date.now() - started;
  const check = await h.openStore();
  try {
    const runs = await check.listRuns({ limit: 10 });
    expect(runs.map((r) => r.status)).toEqual(['cancelled']);
    expect(runs[0]!.reason).toMatch(
      /^the run's start could not be recorded \(.*cannot be reached.*\), so the agent was stopped/,
    );
  } finally {
    await check.close();
  }
  const calls = h.agentRuns('claude');
  expect(calls).toHaveLength(1);
  expect(fakeProcessAlive(calls[0]!.pid, join(h!.binDir, 'fake-agent.mjs'))).toBe(false);
  // Stopped at once, not after its 20 s of work.
  expect(elapsed).toBeLessThan(15_000);
}, 60_000);
