import { describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { ConfigError } from '../core/errors.js';
import { durationSetting, MIN_LEASE_TTL, parseDuration } from './duration.js';

const H = 3_600_000;

describe('parseDuration', () => {
  it.each([
    ['1 hour', H],
    ['3 hours', 3 * H],
    ['30m', 30 * 60_000],
    ['2d', 48 * H],
    ['1 week', 168 * H],
    ['90 s', 90_000],
    ['1h30m', 1.5 * H],
    ['1 hour 30 minutes', 1.5 * H],
    ['PT1H', H],
    ['PT30M', 30 * 60_000],
    ['P2D', 48 * H],
    ['P1DT12H', 36 * H],
    ['pt1h', H],
  ])('%s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'soon', '1', '1 fortnight', 'P', 'PT', 'PT0S', '0m', '-1h', '1h later'])(
    'rejects %j',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );

  it('a settings value names what it expects, and the minimum', () => {
    const schema = durationSetting(MIN_LEASE_TTL);
    expect(schema.safeParse('1 hour').success).toBe(true);
    expect(schema.safeParse('an hour').error?.issues[0]?.message).toBe(
      `'an hour' is not a duration: write e.g. "1 hour", "3 hours", "30m", "2d" or ISO 8601 "PT1H"`,
    );
    expect(schema.safeParse('5s').error?.issues[0]?.message).toBe(
      "'5s' is shorter than the minimum of 10 seconds",
    );
  });
});

describe('lease settings in a settings file', () => {
  const file = (extra: string, automationExtra: string) => `
[settings]
${extra}

[repositories.app]
remote = "https://example.com/app.git"

[automations.fix]
trigger_type = "github-issues"
repository = "app"
repo = "acme/app"
prompt = "Fix"
${automationExtra}
`;
  function load(text: string): string {
    try {
      const { settings } = loadSettingsFromText(text, '/tmp/curupira-lease/settings.toml');
      return JSON.stringify([
        settings.execution.lease_ttl,
        settings.execution.runner_id,
        settings.automations[0]?.config.lease_ttl,
      ]);
    } catch (error) {
      if (error instanceof ConfigError) return error.message;
      throw error;
    }
  }

  it('reads a settings-wide TTL, a runner id and a per-automation TTL', () => {
    expect(load(file('lease_ttl = "3 hours"\nrunner_id = "build-1"', 'lease_ttl = "PT30M"'))).toBe(
      '["3 hours","build-1","PT30M"]',
    );
    expect(load(file('', ''))).toBe('[null,null,null]');
  });

  it('a bad duration or runner id is an error naming the key and its line', () => {
    const message = load(file('runner_id = "my host"', 'lease_ttl = "an hour"'));
    expect(message).toContain('settings.runner_id');
    expect(message).toContain('automations.fix.lease_ttl');
    expect(message).toContain(`'an hour' is not a duration`);
    expect(message).toContain('settings.toml:13:1');
  });
});
