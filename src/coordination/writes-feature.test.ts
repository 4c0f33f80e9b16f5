/** The GitHub-writes feature's hooks on a fake kernel port, against the local GitHub simulator. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanupFeatureSetups,
  featureSetup,
  finishedRun,
  ISSUE_AUTOMATION,
  issueTask,
  SIM_TOKEN,
  simulatorWithIssue,
} from '../../test/helpers/feature-setup.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import type { WriteQueueTiming } from '../github/write-queue.js';
import { silentLogger } from '../log.js';
import type { Simulator } from '../simulator/index.js';
import { Escalation } from './escalation.js';
import { resultMarker } from './run-writes.js';
import { WritesFeature } from './writes-feature.js';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
  await cleanupFeatureSetups();
});

async function setup(automations = ISSUE_AUTOMATION, timing?: WriteQueueTiming) {
  sim = await simulatorWithIssue();
  const s = await featureSetup({ automations });
  const tokens = staticTokenSource(SIM_TOKEN);
  const github = () => createGitHubClient({ apiUrl: sim!.url, tokens, clock: s.clock });
  const feature = new WritesFeature({
    port: s.port,
    store: s.store,
    log: silentLogger(),
    github,
    tokens,
    stopSignal: new AbortController().signal,
    escalation: () =>
      new Escalation({ store: s.store, settings: () => s.settings, github, log: silentLogger() }),
    leases: () => undefined,
    ...(timing ? { timing } : {}),
  });
  return { ...s, feature };
}

describe('the GitHub-writes feature', () => {
  it('builds no write queue when no automation opted in: nothing is queued or sent', async () => {
    const s = await setup();
    expect(s.feature.writes()).toBeUndefined();
    expect(s.feature.runDeps()).toBeUndefined();
    await s.feature.afterRun({ ...(await finishedRun(s, 'failed')), renoted: true });
    await s.feature.tick();
    await s.feature.stop();
    expect(await s.store.listWrites()).toEqual([]);
    expect(sim!.requests).toEqual([]);
  });

  it('with result_comment, hands the executor the queue; a run renoted after it ended has its result comment written again', async () => {
    const s = await setup(
      ISSUE_AUTOMATION.replace('prompt = "Fix"', 'prompt = "Fix"\nresult_comment = true'),
    );
    expect(s.feature.runDeps()?.writes).toBe(s.feature.writes());
    const outcome = await finishedRun(s, 'cancelled', {
      task: issueTask(s.automation, '1'),
      patch: { reason: 'cancelled by an operator' },
    });
    await s.feature.afterRun(outcome);
    expect(await s.store.listWrites({ runId: outcome.run.id })).toEqual([]);
    await s.feature.afterRun({ ...outcome, renoted: true });
    await s.feature.stop();
    const writes = await s.store.listWrites({ runId: outcome.run.id });
    expect(writes.map((w) => [w.marker, w.status, w.lastError])).toEqual([
      [resultMarker(outcome.run.id), 'sent', null],
    ]);
    // The result comment (posted, or edited when the run's end already posted one) says the new reason.
    const comments = sim!.world.issue('acme/api', 1)?.comments ?? [];
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('Reason: `cancelled by an operator`');
    expect(comments[0]!.body).toContain(`<!-- curupira:result run=${outcome.run.id} -->`);
  });

  it('gives its write queue the engine’s timing (writeQueue): a failed write is retried after the backoff asked for', async () => {
    const s = await setup(
      ISSUE_AUTOMATION.replace('prompt = "Fix"', 'prompt = "Fix"\nresult_comment = true'),
      { paceMs: 0, backoffMs: [100] },
    );
    const outcome = await finishedRun(s, 'cancelled', {
      task: issueTask(s.automation, '1'),
      patch: { reason: 'cancelled by an operator' },
    });
    // The first attempt fails after GitHub applied it: the retry is due after the backoff asked for
    // (the default is 2 s).
    sim!.setWriteFaults({ fraction: 1, applied: true, status: 502 });
    await s.feature.afterRun({ ...outcome, renoted: true });
    await s.feature.writes()!.drain();
    const [failed] = await s.store.listWrites({ runId: outcome.run.id });
    expect(failed?.attempts).toBe(1);
    expect(Date.parse(failed!.nextAttemptAt!) - s.clock.now()).toBe(100);
    // The retry, when due, sends it: one comment.
    sim!.setWriteFaults(null);
    s.clock.advance(100);
    await s.feature.stop();
    const writes = await s.store.listWrites({ runId: outcome.run.id });
    expect(writes.map((w) => [w.status, w.attempts])).toEqual([['sent', 2]]);
    expect(sim!.world.issue('acme/api', 1)?.comments).toHaveLength(1);
  });
});
