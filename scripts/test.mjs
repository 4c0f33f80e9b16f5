// The one command that checks everything: build, typecheck, lint, then every vitest test
// (the schema and docs snapshot checks are tests too). The last line is `N passed, N failed, N skipped`.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ensurePostgres } from './postgres.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const node = process.execPath;
let passed = 0;
let failed = 0;
let skipped = 0;

function step(name, args, env = {}) {
  const started = Date.now();
  console.log(`\n== ${name}`);
  const result = spawnSync(node, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const ok = result.status === 0;
  console.log(`== ${name}: ${ok ? 'ok' : `FAILED (exit ${result.status ?? result.signal})`} in ${seconds}s`);
  return ok;
}

/** Installs a Debian package with apt-get (directly as root, else through `sudo -n`). */
function aptInstall(name, pkg, consequence) {
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = asRoot ? ['apt-get'] : ['sudo', '-n', 'apt-get'];
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', pkg]]) {
    console.log(`   ${[...apt, ...args].join(' ')}`);
    const result = spawnSync(apt[0], [...apt.slice(1), ...args], { stdio: 'inherit' });
    if (result.status !== 0) {
      console.log(
        `== ${name}: could not install it (exit ${result.status ?? result.error?.message}); ${consequence}`,
      );
      return;
    }
  }
}

// The board's browser tests drive Debian's chromium (playwright-core downloads no browser).
const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.log(`\n== chromium: ${CHROMIUM} is missing; installing it for the board's browser tests:`);
  aptInstall('chromium', 'chromium', 'the browser tests will fail');
}

// The sandbox tests (test/e2e/sandbox-escape.test.ts) need Debian's bubblewrap; where user
// namespaces are off they are skipped, saying why.
const BWRAP = '/usr/bin/bwrap';
if (!existsSync(BWRAP)) {
  console.log(`\n== bubblewrap: ${BWRAP} is missing; installing it for the sandbox tests:`);
  aptInstall('bubblewrap', 'bubblewrap', 'the sandbox tests will be skipped');
}

// The PostgreSQL store and fleet tests need the machine's server: started when it is down.
ensurePostgres();

/**
 * The Prompt Guard runner's tests need onnxruntime-node, an optional dependency that an install
 * may have left out; they fail rather than skip in CI. Its CPU runtime ships in the package:
 * ONNXRUNTIME_NODE_INSTALL=skip stops its install script from fetching the GPU files.
 */
function ensureOnnxRuntime() {
  try {
    createRequire(import.meta.url).resolve('onnxruntime-node');
    return true;
  } catch {
    console.log(
      '\n== onnxruntime-node is not installed (the Prompt Guard tests need it): installing onnxruntime-node@1.30.0',
    );
  }
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['install', '--no-save', 'onnxruntime-node@1.30.0'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
  });
  return result.status === 0;
}

if (!ensureOnnxRuntime()) {
  console.log('== installing onnxruntime-node: FAILED');
  failed += 1;
}

for (const [name, args] of [
  ['build', ['scripts/build.mjs']],
  ['typecheck', ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit']],
  ['lint', ['node_modules/@biomejs/biome/bin/biome', 'check', '.']],
]) {
  if (step(name, args)) passed += 1;
  else failed += 1;
}

const report = new URL('../.test-results.json', import.meta.url);
rmSync(report, { force: true });
const extra = process.argv.slice(2);
const testsOk = step(
  'tests',
  [
    'node_modules/vitest/vitest.mjs',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${fileURLToPath(report)}`,
    ...extra,
  ],
  { CURUPIRA_BUILT: '1' },
);
if (existsSync(report)) {
  const results = JSON.parse(readFileSync(report, 'utf8'));
  passed += results.numPassedTests;
  failed += results.numFailedTests;
  // A test file that fails to load has no failed test in it, but it is a failure.
  for (const file of results.testResults) {
    if (file.status === 'failed' && file.assertionResults.length === 0) failed += 1;
  }
  // Every test passed but vitest failed: an unhandled error (an exception thrown outside a test,
  // a rejected promise nobody awaited). It is printed above, and it is a failure.
  if (!testsOk && results.numFailedTests === 0) {
    console.log(
      'vitest reported errors outside the tests (see "Unhandled Errors" above): counted as a failure',
    );
    failed += 1;
  }
  skipped = results.numPendingTests + results.numTodoTests;
  if (skipped > 0) console.log(`(${skipped} skipped; each skip says why in its test)`);
} else {
  console.log('the test run produced no report');
  failed += 1;
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
