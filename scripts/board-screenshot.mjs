/**
 * Regenerates the README's screenshot of the board (docs/board.png) from what the demo shows:
 * `curupira demo --serve` (the local GitHub simulator, the scripted agent, the real engine, then
 * the board), opened in Debian's chromium through playwright-core once the demo's runs are on it.
 *
 *   npm run build && node scripts/board-screenshot.mjs [--out docs/board.png] [--width 1280]
 *
 * Needs /usr/bin/chromium (or CHROMIUM=path). Nothing leaves the machine: the demo is offline.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (flag, fallback) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : fallback;
};
const out = resolve(option('--out', join(root, 'docs', 'board.png')));
const width = Number(option('--width', '1280'));
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(chromiumPath)) {
  console.error(`no chromium at ${chromiumPath}; set CHROMIUM=path`);
  process.exit(2);
}
const main = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  console.error('no dist/: run `npm run build` first');
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'curupira-screenshot-'));
const demo = spawn(process.execPath, [main, 'demo', '--serve', '--port', '0', '--dir', join(dir, 'demo')], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, NO_COLOR: '1' },
});
let output = '';
const boardUrl = await new Promise((resolveUrl, reject) => {
  const timer = setTimeout(() => reject(new Error(`the demo printed no board URL:\n${output}`)), 300_000);
  const read = (chunk) => {
    output += chunk;
    const match = /Board: (http:\/\/\S+\?token=\S+)/.exec(output);
    if (match) {
      clearTimeout(timer);
      resolveUrl(match[1]);
    }
  };
  demo.stdout.on('data', read);
  demo.stderr.on('data', (chunk) => {
    output += chunk;
  });
  demo.on('exit', (code) => {
    clearTimeout(timer);
    reject(new Error(`the demo ended (${code}) before serving the board:\n${output}`));
  });
});

const { chromium } = await import('playwright-core');
const profile = join(dir, 'chromium');
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  viewport: { width, height: 800 },
  colorScheme: 'light',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const page = await context.newPage();
  await page.goto(boardUrl);
  // The demo's runs are on the board once its Done column has a card.
  await page.waitForSelector('[data-column="done"] .card', { timeout: 60_000 });
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
} finally {
  await context.close();
  demo.kill('SIGTERM');
  await new Promise((r) => demo.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
