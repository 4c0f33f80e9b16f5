/**
 * The automations file: what `curupira mcp` creates or changes lives beside the settings file, in
 * `<name>.automations.toml` for `<name>.toml`, so the user's own file and its comments are never
 * rewritten. It holds only `[automations.<id>]` tables, validated exactly as the settings file's
 * (same schema, same messages), plus a few rules of its own: an id the settings file already uses is
 * refused, and an automation written there cannot weaken screening or the sandbox.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Collector } from './issues.js';
import { isTable } from './issues.js';

/** The automations file that belongs to `settingsFile` (absolute in, absolute out). */
export function automationsFileOf(settingsFile: string): string {
  const name = basename(settingsFile);
  const ext = extname(name);
  const stem = ext === '.toml' ? name.slice(0, -ext.length) : name;
  return join(dirname(settingsFile), `${stem}.automations.toml`);
}

/** The automations file's text, or undefined when there is none. */
export function readAutomationsFile(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  return readFileSync(file, 'utf8');
}

/**
 * Keys an automation in the automations file may not set: an agent that writes automations must
 * not be able to turn off what protects the runs it starts.
 */
export function checkAgentWrittenTable(id: string, table: Record<string, unknown>, out: Collector): void {
  const path = ['automations', id];
  if (table.screening !== undefined)
    out.add(
      [...path, 'screening'],
      'an automation in the automations file is screened with [settings.screening] of the settings file; it cannot set its own',
    );
  if (table.untrusted_text === 'raw')
    out.add(
      [...path, 'untrusted_text'],
      'an automation in the automations file always fences untrusted text; "raw" is only accepted in the settings file',
    );
  if (table.sandbox === 'none')
    out.add(
      [...path, 'sandbox'],
      'an automation in the automations file cannot turn the sandbox off; "none" is only accepted in the settings file',
    );
}

/** Top-level keys other than `automations` do not belong in the automations file. */
export function checkAutomationsFileKeys(raw: Record<string, unknown>, out: Collector): void {
  for (const key of Object.keys(raw)) {
    if (key === 'automations') continue;
    out.add([key], 'only [automations.<id>] tables belong in the automations file');
  }
  if (raw.automations !== undefined && !isTable(raw.automations))
    out.add(['automations'], 'expected a table of [automations.<id>] tables');
}
