import { parse, stringify } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { loadSettingsFromText } from './load.js';
import { SettingsFile, SettingsTable } from './schema.js';

const MINIMAL = `
[repositories.app]
remote = "https://example.com/app.git"

[automations.fix]
repository = "app"
repo = "acme/app"
prompt = "Fix #\${task_number}"
`;

function problems(text: string): string[] {
  try {
    loadSettingsFromText(text, '/tmp/curupira-tables/settings.toml');
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  return [];
}

describe('the loader follows SettingsFile', () => {
  it('validates every top-level table the schema declares (none is accepted unread)', () => {
    expect(problems(MINIMAL)).toEqual([]);
    for (const key of Object.keys(SettingsFile.shape)) {
      const doc = { ...parse(MINIMAL), [key]: 7 };
      const found = problems(stringify(doc));
      expect(found, key).toContain(
        `${key}: expected a table, got an integer${key === 'settings' || key === 'assistant' ? ' (7)' : ''}`,
      );
    }
  });

  it('validates every sub-table of [settings] the schema declares, and its defaults reach the settings', () => {
    const { settings } = loadSettingsFromText(MINIMAL, '/tmp/curupira-tables/settings.toml');
    for (const [key, value] of Object.entries(SettingsTable.parse({}))) {
      if (key === 'workspace_dir' || key === 'state_db_path') continue; // made absolute
      expect(settings.execution[key as keyof typeof settings.execution]).toEqual(value);
      if (value !== null && typeof value === 'object') {
        const found = problems(`[settings.${key}]\nnot_a_key = 1\n${MINIMAL}`);
        expect(found).toEqual([`settings.${key}.not_a_key: unknown key`]);
      }
    }
  });
});
