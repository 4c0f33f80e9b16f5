/**
 * Issue 24, item 6: the two store backends share what is the same through src/store/ itself, never
 * each other's files, and whatever reads the state uses the `Store` interface, not a schema file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** `file imports target` for each relative import of the files under src/ that `matches`. */
function imports(matches: (file: string, target: string) => boolean): string[] {
  return sources(src).flatMap((path) => {
    const file = relative(src, path);
    const targets = [...readFileSync(path, 'utf8').matchAll(/from '(\.[^']+)'/g)].map(([, spec]) =>
      relative(src, join(path, '..', spec!)),
    );
    return targets.filter((target) => matches(file, target)).map((target) => `${file} imports ${target}`);
  });
}

describe('store boundaries', () => {
  it('no backend imports the other backend’s files', () => {
    expect(
      imports(
        (file, target) =>
          (file.startsWith('store/sqlite/') && target.startsWith('store/postgres/')) ||
          (file.startsWith('store/postgres/') && target.startsWith('store/sqlite/')),
      ),
    ).toEqual([]);
  });

  it('nothing outside a backend reads its schema file', () => {
    expect(
      imports(
        (file, target) =>
          /^store\/(sqlite|postgres)\/schema\.js$/.test(target) &&
          !file.startsWith(target.split('/').slice(0, 2).join('/')),
      ),
    ).toEqual([]);
  });
});
