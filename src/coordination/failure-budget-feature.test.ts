/** The failure-budget feature's hooks on a fake kernel port: counting, escalating, holding, noticing a reset. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanupFeatureSetups,
  featureSetup,
  finishedRun,
  gateRequest,
  issueTask,
} from '../../test/helpers/feature-setup.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import { FailureBudgetFeature } from './failure-budget-feature.js';

afterEach(cleanupFeatureSetups);

async function setup() {
  const s = await featureSetup({ settings: 'max_item_failures = 2' });
  const feature = new FailureBudgetFeature({
    port: s.port,
    store: s.store,
    log: silentLogger(),
    // Without GitHub writes, escalation reads nothing on GitHub: this client is never called.
    github: () => createGitHubClient({ apiUrl: 'http://127.0.0.1:9', tokens: staticTokenSource('unused') }),
    writing: () => false,
  });
  return { ...s, feature };
}

describe('the failure-budget feature', () => {
  it('counts failed runs (a stalled one too); the run that reaches the limit says so', async () => {
    const s = await setup();
    const first = await s.feature.runEnded(await finishedRun(s, 'failed'));
    expect(first.reason ?? '').not.toContain('escalated');
    const second = await s.feature.runEnded(await finishedRun(s, 'stalled'));
    expect(second.reason).toContain('escalated: failed 2 times (max_item_failures = 2)');
    expect((await s.store.getItemFailures(issueTask(s.automation).key))?.failures).toBe(2);
  });

  it('records one escalated run at the next gate, then holds the item without recording more', async () => {
    const s = await setup();
    const task = issueTask(s.automation);
    expect(await s.feature.gate(gateRequest(s.automation, task))).toEqual({ kind: 'go' });
    for (const status of ['failed', 'timed_out'] as const)
      await s.feature.runEnded(await finishedRun(s, status));
    const verdict = await s.feature.gate(gateRequest(s.automation, task));
    expect(verdict.kind).toBe('record');
    expect(verdict.kind === 'record' && verdict.run.status).toBe('escalated');
    expect(await s.feature.gate(gateRequest(s.automation, task))).toEqual({ kind: 'hold' });
    expect((await s.store.listRuns({ status: ['escalated'] })).length).toBe(1);
  });

  it('a success forgets the failures; a reset item held in watch mode is polled again', async () => {
    const s = await setup();
    const task = issueTask(s.automation);
    await s.feature.runEnded(await finishedRun(s, 'failed'));
    await s.feature.runEnded(await finishedRun(s, 'succeeded'));
    expect((await s.store.getItemFailures(task.key))?.failures ?? 0).toBe(0);
    for (let i = 0; i < 2; i += 1) await s.feature.runEnded(await finishedRun(s, 'failed'));
    await s.feature.gate(gateRequest(s.automation, task));
    await s.feature.beforePoll();
    expect(s.port.forgets).toEqual([]);
    await s.store.clearItemFailures(task.key);
    await s.feature.beforePoll();
    expect(s.port.forgets).toEqual([{ taskKey: task.key, options: { automationId: 'fix', pollNow: true } }]);
  });
});
