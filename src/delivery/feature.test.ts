/** The delivery feature's hooks on a fake kernel port: an open delivery holds its item back; nothing to deliver, nothing built. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanupFeatureSetups,
  featureSetup,
  finishedRun,
  gateRequest,
  ISSUE_AUTOMATION,
  issueTask,
} from '../../test/helpers/feature-setup.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import { DeliveryFeature } from './feature.js';

afterEach(cleanupFeatureSetups);

async function setup(automations = ISSUE_AUTOMATION) {
  const s = await featureSetup({ automations });
  const feature = new DeliveryFeature({
    port: s.port,
    store: s.store,
    log: silentLogger(),
    // No token source: nothing here may reach GitHub (follow-up needs tokens).
    github: () => createGitHubClient({ apiUrl: 'http://127.0.0.1:9', tokens: staticTokenSource('unused') }),
    stopSignal: new AbortController().signal,
    notify: () => undefined,
    remediate: async () => undefined,
  });
  return { ...s, feature };
}

describe('the delivery feature', () => {
  it('without `deliver`, lets every run go and gives the executor nothing to deliver with', async () => {
    const s = await setup();
    expect(s.feature.runDeps()).toBeUndefined();
    expect(await s.feature.gate(gateRequest(s.automation, issueTask(s.automation)))).toEqual({ kind: 'go' });
    await s.feature.tick();
    await s.feature.stop();
  });

  it('holds an item whose pull request is open, lets it go once the pull request merged', async () => {
    const s = await setup(ISSUE_AUTOMATION.replace('prompt = "Fix"', 'prompt = "Fix"\ndeliver = "pr"'));
    expect(s.feature.runDeps()?.delivery).toBeDefined();
    const task = issueTask(s.automation);
    const { run } = await finishedRun(s, 'succeeded', { task });
    expect(await s.feature.gate(gateRequest(s.automation, task))).toEqual({ kind: 'go' });
    await s.store.beginPullRequest({
      runId: run.id,
      automationId: 'fix',
      taskKey: task.key,
      repo: 'acme/api',
      delivery: 'pr',
      headBranch: 'curupira/fix-7',
    });
    await s.store.updatePullRequest(run.id, { state: 'open', number: 12 });
    expect(await s.feature.gate(gateRequest(s.automation, task))).toEqual({ kind: 'hold' });
    // Another item of the same automation is not held.
    expect(await s.feature.gate(gateRequest(s.automation, issueTask(s.automation, '8')))).toEqual({
      kind: 'go',
    });
    await s.store.updatePullRequest(run.id, { state: 'merged' });
    expect(await s.feature.gate(gateRequest(s.automation, task))).toEqual({ kind: 'go' });
  });
});
