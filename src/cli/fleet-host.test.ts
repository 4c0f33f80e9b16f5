import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { fleetHostName } from './fleet.js';

const BASE = `[settings]
state_db_url = "postgres://curupira@db.internal:5432/curupira"
[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.fix]
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix \${issue_number}"
`;

function settings(extra = '') {
  return loadSettingsFromText(`${BASE}${extra}`, '/tmp/curupira-fleet-host/settings.toml').settings;
}

describe("a fleet process's host name", () => {
  it('CURUPIRA_FLEET_HOST names it over the settings file, so processes sharing one file differ', () => {
    const shared = settings('[settings.fleet]\nhost = "build-1"\n');
    expect(fleetHostName(shared)).toBe('build-1');
    expect(fleetHostName(shared, { CURUPIRA_FLEET_HOST: 'build-1-worker-2' })).toBe('build-1-worker-2');
    expect(fleetHostName(shared, { CURUPIRA_FLEET_HOST: '  ' })).toBe('build-1');
    expect(fleetHostName(settings())).toBe(
      hostname()
        .replace(/[^A-Za-z0-9._-]/g, '-')
        .replace(/^[^A-Za-z0-9]+/, '')
        .slice(0, 63) || 'host',
    );
  });

  it('refuses a name the fleet could not use, saying what a name may hold', () => {
    expect(() => fleetHostName(settings(), { CURUPIRA_FLEET_HOST: 'worker 2' })).toThrow(
      "CURUPIRA_FLEET_HOST must be 1-63 letters, digits, `.`, `_` or `-`, got 'worker 2'",
    );
  });
});
