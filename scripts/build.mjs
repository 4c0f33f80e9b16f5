// Compiles src/ to dist/ and marks the CLI entry point executable.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
// Assets the compiler does not copy: plain JavaScript helpers (the fake agent), JSON fixtures and the Linear schema excerpt.
function copyAssets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) copyAssets(path);
    else if (/\.(mjs|json|graphql)$/.test(entry.name))
      cpSync(path, join(root, 'dist', relative(join(root, 'src'), path)));
  }
}
copyAssets(join(root, 'src'));
const main = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(main)) chmodSync(main, 0o755);
