/**
 * A new trigger is one folder and one registry line: nothing outside `src/triggers/` may decide
 * by a trigger's type name. This scans src/ (tests aside) for a built-in type name written as a
 * string, or as a type argument (`AutomationFor<'cron'>`), outside `src/triggers/`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_TRIGGERS } from '../src/triggers/registry.js';

const ROOT = join(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === join(SRC, 'triggers') ? [] : sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * Lines that may spell a name for another reason: settings text shown to people or written for
 * them (a TOML line, a step preset's settings key), commander's help position.
 */
const ALLOWED = [/trigger_type\s*[=:]/, /\.addHelpText\('after'/];

describe('trigger type names', () => {
  it('no file of src/ outside src/triggers/ spells a trigger type', () => {
    const names = Object.keys(BUILT_IN_TRIGGERS).map((name) => name.replace(/[-]/g, '\\-'));
    const spelled = new RegExp(`(['"])(${names.join('|')})\\1`);
    const offenders = sourceFiles(SRC).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          spelled.test(line) && !/^\s*(\/\/|\*|\/\*)/.test(line) && !ALLOWED.some((a) => a.test(line))
            ? [`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(offenders).toEqual([]);
  });
});
