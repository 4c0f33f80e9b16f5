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

const SHA = /^[0-9a-f]{7,64}$/;

/**
 * The diff from commit `base` (where the run's worktree was cut) to commit `head` (what it
 * pushed), when the checkout still has both: a delivered run's branch is deleted locally once
 * pushed, its commits stay. Undefined when either is missing or is not a commit id.
 */
export async function commitDiff(
  checkout: string,
  base: string,
  head: string,
): Promise<BranchDiff | undefined> {
  if (!SHA.test(base) || !SHA.test(head)) return undefined;
  for (const sha of [base, head])
    if (!(await revParse(checkout, `${sha}^{commit}`).catch(() => null))) return undefined;
  const text = await git(
    ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '-M', '--end-of-options', `${base}...${head}`],
    { cwd: checkout, timeoutMs: 20_000 },
  );
  return { base: base.slice(0, 12), text };
}
