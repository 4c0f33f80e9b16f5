/**
 * The review thread of a delivered pull request in a few lines, for the run page (issue 28: "the
 * pull request and its review thread summary"): each trusted reviewer's verdict, how many reviews
 * and comments there are, and the newest few with who wrote them and where. The reviews step
 * (src/delivery/steps/reviews.ts) writes it as a mark of the delivery whenever it changes; the
 * board only reads it, so a page never calls GitHub. The excerpts are text from GitHub: the board
 * escapes them, and nothing here reaches a prompt.
 */

/** Mark key (pull_request_marks) of the summary, JSON. */
export const REVIEW_SUMMARY_MARK = 'review-summary';

/** How many of the newest reviews and comments the summary keeps, and how much of each. */
const LATEST = 5;
const EXCERPT = 280;

export interface ReviewNote {
  kind: 'review' | 'inline' | 'comment';
  who: string;
  /** Write access or `trusted_bots`: only these are ever acted on. */
  trusted: boolean;
  /** A review's state (`approved`, `changes requested`, `commented`). */
  state?: string;
  /** An inline comment's file and line. */
  path?: string;
  line?: number;
  excerpt: string;
}

export interface ReviewSummary {
  approvedBy: string[];
  changesRequestedBy: string[];
  reviews: number;
  inlineComments: number;
  comments: number;
  /** Newest first. */
  latest: ReviewNote[];
}

export interface ReviewThreadItem {
  kind: ReviewNote['kind'];
  /** GitHub's id: a higher one is newer within a kind; `at` orders across kinds. */
  id: number;
  at: string | null;
  who: string;
  trusted: boolean;
  state?: string;
  path?: string;
  line?: number | null;
  body: string;
}

function excerpt(body: string): string {
  const text = body.replace(/\s+/g, ' ').trim();
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT - 1)}…` : text;
}

/** The summary of a thread (curupira's own comments already left out). */
export function summarizeReviews(
  items: readonly ReviewThreadItem[],
  verdicts: { approvedBy: readonly string[]; changesRequestedBy: readonly string[] },
): ReviewSummary {
  const count = (kind: ReviewNote['kind']) => items.filter((i) => i.kind === kind).length;
  const latest = items
    .filter((i) => i.body.trim() !== '')
    .sort((a, b) => ((a.at ?? '') === (b.at ?? '') ? b.id - a.id : (a.at ?? '') < (b.at ?? '') ? 1 : -1))
    .slice(0, LATEST)
    .map((i) => ({
      kind: i.kind,
      who: i.who,
      trusted: i.trusted,
      ...(i.state ? { state: i.state.toLowerCase().replace('_', ' ') } : {}),
      ...(i.path ? { path: i.path } : {}),
      ...(typeof i.line === 'number' ? { line: i.line } : {}),
      excerpt: excerpt(i.body),
    }));
  return {
    approvedBy: [...verdicts.approvedBy],
    changesRequestedBy: [...verdicts.changesRequestedBy],
    reviews: count('review'),
    inlineComments: count('inline'),
    comments: count('comment'),
    latest,
  };
}

/** The stored summary, or undefined when absent or not one (never throws). */
export function parseReviewSummary(value: string | undefined): ReviewSummary | undefined {
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(value) as ReviewSummary;
    return Array.isArray(parsed.latest) && Array.isArray(parsed.approvedBy) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
