/** The notifications feature's hooks on a fake kernel port: what is news is queued durably, and sent when the engine returns. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanupFeatureSetups,
  featureSetup,
  finishedRun,
  ISSUE_AUTOMATION,
} from '../../test/helpers/feature-setup.js';
import { startReceiver } from '../../test/helpers/receiver.js';
import { silentLogger } from '../log.js';
import { NotifyFeature } from './feature.js';

afterEach(cleanupFeatureSetups);

const OPS = `
[notifications.ops]
kind = "webhook"
url_env = "NOTIFY_URL"
secret_env = "NOTIFY_SECRET"
events = ["failed", "escalated", "automation_paused"]
`;

async function setup(url: string) {
  const s = await featureSetup({ automations: `${ISSUE_AUTOMATION}${OPS}` });
  const feature = new NotifyFeature({
    settings: s.settings,
    env: { NOTIFY_URL: url, NOTIFY_SECRET: 'a-signing-secret' },
    store: s.store,
    clock: s.clock,
    log: silentLogger(),
  });
  return { ...s, feature };
}

describe('the notifications feature', () => {
  it('queues a failed run and a pause, not a success, and sends them when the engine returns', async () => {
    const receiver = await startReceiver();
    try {
      const s = await setup(receiver.url);
      await s.feature.started();
      await s.feature.afterRun(await finishedRun(s, 'succeeded'));
      const failed = await finishedRun(s, 'failed');
      await s.feature.afterRun(failed);
      s.feature.paused('fix', 'pause_after_failures');
      await s.feature.stop();
      const queued = await s.store.listNotifications();
      expect(queued.map((n) => n.event).sort()).toEqual(['automation_paused', 'failed']);
      expect(queued.find((n) => n.event === 'failed')?.eventId).toBe(`run:${failed.run.id}:failed`);
      expect(queued.every((n) => n.status === 'sent')).toBe(true);
      expect(receiver.accepted()).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it('without [notifications], queues nothing', async () => {
    const s = await featureSetup();
    const feature = new NotifyFeature({
      settings: s.settings,
      env: {},
      store: s.store,
      clock: s.clock,
      log: silentLogger(),
    });
    await feature.afterRun(await finishedRun(s, 'failed'));
    feature.paused('fix', undefined);
    await feature.stop();
    expect(await s.store.listNotifications()).toEqual([]);
  });
});
