import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { loadSettingsFromText } from './load.js';
import { resolveScreening } from './screening.js';

const FILE = '/work/settings.toml';
const BASE = `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.triage]
repository = "api"
repo = "acme/api"
prompt = "Triage \${issue_number}"
`;

function load(text: string) {
  return loadSettingsFromText(text, FILE);
}

function screeningOf(text: string, id = 'triage') {
  const { settings } = load(text);
  const automation = settings.automations.find((a) => a.id === id)!;
  return resolveScreening(settings.execution.screening, automation.config.screening, settings.dir);
}

describe('[settings.screening]', () => {
  it('defaults: block, a required classifier, default thresholds, COLLABORATOR', () => {
    expect(screeningOf(BASE)).toEqual({
      mode: 'block',
      required: true,
      classifier: { timeoutSeconds: 30, threshold: 0.8 },
      thresholds: { low: 'warn', medium: 'warn', high: 'block', critical: 'block' },
      trustedAuthors: [],
      minAuthorAssociation: 'COLLABORATOR',
      requireTrustedLabeler: false,
    });
  });

  it('mode = "off" makes the classifier optional unless required says otherwise', () => {
    expect(screeningOf(`[settings.screening]\nmode = "off"\n${BASE}`).required).toBe(false);
    expect(screeningOf(`[settings.screening]\nmode = "off"\nrequired = true\n${BASE}`).required).toBe(true);
  });

  it('an automation replaces keys of the file, thresholds per severity; the model folder resolves against the file', () => {
    const text = `[settings.screening]
classifier_model = "models/pg"
trusted_authors = ["alice"]
thresholds = { medium = "block" }
${BASE}[automations.triage.screening]
trusted_authors = ["@acme/core"]
thresholds = { low = "ignore" }
classifier_timeout = 5
`;
    expect(screeningOf(text)).toMatchObject({
      classifier: { modelDir: '/work/models/pg', timeoutSeconds: 5, threshold: 0.8 },
      thresholds: { low: 'ignore', medium: 'block', high: 'block', critical: 'block' },
      trustedAuthors: ['@acme/core'],
    });
  });

  it('reports unknown keys and bad values with their path', () => {
    const error = (() => {
      try {
        load(
          `[settings.screening]\nmod = "block"\nmin_author_association = "ADMIN"\ntrusted_authors = ["a b"]\n${BASE}`,
        );
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    const paths = error.issues.map((i) => i.path);
    expect(paths).toContain('settings.screening.mod');
    expect(paths).toContain('settings.screening.min_author_association');
    expect(paths).toContain('settings.screening.trusted_authors[0]');
  });

  it('warns about screening turned off, and about a screening table on a schedule', () => {
    const { warnings } = load(`[settings.screening]
mode = "off"
${BASE}[automations.nightly]
repository = "api"
schedule = "0 3 * * *"
prompt = "Tidy"
[automations.nightly.screening]
required = false
`);
    expect(warnings).toContain(
      'settings.screening.mode = "off": text written by strangers reaches agents unscreened',
    );
    expect(warnings).toContain(
      'automations.nightly.screening: this trigger carries no third-party text and is never screened; the table has no effect',
    );
  });

  it('seed-000 files (no screening keys) stay valid', () => {
    const dir = join(import.meta.dirname, '../../test/fixtures/settings');
    for (const name of [
      'seed-defaults.toml',
      'seed-minimal-issues.toml',
      'seed-minimal-pull-requests.toml',
    ]) {
      const { settings } = loadSettingsFromText(readFileSync(join(dir, name), 'utf8'), join(dir, name));
      expect(settings.execution.screening.mode, name).toBe('block');
    }
  });
});
