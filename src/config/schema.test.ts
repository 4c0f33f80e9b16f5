import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigurationReference } from './docs.js';
import { settingsJsonSchema } from './schema.js';

const root = join(import.meta.dirname, '../..');

describe('generated schema and reference', () => {
  it('schema/settings.schema.json matches the schema that validates (run `npm run generate` after a schema change)', () => {
    const committed = readFileSync(join(root, 'schema/settings.schema.json'), 'utf8');
    expect(committed).toBe(`${JSON.stringify(settingsJsonSchema(), null, 2)}\n`);
  });

  it('docs/configuration.md matches the schema (run `npm run generate` after a schema change)', () => {
    const committed = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
    expect(committed).toBe(renderConfigurationReference(settingsJsonSchema()));
  });

  it('describes every key and carries the defaults', () => {
    const schema = settingsJsonSchema() as {
      properties: Record<
        string,
        { properties?: Record<string, { default?: unknown; description?: string }> }
      >;
    };
    const settings = schema.properties.settings!.properties!;
    expect(settings.max_active_tasks!.default).toBe(1);
    expect(settings.task_timeout_minutes!.default).toBe(20);
    for (const [key, value] of Object.entries(settings)) expect(value.description, key).toBeTruthy();
    const doc = renderConfigurationReference(settingsJsonSchema());
    for (const section of [
      '[settings.polling]',
      '[repositories.<alias>]',
      'provider = "codex"',
      'trigger_type = `plugins-py/github-project-items`',
      '`cron`',
    ]) {
      expect(doc).toContain(section);
    }
  });
});
