/** What a run's branch changed: the unified diff from where it left its base, for the run page. */

import { git, revParse } from './git.js';

export interface BranchDiff {
  /** The ref the diff starts from (its merge base with the branch). */
  base: string;
  text: string;
}

/**
 * The diff of `branch` against the point where it left `baseBranch` (`origin/<base>`, else the
 * checkout's `origin/HEAD`, else its `HEAD`); undefined when the branch is not in the checkout.
 * Options come first and refs after `--end-of-options`, so no ref reads as an option.
 */
export async function branchDiff(
  checkout: string,
  branch: string,
  baseBranch: string | null,
): Promise<BranchDiff | undefined> {
  if (!(await revParse(checkout, `refs/heads/${branch}`).catch(() => null))) return undefined;
  const candidates = [
    ...(baseBranch ? [`refs/remotes/origin/${baseBranch}`, `refs/heads/${baseBranch}`] : []),
    'refs/remotes/origin/HEAD',
    'HEAD',
  ];
  for (const base of candidates) {
    if (!(await revParse(checkout, base).catch(() => null))) continue;
    const text = await git(
      [
        'diff',
        '--no-color',
        '--no-ext-diff',
        '--no-textconv',
        '-M',
        '--end-of-options',
        `${base}...refs/heads/${branch}`,
      ],
      { cwd: checkout, timeoutMs: 20_000 },
    );
    return { base: base.replace(/^refs\/(remotes|heads)\//, ''), text };
  }
  return undefined;
}
