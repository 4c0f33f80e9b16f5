/**
 * Issue 24, item 7: Biome keeps the layers (biome.json). Imports flow downward: src/cli/ and
 * src/server/ on top, then src/engine/ (and src/fleet/), then the features and everything below;
 * `pg`, `pg-boss` and `better-sqlite3` only in src/store/ (and PostgreSQL in src/fleet/); no import
 * cycle anywhere. A copy of test/fixtures/lint/ is linted with the repository's own configuration,
 * so the rules are shown to fail on an upward import, a driver import and a cycle, and to stay quiet
 * on what is allowed; then src/ itself must have none of those errors.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/process/command.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const biome = join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
const LAYER_RULES = ['lint/style/noRestrictedImports', 'lint/suspicious/noImportCycles'];

interface Finding {
  rule: string;
  file: string;
  message: string;
}

/** Biome's errors of the layer rules in `paths`, read from its GitHub annotations (`::error title=<rule>,file=…::<message>`). */
async function lint(cwd: string, paths: string[]): Promise<Finding[]> {
  const only = LAYER_RULES.map((rule) => `--only=${rule.replace(/^lint\//, '')}`);
  const result = await runCommand(
    process.execPath,
    [biome, 'lint', '--reporter=github', '--max-diagnostics=none', ...only, ...paths],
    { cwd, timeoutMs: 60_000 },
  );
  const findings = [...result.stdout.matchAll(/^::error title=([^,]+),file=([^,]+),[^:]*::(.*)$/gm)].map(
    ([, rule, file, message]) => ({ rule: rule!, file: relative(cwd, file!), message: message! }),
  );
  if (result.exitCode !== 0 && findings.length === 0) throw new Error(`biome failed: ${result.stderr}`);
  return findings;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('layer rules', () => {
  it('fail on an upward import, a SQL driver outside the store and an import cycle; allow the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'curupira-lint-'));
    dirs.push(dir);
    cpSync(join(root, 'test', 'fixtures', 'lint', 'src'), join(dir, 'src'), { recursive: true });
    const config = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8')) as Record<string, unknown>;
    delete config.$schema;
    config.vcs = { enabled: false };
    writeFileSync(join(dir, 'biome.json'), JSON.stringify(config));

    const findings = await lint(dir, ['src']);
    expect(findings.map(({ rule, file }) => `${rule} ${file}`).sort()).toEqual([
      'lint/style/noRestrictedImports src/coordination/upward.ts',
      'lint/style/noRestrictedImports src/notify/driver.ts',
      'lint/suspicious/noImportCycles src/workspace/ping.ts',
      'lint/suspicious/noImportCycles src/workspace/pong.ts',
    ]);
    const message = (file: string) => findings.find((f) => f.file === file)?.message;
    expect(message('src/coordination/upward.ts')).toContain('import src/engine/');
    expect(message('src/notify/driver.ts')).toContain('SQL drivers live only in src/store/');
  }, 60_000);

  it('src/ has no upward import, no SQL driver outside the store and no import cycle', async () => {
    const findings = await lint(root, ['src']);
    expect(findings).toEqual([]);
  }, 60_000);
});
