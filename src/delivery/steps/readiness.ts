/**
 * Whether a pull request's head is green and whether it is approved, read from GitHub's REST API:
 *
 * - **checks**: those the CI step reads (`readChecks` in src/delivery/steps/ci.ts): the required
 *   checks of the base branch when its protection is readable (one not reported yet is running),
 *   else every check run and commit status of the head. Green when none runs and none fails; no
 *   check at all is `none`.
 * - **reviews** (`GET pulls/{n}/reviews`): the latest review of each person with write access to
 *   the repository (`GET collaborators/{login}/permission`: admin, maintain or write; a bot's
 *   approval never merges, `trusted_bots` or not) that approved, asked for changes or was
 *   dismissed (a comment-only review changes nothing, as on GitHub). Approved when at least one such
 *   reviewer's latest review approves and none asks for changes: GitHub's `reviewDecision =
 *   APPROVED` with one required approval.
 *
 * The steps take a `ReadinessReader`, so tests script the answers; `restReadiness` is the default,
 * read once per look at a pull request however many steps ask.
 */
import { getCollaboratorPermission, listPullReviews, type Schemas } from '../../github/rest.js';
import type { FollowContext } from '../follow.js';
import { type CiView, readChecks } from './ci.js';

export interface Readiness {
  checks: 'success' | 'pending' | 'failure' | 'none';
  /** Names of failing checks and statuses. */
  failing: string[];
  /** Names of checks and statuses still running. */
  pending: string[];
  review: 'approved' | 'changes_requested' | 'review_required';
  /** Logins whose latest review approves. */
  approvers: string[];
  /** Logins whose latest review asks for changes. */
  requesters: string[];
}

export type ReadinessReader = (context: FollowContext) => Promise<Readiness>;

const WRITE_ACCESS = new Set(['admin', 'maintain', 'write']);

type ReviewJson = Pick<Schemas['pull-request-review'], 'id' | 'state'> & {
  user: { login: string } | null;
  submitted_at?: string;
};

/** The checks verdict from the checks that decide (the CI step's view). */
export function checksVerdict(
  view: Pick<CiView, 'checks'>,
): Pick<Readiness, 'checks' | 'failing' | 'pending'> {
  const failing = view.checks.filter((c) => c.state === 'failing').map((c) => c.name);
  const pending = view.checks.filter((c) => c.state === 'running').map((c) => c.name);
  const checks =
    failing.length > 0
      ? 'failure'
      : pending.length > 0
        ? 'pending'
        : view.checks.length === 0
          ? 'none'
          : 'success';
  return { checks, failing, pending };
}

/** The review verdict: the latest deciding review of each reviewer `trusted` says has write access. */
export function reviewVerdict(
  reviews: readonly ReviewJson[],
  trusted: (login: string) => boolean,
): Pick<Readiness, 'review' | 'approvers' | 'requesters'> {
  const latest = new Map<string, string>();
  for (const review of [...reviews].sort((a, b) => Number(a.id) - Number(b.id))) {
    const login = review.user?.login;
    if (!login || !trusted(login)) continue;
    if (review.state === 'APPROVED' || review.state === 'CHANGES_REQUESTED' || review.state === 'DISMISSED')
      latest.set(login, review.state);
  }
  const approvers = [...latest].filter(([, s]) => s === 'APPROVED').map(([l]) => l);
  const requesters = [...latest].filter(([, s]) => s === 'CHANGES_REQUESTED').map(([l]) => l);
  const review =
    requesters.length > 0 ? 'changes_requested' : approvers.length > 0 ? 'approved' : 'review_required';
  return { review, approvers, requesters };
}

/** The logins of deciding reviews that are people with write access (one permission read each). */
async function writers(context: FollowContext, reviews: readonly ReviewJson[]): Promise<Set<string>> {
  const logins = new Set(
    reviews
      .filter((r) => r.state === 'APPROVED' || r.state === 'CHANGES_REQUESTED' || r.state === 'DISMISSED')
      .map((r) => r.user?.login)
      .filter((l): l is string => typeof l === 'string' && !l.toLowerCase().endsWith('[bot]')),
  );
  const out = new Set<string>();
  for (const login of logins) {
    const { permission } = await getCollaboratorPermission(context.deps.github, context.record.repo, login);
    if (WRITE_ACCESS.has(permission)) out.add(login);
  }
  return out;
}

export type ChecksReadiness = Pick<Readiness, 'checks' | 'failing' | 'pending'>;
/** Only the checks (updating the branch needs no review). */
export type ChecksReader = (context: FollowContext) => Promise<ChecksReadiness>;

const checksCache = new WeakMap<FollowContext, Promise<ChecksReadiness>>();
const reviewsCache = new WeakMap<
  FollowContext,
  Promise<Pick<Readiness, 'review' | 'approvers' | 'requesters'>>
>();

function once<T>(
  cache: WeakMap<FollowContext, Promise<T>>,
  context: FollowContext,
  read: () => Promise<T>,
): Promise<T> {
  const known = cache.get(context);
  if (known) return known;
  const reading = read();
  cache.set(context, reading);
  return reading;
}

/** The head's checks over REST (once per look at a pull request). */
export const restChecks: ChecksReader = (context) =>
  once(checksCache, context, async () =>
    checksVerdict(
      await readChecks(
        context.deps.github,
        context.record.repo,
        context.pr.head.sha,
        context.pr.base.ref,
        // Partial deps in some tests: the wall clock then.
        context.deps.clock?.now(),
      ),
    ),
  );

/** The default reader, over REST (once per look at a pull request). */
export const restReadiness: ReadinessReader = async (context) => {
  const checks = await restChecks(context);
  const reviews = await once(reviewsCache, context, async () => {
    const list: ReviewJson[] = await listPullReviews(
      context.deps.github,
      context.record.repo,
      context.pr.number,
    );
    const trusted = await writers(context, list);
    return reviewVerdict(list, (login) => trusted.has(login));
  });
  return { ...checks, ...reviews };
};

/** Mark key: some head of this pull request had checks, so a head without any yet is waiting for them. */
export const CHECKS_SEEN_MARK = 'checks-seen';

/**
 * Whether the head is green for acting (updating the branch, merging): `none` counts as green only
 * while no head of this pull request ever had checks; once one had, a head without checks is
 * waiting for CI to register them (right after a push or an update of the branch).
 */
export async function greenForActing(
  context: FollowContext,
  readiness: ChecksReadiness,
): Promise<{ green: boolean; why: string }> {
  const { store } = context.deps;
  const runId = context.record.runId;
  const seen = await store.getPullRequestMark(runId, CHECKS_SEEN_MARK);
  if (readiness.checks !== 'none' && !seen)
    await store.setPullRequestMark(runId, CHECKS_SEEN_MARK, context.pr.head.sha);
  if (readiness.checks === 'success') return { green: true, why: 'checks green' };
  if (readiness.checks === 'failure')
    return { green: false, why: `failing: ${readiness.failing.join(', ')}` };
  if (readiness.checks === 'pending')
    return { green: false, why: `waiting for checks: ${readiness.pending.join(', ')}` };
  if (seen) return { green: false, why: 'waiting for checks to start on the new head' };
  return { green: true, why: 'no checks on this repository' };
}
