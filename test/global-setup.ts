import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** End-to-end tests run the built CLI; build it once unless `npm test` already did. */
export default function setup(): void {
  if (process.env.CURUPIRA_BUILT === '1') return;
  const root = fileURLToPath(new URL('..', import.meta.url));
  const result = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('build failed; see the compiler output above');
  // Each of vitest.config.ts's projects runs this setup (in this one process): build once.
  process.env.CURUPIRA_BUILT = '1';
}
