/**
 * What an incremental review covers (issue 29): the commits that reached the watched branch since
 * the last finished review, up to the commit the review is pinned to. Nothing new: skipped, and no
 * agent starts. The first review: the last 20 commits (or the whole repository when asked). The
 * last reviewed commit is no longer in the branch's history (a force-push rewrote it): back to the
 * last 20 commits, and the run says so.
 */

/** How many commits a first review, or one after a rewritten history, covers. */
import { commitsBetween, isAncestor } from '../workspace/git.js';

export const FIRST_REVIEW_COMMITS = 20;

export const NO_NEW_COMMITS = 'No new commits since the last review';

/** What the decision reads of the repository (src/workspace/git.ts in production). */
export interface HistoryPort {
  /** True when `ancestor` is in `descendant`'s history (false when either is unknown). */
  isAncestor(ancestor: string, descendant: string): Promise<boolean>;
  /** Up to `max` commits of `to` not in `from` (all of `to` for null), newest first. */
  commitsBetween(from: string | null, to: string, max: number): Promise<string[]>;
}

export type ReviewScope =
  | { kind: 'skip'; reason: typeof NO_NEW_COMMITS }
  | {
      kind: 'review';
      /** The commit before the first one reviewed (null: from the repository's first commit). */
      from: string | null;
      /** The commit the review is pinned to. */
      to: string;
      /** The commits covered, newest first (empty for a whole-repository review). */
      commits: string[];
      /** How the range was chosen, in words the run and the board show. */
      note: string;
      whole: boolean;
    };

function short(sha: string): string {
  return sha.slice(0, 12);
}

/** The last `FIRST_REVIEW_COMMITS` commits up to `to`: `from` is the commit before the oldest of them. */
async function lastCommits(history: HistoryPort, to: string, note: string): Promise<ReviewScope> {
  const window = await history.commitsBetween(null, to, FIRST_REVIEW_COMMITS + 1);
  const commits = window.slice(0, FIRST_REVIEW_COMMITS);
  const from = window.length > FIRST_REVIEW_COMMITS ? window[FIRST_REVIEW_COMMITS]! : null;
  return { kind: 'review', from, to, commits, note, whole: false };
}

/**
 * The scope of an incremental review pinned at `pinned`, given the commit the last finished review
 * reached (`reviewedUpTo`, null before the first). `wholeFirst`: a first review covers the whole
 * repository instead of the last 20 commits.
 */
export async function incrementalScope(
  history: HistoryPort,
  pinned: string,
  reviewedUpTo: string | null,
  options: { wholeFirst?: boolean } = {},
): Promise<ReviewScope> {
  if (reviewedUpTo === null) {
    if (options.wholeFirst)
      return {
        kind: 'review',
        from: null,
        to: pinned,
        commits: [],
        note: 'first review: the whole repository',
        whole: true,
      };
    return lastCommits(history, pinned, `first review: the last ${FIRST_REVIEW_COMMITS} commits`);
  }
  if (reviewedUpTo === pinned) return { kind: 'skip', reason: NO_NEW_COMMITS };
  if (!(await history.isAncestor(reviewedUpTo, pinned)))
    return lastCommits(
      history,
      pinned,
      `history was rewritten: ${short(reviewedUpTo)}, reviewed last, is no longer in the branch; back to the last ${FIRST_REVIEW_COMMITS} commits`,
    );
  const commits = await history.commitsBetween(reviewedUpTo, pinned, Number.MAX_SAFE_INTEGER);
  if (commits.length === 0) return { kind: 'skip', reason: NO_NEW_COMMITS };
  return {
    kind: 'review',
    from: reviewedUpTo,
    to: pinned,
    commits,
    note: `${commits.length} new commit${commits.length === 1 ? '' : 's'} since ${short(reviewedUpTo)}`,
    whole: false,
  };
}

/**
 * A baseline review: the whole repository at the pinned commit, every time. `asked`: a person asked
 * for it now ("run a baseline now"), which the run says.
 */
export function baselineScope(pinned: string, asked?: 'asked'): Extract<ReviewScope, { kind: 'review' }> {
  return {
    kind: 'review',
    from: null,
    to: pinned,
    commits: [],
    note: asked ? 'baseline asked now: the whole repository' : 'baseline: the whole repository',
    whole: true,
  };
}

/** The words a run shows for the range it covered (`a1b2c3..d4e5f6`, or the whole repository). */
export function describeScope(scope: Extract<ReviewScope, { kind: 'review' }>): string {
  if (scope.whole) return `the whole repository at ${short(scope.to)} (${scope.note})`;
  return `${scope.from ? short(scope.from) : 'the first commit'}..${short(scope.to)} (${scope.note})`;
}

/** The history of the repository at `cwd`, read with git. */
export function gitHistory(cwd: string): HistoryPort {
  return {
    isAncestor: (ancestor, descendant) => isAncestor(cwd, ancestor, descendant),
    commitsBetween: (from, to, max) => commitsBetween(cwd, from, to, max),
  };
}
