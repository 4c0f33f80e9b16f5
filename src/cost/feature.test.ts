/** The cost-budget feature's hooks on a fake kernel port and an injected clock. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanupFeatureSetups,
  featureSetup,
  gateRequest,
  issueTask,
} from '../../test/helpers/feature-setup.js';
import { silentLogger } from '../log.js';
import { CostFeature } from './feature.js';

afterEach(cleanupFeatureSetups);

async function parkedSetup() {
  const setup = await featureSetup();
  await setup.store.setBudgetPark({
    scope: 'fix',
    until: '2026-12-04T00:00:00.000Z',
    reason: 'daily budget spent',
  });
  const feature = new CostFeature({
    port: setup.port,
    store: setup.store,
    log: silentLogger(),
    onBudgetReached() {},
  });
  await feature.start();
  return { ...setup, feature };
}

describe('the cost feature', () => {
  it('lets a run go while no budget parks its automation', async () => {
    const setup = await featureSetup();
    const feature = new CostFeature({
      port: setup.port,
      store: setup.store,
      log: silentLogger(),
      onBudgetReached() {},
    });
    await feature.start();
    expect(await feature.gate(gateRequest(setup.automation, issueTask(setup.automation)))).toEqual({
      kind: 'go',
    });
    expect(feature.parks('fix')).toBe(false);
    expect(feature.runDeps().budgets).toBe(feature.budgets);
  });

  it('holds a parked automation’s tasks without recording them (a new item is forgotten, a resumed one is not) and parks its feed', async () => {
    const { automation, feature } = await parkedSetup();
    const task = issueTask(automation);
    expect(await feature.gate(gateRequest(automation, task))).toEqual({ kind: 'hold', forget: true });
    expect(await feature.gate(gateRequest(automation, task, true))).toEqual({ kind: 'hold', forget: false });
    expect(feature.parks('fix')).toBe(true);
    expect(feature.holds({ automationId: 'fix', remediation: true })).toBe(true);
    expect(feature.holds({ automationId: 'fix', remediation: false })).toBe(false);
  });

  it('offers the parked automation’s saved sessions again once the UTC day changed, except a running one', async () => {
    const { store, clock, port, automation, feature } = await parkedSetup();
    for (const id of ['7', '8']) {
      const task = issueTask(automation, id);
      await store.saveSession({
        taskKey: task.key,
        automationId: 'fix',
        runId: `r-${id}`,
        provider: 'claude',
        profile: 'main',
        sessionId: `s-${id}`,
        prompt: 'Fix',
        promptTemplateHash: 'h',
        task,
        worktreePath: null,
        branch: null,
        createdAt: new Date(clock.now()).toISOString(),
        updatedAt: new Date(clock.now()).toISOString(),
      });
    }
    port.runningKeys.add(issueTask(automation, '8').key);
    await feature.beforePoll();
    expect(port.resumed).toEqual([]);
    await clock.advance(13 * 3600_000);
    await feature.beforePoll();
    expect(port.resumed.map((s) => s.taskKey)).toEqual([issueTask(automation, '7').key]);
    expect(feature.parks('fix')).toBe(false);
  });
});
