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

describe('keys a trigger cannot honour', () => {
  const board = (extra: string) => `${MINIMAL}
[automations.cards]
trigger_type = "github-project-items"
repository = "app"
project_owner = "acme"
project_number = 5
status = "Ready"
prompt = "Do \${item_title}"
${extra}`;

  it('a github-project-items automation refuses lease_ttl, the state labels and result_comment, saying why', () => {
    expect(problems(board(''))).toEqual([]);
    const found = problems(
      board(
        'lease_ttl = "1 hour"\nstatus_label = "agent:working"\nfailed_label = "agent:failed"\nresult_comment = true',
      ),
    );
    for (const key of ['lease_ttl', 'status_label', 'failed_label', 'result_comment'])
      expect(found.find((p) => p.startsWith(`automations.cards.${key}:`))).toMatch(
        /github-project-items automation writes nothing to its cards.*github-issues or github-pull-requests automation/,
      );
    expect(problems(board('result_comment = false'))).toEqual([]);
  });
});

describe('a table that reads like another trigger', () => {
  it('a pull-request prompt without trigger_type is told it is an issue trigger and what to add', () => {
    const found = problems(`${MINIMAL}
[automations.review]
repository = "app"
repo = "acme/app"
prompt = "Review #\${pull_request_number}: \${pull_request_title}"
`);
    expect(found).toEqual([
      expect.stringMatching(
        /^automations\.review\.prompt: .*this table is an issue trigger \(it has no trigger_type\); add trigger_type = "github-pull-requests"/,
      ),
    ]);
    const byKeys = problems(`${MINIMAL}
[automations.review]
repository = "app"
repo = "acme/app"
draft = false
review = "required"
prompt = "Review"
`);
    expect(byKeys).toContain(
      `automations.review.trigger_type: this table is an issue trigger (it has no trigger_type), but 'draft', 'review' are keys of github-pull-requests: add trigger_type = "github-pull-requests"`,
    );
  });
});
