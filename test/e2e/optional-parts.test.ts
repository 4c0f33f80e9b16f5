/**
 * Issue 31, item 4: an install without the optional dependencies (`npm install -g curupira
 * --omit=optional`) runs the core path, and each part that needs an optional package stops with a
 * message that names the package and how to install it. The install is stood in for by a folder
 * holding the built dist/, package.json and a node_modules of links to every package the checkout
 * has except the optional dependencies package.json names (so no registry is needed).
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, ROOT, runBuiltCli } from '../helpers/harness.js';

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  optionalDependencies?: Record<string, string>;
};
const OPTIONAL = new Set(Object.keys(manifest.optionalDependencies ?? {}));

let install: string;
let cli: string;
let h: Harness | undefined;

beforeAll(() => {
  install = mkdtempSync(join(tmpdir(), 'curupira-no-optional-'));
  // Node.js looks for a package in every parent's node_modules too: one holding an optional
  // package above the stand-in install would be found, and these tests would fail for no fault
  // of curupira's. Say so instead.
  for (let folder = dirname(install); ; folder = dirname(folder)) {
    const found = [...OPTIONAL].filter((name) => existsSync(join(folder, 'node_modules', name)));
    if (found.length > 0)
      throw new Error(
        `${join(folder, 'node_modules')} holds ${found.join(', ')}, which the stand-in install under it would load; remove it or point TMPDIR elsewhere`,
      );
    if (dirname(folder) === folder) break;
  }
  cpSync(join(ROOT, 'dist'), join(install, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(install, 'package.json'));
  const modules = join(ROOT, 'node_modules');
  const link = (name: string) => {
    if (OPTIONAL.has(name)) return;
    symlinkSync(join(modules, name), join(install, 'node_modules', name));
  };
  mkdirSync(join(install, 'node_modules'));
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    if (!entry.startsWith('@')) {
      link(entry);
      continue;
    }
    mkdirSync(join(install, 'node_modules', entry));
    for (const name of readdirSync(join(modules, entry))) link(`${entry}/${name}`);
  }
  cli = join(install, 'dist', 'cli', 'main.js');
});

afterAll(async () => {
  await h?.cleanup();
  rmSync(install, { recursive: true, force: true });
});

/** The stand-in install's CLI (`runBuiltCli` runs the checkout's). */
function runInstalled(args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 60_000) {
  return runBuiltCli(args, { env, cwd: install, cli, timeoutMs });
}

describe('an install without the optional dependencies', () => {
  it('leaves out OpenTelemetry, the simulator’s GraphQL packages and the classifier runtime', () => {
    for (const name of [
      '@opentelemetry/api',
      '@opentelemetry/exporter-trace-otlp-http',
      '@opentelemetry/sdk-trace',
      'graphql',
      '@octokit/graphql-schema',
      'onnxruntime-node',
    ]) {
      expect(OPTIONAL.has(name), `${name} is optional`).toBe(true);
      expect(existsSync(join(install, 'node_modules', name)), `${name} is left out`).toBe(false);
    }
  });

  it('runs: help lists every command, and a drain runs an item', async () => {
    const help = await runInstalled(['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/\n {2}simulator\b/);
    expect(help.stdout).toMatch(/\n {2}demo\b/);
    h = await createHarness();
    const run = await runInstalled(['--config', h.settingsFile, 'run'], h.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^1 run: 1 succeeded\n/);
  }, 60_000);

  it('says what otlp_endpoint needs and how to install it, and runs nothing', async () => {
    h ??= await createHarness();
    h.configure({ settingsExtra: 'otlp_endpoint = "http://127.0.0.1:9/"' });
    const before = h.agentRuns('claude').length;
    const run = await runInstalled(['--config', h.settingsFile, 'run'], h.env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /OpenTelemetry export \(otlp_endpoint\) needs @opentelemetry\/[a-z-]+, an optional dependency this install left out \(--omit=optional\)\. Install curupira with its optional dependencies: `npm install -g curupira`/,
    );
    expect(h.agentRuns('claude')).toHaveLength(before);
  }, 60_000);

  it('says what `simulator` and `demo` need, and demo makes no folder', async () => {
    const simulator = await runInstalled(['simulator', '--port', '0'], { ...process.env }, 30_000);
    expect(simulator.code).not.toBe(0);
    expect(simulator.stderr).toMatch(
      /The GitHub simulator \(curupira simulator\) needs graphql, an optional dependency this install left out \(--omit=optional\)\. Install curupira with its optional dependencies/,
    );
    const folder = join(install, 'demo-here');
    const demo = await runInstalled(['demo', '--dir', folder]);
    expect(demo.code).not.toBe(0);
    expect(demo.stderr).toMatch(
      /curupira demo \(its GitHub simulator\) needs graphql, an optional dependency/,
    );
    expect(existsSync(folder)).toBe(false);
  }, 60_000);
});
