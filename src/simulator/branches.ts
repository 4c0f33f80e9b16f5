/**
 * The backing bare repositories' branches, read with git: what pull requests, checks and reviews
 * compare against. Apart from pulls.ts so that checks.ts and reviews.ts need not import it.
 */
import { runCommandSync } from '../process/command-sync.js';
import type { SimRepository } from './world.js';

/** Runs git in a backing bare repository; undefined when it exits non-zero. */
export function gitIn(gitDir: string, args: string[]): string | undefined {
  return runCommandSync('git', args, {
    cwd: gitDir,
    env: {
      PATH: process.env.PATH ?? '',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LC_ALL: 'C',
    },
  });
}

/** The commit a branch of the backing repository points at. */
export function branchSha(repo: SimRepository, branch: string): string | undefined {
  if (!repo.gitDir) return undefined;
  return (
    gitIn(repo.gitDir, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]) || undefined
  );
}
