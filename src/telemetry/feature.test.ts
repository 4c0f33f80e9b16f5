/** The telemetry feature's hooks on a fake kernel port: nothing loaded without an endpoint; spans of polls exported when it stops. */
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupFeatureSetups, featureSetup } from '../../test/helpers/feature-setup.js';
import { startReceiver } from '../../test/helpers/receiver.js';
import { silentLogger } from '../log.js';
import { TelemetryFeature } from './feature.js';

afterEach(cleanupFeatureSetups);

describe('the telemetry feature', () => {
  it('loads nothing without otlp_endpoint: the executor gets no telemetry, polls and stop are no-ops', async () => {
    const { settings } = await featureSetup();
    const feature = new TelemetryFeature({ settings: () => settings, env: {}, log: silentLogger() });
    await feature.start();
    expect(feature.runDeps()).toBeUndefined();
    feature.polled('fix', Date.now(), 2);
    await feature.stop();
  });

  it('with an endpoint, hands the executor its telemetry and exports a poll’s span when the engine returns', async () => {
    const receiver = await startReceiver();
    try {
      const { settings } = await featureSetup({ settings: `otlp_endpoint = "${receiver.url}"` });
      const feature = new TelemetryFeature({ settings: () => settings, env: {}, log: silentLogger() });
      await feature.start();
      await feature.start(); // a second start loads nothing more
      expect(feature.runDeps()?.telemetry).toBeDefined();
      feature.polled('fix', Date.now(), 3);
      await feature.stop();
      expect(receiver.requests.some((r) => r.path.endsWith('/v1/traces'))).toBe(true);
    } finally {
      await receiver.close();
    }
  });
});
