/** The screening feature's hooks on a fake kernel port: what needs no screen goes, an allowed item is offered again. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanupFeatureSetups,
  featureSetup,
  finishedRun,
  gateRequest,
  ISSUE_AUTOMATION,
  issueTask,
} from '../../test/helpers/feature-setup.js';
import { taskFromItem } from '../engine/task.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import { cronItem } from '../triggers/cron/item.js';
import { ScreeningFeature } from './feature.js';

afterEach(cleanupFeatureSetups);

const NIGHTLY = `[automations.nightly]
repository = "api"
schedule = "0 2 * * *"
prompt = "Tidy up"
`;

async function setup(automations = ISSUE_AUTOMATION) {
  const s = await featureSetup({ automations, settings: '[settings.screening]\nrequired = true' });
  let reads = 0;
  const feature = new ScreeningFeature({
    port: s.port,
    store: s.store,
    log: silentLogger(),
    github: () => {
      reads += 1;
      return createGitHubClient({ apiUrl: 'http://127.0.0.1:9', tokens: staticTokenSource('unused') });
    },
    writes: () => undefined,
    classifierFactory: () => null,
  });
  return { ...s, feature, reads: () => reads };
}

describe('the screening feature', () => {
  it('lets a resumed session go unscreened (it was screened when it started), reading nothing', async () => {
    const s = await setup();
    expect(await s.feature.gate(gateRequest(s.automation, issueTask(s.automation), true))).toEqual({
      kind: 'go',
    });
    expect(s.reads()).toBe(0);
  });

  it('lets a schedule’s task go unscreened: its trigger carries no third-party text', async () => {
    const s = await setup(NIGHTLY);
    const automation = s.settings.automations[0]!;
    if (automation.triggerType !== 'cron') throw new Error('expected a schedule');
    const task = taskFromItem(automation, cronItem(automation, new Date(s.clock.now()), false));
    const verdict = await s.feature.gate(gateRequest(automation, task));
    expect(verdict.kind).toBe('go');
    expect(s.reads()).toBe(0);
  });

  it('offers an item allowed since it was blocked again, polling at once', async () => {
    const s = await setup();
    await s.feature.beforePoll();
    expect(s.port.forgets).toEqual([]);
    const { run, task } = await finishedRun(s, 'blocked', { patch: { screenedDigest: 'digest-1' } });
    await s.store.addAllowance(run.id, 'octocat');
    await s.feature.beforePoll();
    expect(s.port.forgets).toEqual([{ taskKey: task.key, options: { pollNow: true } }]);
  });
});
