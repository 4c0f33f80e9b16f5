/**
 * Reading and rewriting the automations file `curupira mcp` owns (config/automations-file.ts says
 * what it is). Every change is validated with the settings file first, by the same pipeline as
 * `curupira validate`; only a valid result is written, whole, by a rename (a reader never sees half
 * a file). The user's settings file is only ever read.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { automationsFileOf, readAutomationsFile } from '../config/automations-file.js';
import { isTable } from '../config/issues.js';
import { loadSettingsFromText } from '../config/load.js';
import type { LoadedSettings } from '../config/types.js';
import { ConfigError, type ConfigIssue } from '../core/errors.js';

export type Tables = Record<string, Record<string, unknown>>;

/** The automations file's tables as written (empty when there is no file). */
export function readAgentTables(settingsFile: string): Tables {
  const file = automationsFileOf(settingsFile);
  const text = readAutomationsFile(file);
  if (text === undefined) return {};
  let raw: Record<string, unknown>;
  try {
    raw = parseToml(text) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError([{ path: '', message: `invalid TOML: ${String(error).split('\n')[0]}`, file }]);
  }
  const tables: Tables = {};
  if (isTable(raw.automations))
    for (const [id, table] of Object.entries(raw.automations)) if (isTable(table)) tables[id] = table;
  return tables;
}

/** The text of an automations file holding `tables`. */
export function renderAgentTables(settingsFile: string, tables: Tables): string {
  const header = [
    `# Automations created or changed through \`curupira mcp\`, beside ${basename(settingsFile)}.`,
    '# Validated exactly as the settings file is, and rewritten whole on every change: comments here',
    '# are not kept (write your own automations in the settings file).',
    '',
  ].join('\n');
  return Object.keys(tables).length === 0 ? header : `${header}\n${stringifyToml({ automations: tables })}`;
}

export type Verdict =
  | { valid: true; loaded: LoadedSettings; text: string }
  | { valid: false; problems: readonly ConfigIssue[] };

/** The settings as they would be with `tables` in the automations file: loaded, or every problem. */
export function judge(settingsFile: string, tables: Tables): Verdict {
  const text = renderAgentTables(settingsFile, tables);
  try {
    const main = readFileSync(settingsFile, 'utf8');
    const loaded = loadSettingsFromText(main, settingsFile, { text, file: automationsFileOf(settingsFile) });
    return { valid: true, loaded, text };
  } catch (error) {
    if (error instanceof ConfigError) return { valid: false, problems: error.issues };
    throw error;
  }
}

/** Writes the automations file whole, through a temporary file and a rename. */
export function writeAgentFile(settingsFile: string, text: string): void {
  const file = automationsFileOf(settingsFile);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o644 });
  renameSync(temporary, file);
}
