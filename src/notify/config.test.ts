/** `[notifications.<name>]` and `github_webhook_secret_env` in the settings file: what loads, what is refused and where. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { ConfigError } from '../core/errors.js';

const BASE = `[settings]
github_webhook_secret_env = "HOOK_SECRET"

[repositories.api]
remote = "file:///nowhere/api.git"

[automations.fix]
repository = "api"
repo = "acme/api"
prompt = "Fix"
`;

function load(extra: string) {
  return loadSettingsFromText(`${BASE}\n${extra}`, join('/tmp', 'settings.toml')).settings;
}

function problems(extra: string): string[] {
  try {
    load(extra);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('[notifications]', () => {
  it('loads targets with their events and filters; none is an empty table', () => {
    const settings = load(`[notifications.ops]
kind = "webhook"
url_env = "OPS_URL"
secret_env = "OPS_SECRET"
events = ["failed", "automation_paused"]
automations = ["fix"]
`);
    expect(settings.notifications).toEqual({
      ops: {
        kind: 'webhook',
        url_env: 'OPS_URL',
        secret_env: 'OPS_SECRET',
        events: ['failed', 'automation_paused'],
        automations: ['fix'],
      },
    });
    expect(settings.execution.github_webhook_secret_env).toBe('HOOK_SECRET');
    expect(load('').notifications).toEqual({});
  });

  it('refuses unknown events, a webhook without a secret, an unknown automation and a bad variable name', () => {
    const found = problems(`[notifications.ops]
kind = "webhook"
url_env = "OPS URL"
events = ["failed", "exploded"]
automations = ["nope"]
`);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^notifications\.ops\.events\[1\]: /),
        expect.stringMatching(/^notifications\.ops\.url_env: must be an environment variable name/),
      ]),
    );
    expect(
      problems(`[notifications.ops]
kind = "webhook"
url_env = "OPS_URL"
events = ["failed"]
`),
    ).toEqual([
      'notifications.ops.secret_env: is required for kind = "webhook" (the variable holding the signing secret)',
    ]);
    expect(
      problems(`[notifications.team]
kind = "slack"
url_env = "SLACK_URL"
events = ["failed"]
automations = ["nope"]
`),
    ).toEqual([
      "notifications.team.automations[0]: automation 'nope' for notification 'team' does not exist",
    ]);
  });
});
