/**
 * The automations file beside the settings file (what `curupira mcp` writes): read with the
 * settings file, validated by the same pipeline, its problems located in it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { automationsFileOf } from './automations-file.js';
import { loadSettings } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'curupira-automations-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MAIN = `# the user's file
[repositories.api]
remote = "https://github.com/acme/api.git"

[automations.fix]
repository = "api"
repo = "acme/api"
prompt = "Fix \${issue_number}"
`;

function write(name: string, main: string, extra?: string): string {
  const file = join(dir, `${name}.toml`);
  writeFileSync(file, main);
  if (extra !== undefined) writeFileSync(automationsFileOf(file), extra);
  return file;
}

function problems(file: string): { path: string; message: string; file?: string; line?: number }[] {
  try {
    loadSettings(file);
  } catch (error) {
    if (error instanceof ConfigError)
      return error.issues.map(({ path, message, file, line }) => ({ path, message, file, line }));
    throw error;
  }
  throw new Error('expected the settings to be rejected');
}

describe('the automations file', () => {
  it('is named after the settings file, beside it', () => {
    expect(automationsFileOf('/etc/curupira/settings.toml')).toBe('/etc/curupira/settings.automations.toml');
    expect(automationsFileOf('/x/conf')).toBe('/x/conf.automations.toml');
  });

  it('adds its automations after the settings file’s, marked as written there; a chain may follow across files', () => {
    const file = write(
      'joined',
      MAIN,
      `[automations.review]\ntrigger_type = "after"\nafter = "fix"\nrepository = "api"\nprompt = "Review \${upstream_item}"\n\n[automations.triage]\nrepository = "api"\nrepo = "acme/api"\nlabels = ["triage"]\nprompt = "Triage \${issue_number}"\n`,
    );
    const { settings } = loadSettings(file);
    expect(settings.automations.map((a) => [a.id, a.automationsFile ?? null])).toEqual([
      ['fix', null],
      ['review', automationsFileOf(file)],
      ['triage', automationsFileOf(file)],
    ]);
    expect(settings.automationsFile).toBe(automationsFileOf(file));
  });

  it('locates its problems in itself, with the messages the settings file would get', () => {
    const file = write(
      'broken',
      MAIN,
      `\n[automations.triage]\nrepository = "nowhere"\nrepo = "acme/api"\nprompt = "Triage"\n`,
    );
    expect(problems(file)).toEqual([
      {
        path: 'automations.triage.repository',
        message: "repository 'nowhere' for automation 'triage' does not exist",
        file: automationsFileOf(file),
        line: 3,
      },
    ]);
  });

  it('refuses an id of the settings file, other tables, and a loop through both files', () => {
    const file = write(
      'clash',
      `${MAIN}\n[automations.check]\ntrigger_type = "after"\nafter = "again"\nrepository = "api"\nprompt = "x"\n`,
      `[settings]\nmax_active_tasks = 9\n\n[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "Mine"\n\n[automations.again]\ntrigger_type = "after"\nafter = "check"\nrepository = "api"\nprompt = "y"\n`,
    );
    const found = problems(file);
    expect(found.map(({ path, message }) => `${path}: ${message}`)).toEqual([
      'automations.check.after: chained automations loop: check → again → check',
      'settings: only [automations.<id>] tables belong in the automations file',
      "automations.fix: automation 'fix' is already defined in the settings file; choose another id",
    ]);
    expect(found.map((p) => p.file)).toEqual([file, automationsFileOf(file), automationsFileOf(file)]);
  });

  it('cannot turn off screening, fencing or the sandbox', () => {
    const file = write(
      'weak',
      MAIN,
      `[automations.loose]\nrepository = "api"\nrepo = "acme/api"\nprompt = "x \${issue_body}"\nuntrusted_text = "raw"\nsandbox = "none"\n[automations.loose.screening]\nmode = "off"\n`,
    );
    expect(problems(file).map((p) => p.path)).toEqual([
      'automations.loose.untrusted_text',
      'automations.loose.sandbox',
      'automations.loose.screening',
    ]);
  });
});
