/**
 * Pull request reviews, inline review comments and collaborator permissions (issue 13), over the
 * world:
 *
 *   GET    /repos/{o}/{r}/pulls/{n}/reviews                 reviews, oldest first (per_page, page)
 *   POST   /repos/{o}/{r}/pulls/{n}/reviews                 { event: APPROVE | REQUEST_CHANGES | COMMENT,
 *                                                           body?, comments?: [{ path, line, body }] } → 200;
 *                                                           422 without a body where GitHub wants one, or
 *                                                           when the author approves or blocks their own
 *   GET    /repos/{o}/{r}/pulls/{n}/comments                inline review comments, oldest first
 *   GET    /repos/{o}/{r}/pulls/{n}/requested_reviewers     { users, teams }
 *   POST   /repos/{o}/{r}/pulls/{n}/requested_reviewers     { reviewers?, team_reviewers? } → 201, the pull
 *                                                           request; 422 for its author or an account
 *                                                           without write access (as GitHub)
 *   GET    /repos/{o}/{r}/collaborators/{login}/permission  { permission: admin | write | read | none }
 *
 * Conversation comments on a pull request are issue comments (rest.ts). The repository's owner is
 * `admin`; other accounts have what `setPermission` gave them, else `read` on a public repository
 * and `none` on a private one. Shapes typed against `@octokit/openapi-types`.
 *
 * Test helpers: `submitReview` (a review by any login, also setting the pull request's
 * `reviewDecision`), `addReviewComment` (an inline comment), `setPermission`.
 */
import type { components } from '@octokit/openapi-types';
import { branchSha } from './branches.js';
import { HTML_BASE } from './ids.js';
import { type RestRequest, type RestResponse, restError, userJson } from './rest-json.js';
import type { ReviewState, SimPullRequest, SimRepository, SimReview, SimWorld } from './world.js';

type Schemas = components['schemas'];
type SimUserJson = ReturnType<typeof userJson>;

/** GitHub's `pull-request-review`, with the simulator's user shape. */
export type ReviewJson = Pick<
  Schemas['pull-request-review'],
  | 'id'
  | 'node_id'
  | 'body'
  | 'state'
  | 'html_url'
  | 'pull_request_url'
  | 'submitted_at'
  | 'commit_id'
  | 'author_association'
> & { user: SimUserJson };

/** GitHub's `pull-request-review-comment`, with the fields the simulator answers. */
export type ReviewCommentJson = Pick<
  Schemas['pull-request-review-comment'],
  | 'url'
  | 'id'
  | 'node_id'
  | 'pull_request_review_id'
  | 'diff_hunk'
  | 'path'
  | 'commit_id'
  | 'original_commit_id'
  | 'body'
  | 'created_at'
  | 'updated_at'
  | 'html_url'
  | 'pull_request_url'
  | 'author_association'
  | 'line'
  | 'side'
> & { user: SimUserJson };

/** GitHub's `repository-collaborator-permission`. */
export type PermissionJson = Pick<
  Schemas['repository-collaborator-permission'],
  'permission' | 'role_name'
> & {
  user: SimUserJson;
};

export type Permission = 'admin' | 'write' | 'read' | 'none';

/** One inline comment of a review, on a line of a file of the pull request's diff. */
export interface SimReviewComment {
  readonly id: number;
  readonly repo: string;
  readonly pullRequestNumber: number;
  readonly reviewId: number | null;
  readonly author: string;
  readonly path: string;
  readonly line: number;
  readonly body: string;
  readonly commitId: string;
  readonly createdAt: string;
}

interface ReviewState_ {
  comments: SimReviewComment[];
  permissions: Map<string, Permission>;
  /** GitHub counts review comment ids apart from issue comments; so does the simulator. */
  nextCommentId: number;
}

const states = new WeakMap<SimWorld, ReviewState_>();

function stateOf(world: SimWorld): ReviewState_ {
  let state = states.get(world);
  if (!state) {
    state = { comments: [], permissions: new Map(), nextCommentId: 700_000_001 };
    states.set(world, state);
  }
  return state;
}

function permissionKey(repo: string, login: string): string {
  return `${repo}\u0000${login}`.toLowerCase();
}

/** Gives `login` this permission on `repo` (the owner is always `admin`). */
export function setPermission(world: SimWorld, repo: string, login: string, permission: Permission): void {
  world.addUser(login);
  stateOf(world).permissions.set(permissionKey(repo, login), permission);
}

/** What `GET …/collaborators/{login}/permission` answers for `login` on `repo`. */
export function permissionOf(world: SimWorld, repo: string, login: string): Permission {
  const found = world.repo(repo);
  if (found && found.owner.toLowerCase() === login.toLowerCase()) return 'admin';
  const set = stateOf(world).permissions.get(permissionKey(repo, login));
  if (set) return set;
  return found?.isPrivate ? 'none' : 'read';
}

/** Inline review comments of a pull request, oldest first. */
export function reviewComments(world: SimWorld, repo: string, number: number): SimReviewComment[] {
  return stateOf(world).comments.filter((c) => c.repo === repo && c.pullRequestNumber === number);
}

function requirePull(world: SimWorld, repo: string, number: number): SimPullRequest {
  const pr = world.pullRequest(repo, number);
  if (!pr) throw new Error(`the simulated world has no pull request ${repo}#${number}`);
  return pr;
}

function headOf(world: SimWorld, pr: SimPullRequest): string {
  const repo = world.repo(pr.repo);
  return (repo ? branchSha(repo, pr.headRefName) : undefined) ?? pr.headRefOid;
}

/** Adds an inline comment by `author` on `path:line` (of a review, or standalone). */
export function addReviewComment(
  world: SimWorld,
  repo: string,
  number: number,
  input: { author: string; path: string; line: number; body: string; reviewId?: number },
): SimReviewComment {
  const pr = requirePull(world, repo, number);
  const state = stateOf(world);
  const comment: SimReviewComment = {
    id: state.nextCommentId++,
    repo: pr.repo,
    pullRequestNumber: pr.number,
    reviewId: input.reviewId ?? null,
    author: world.addUser(input.author).login,
    path: input.path,
    line: input.line,
    body: input.body,
    commitId: headOf(world, pr),
    createdAt: world.timestamp(),
  };
  state.comments.push(comment);
  return comment;
}

/** The pull request's `reviewDecision` from each reviewer's latest approving or blocking review. */
function decide(pr: SimPullRequest): void {
  const latest = new Map<string, ReviewState>();
  for (const review of pr.reviews) {
    if (review.state === 'APPROVED' || review.state === 'CHANGES_REQUESTED' || review.state === 'DISMISSED')
      latest.set(review.author.toLowerCase(), review.state);
  }
  const values = [...latest.values()];
  if (values.includes('CHANGES_REQUESTED')) pr.reviewDecision = 'CHANGES_REQUESTED';
  else if (values.includes('APPROVED')) pr.reviewDecision = 'APPROVED';
}

/** A review by `author` (with its inline comments), as if submitted on GitHub. */
export function submitReview(
  world: SimWorld,
  repo: string,
  number: number,
  input: {
    author: string;
    state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
    body?: string;
    comments?: readonly { path: string; line: number; body: string }[];
  },
): { review: SimReview; comments: SimReviewComment[] } {
  const pr = requirePull(world, repo, number);
  const review = world.addReview(pr.repo, pr.number, {
    author: input.author,
    state: input.state,
    body: input.body ?? '',
  });
  const comments = (input.comments ?? []).map((c) =>
    addReviewComment(world, pr.repo, pr.number, { ...c, author: input.author, reviewId: review.databaseId }),
  );
  decide(pr);
  pr.updatedAt = world.timestamp();
  return { review, comments };
}

function reviewJson(world: SimWorld, pr: SimPullRequest, review: SimReview, apiUrl: string): ReviewJson {
  return {
    id: review.databaseId,
    node_id: review.id,
    user: userJson(world.actor(review.author) ?? world.addUser(review.author), apiUrl),
    body: review.body,
    state: review.state,
    html_url: `${HTML_BASE}/${pr.repo}/pull/${pr.number}#pullrequestreview-${review.databaseId}`,
    pull_request_url: `${apiUrl}/repos/${pr.repo}/pulls/${pr.number}`,
    submitted_at: review.submittedAt,
    commit_id: headOf(world, pr),
    author_association: world.association(pr.repo, review.author) as Schemas['author-association'],
  };
}

function reviewCommentJson(world: SimWorld, comment: SimReviewComment, apiUrl: string): ReviewCommentJson {
  const pulls = `${apiUrl}/repos/${comment.repo}/pulls`;
  return {
    url: `${pulls}/comments/${comment.id}`,
    id: comment.id,
    node_id: `PRRC_sim${comment.id}`,
    pull_request_review_id: comment.reviewId,
    diff_hunk: `@@ -${comment.line},1 +${comment.line},1 @@`,
    path: comment.path,
    commit_id: comment.commitId,
    original_commit_id: comment.commitId,
    user: userJson(world.actor(comment.author) ?? world.addUser(comment.author), apiUrl),
    body: comment.body,
    created_at: comment.createdAt,
    updated_at: comment.createdAt,
    html_url: `${HTML_BASE}/${comment.repo}/pull/${comment.pullRequestNumber}#discussion_r${comment.id}`,
    pull_request_url: `${pulls}/${comment.pullRequestNumber}`,
    author_association: world.association(comment.repo, comment.author) as Schemas['author-association'],
    line: comment.line,
    side: 'RIGHT',
  };
}

function page<T>(items: readonly T[], request: RestRequest): T[] {
  const perPage = Math.min(100, Math.max(1, Number(request.searchParams.get('per_page') ?? 30) || 30));
  const at = Math.max(1, Number(request.searchParams.get('page') ?? 1) || 1);
  return items.slice((at - 1) * perPage, at * perPage);
}

const EVENTS = { APPROVE: 'APPROVED', REQUEST_CHANGES: 'CHANGES_REQUESTED', COMMENT: 'COMMENTED' } as const;

function createReview(request: RestRequest, pr: SimPullRequest): RestResponse {
  const { world, viewer, apiUrl } = request;
  const body = (request.body ?? {}) as Record<string, unknown>;
  const event = typeof body.event === 'string' ? body.event : '';
  if (!Object.hasOwn(EVENTS, event)) {
    // GitHub keeps an event-less review pending; the simulator has no pending reviews.
    return restError(422, 'Unprocessable Entity', {
      errors: ['event must be APPROVE, REQUEST_CHANGES or COMMENT'],
    });
  }
  const state = EVENTS[event as keyof typeof EVENTS];
  const text = typeof body.body === 'string' ? body.body : '';
  const inline = Array.isArray(body.comments) ? (body.comments as Record<string, unknown>[]) : [];
  if (state !== 'APPROVED' && text.trim() === '' && inline.length === 0) {
    return restError(422, 'Unprocessable Entity', {
      errors: [`Review Can not ${event === 'COMMENT' ? 'comment' : 'request changes'} without a body`],
    });
  }
  if (state !== 'COMMENTED' && viewer.login.toLowerCase() === pr.author.toLowerCase()) {
    const verb = state === 'APPROVED' ? 'approve' : 'request changes on';
    return restError(422, 'Unprocessable Entity', { errors: [`Can not ${verb} your own pull request`] });
  }
  const comments: { path: string; line: number; body: string }[] = [];
  for (const c of inline) {
    if (typeof c.path !== 'string' || typeof c.body !== 'string' || typeof c.line !== 'number')
      return restError(422, 'Unprocessable Entity', { errors: ['each comment needs path, line and body'] });
    comments.push({ path: c.path, line: c.line, body: c.body });
  }
  const { review } = submitReview(world, pr.repo, pr.number, {
    author: viewer.login,
    state,
    body: text,
    comments,
  });
  return { status: 200, body: reviewJson(world, pr, review, apiUrl) };
}

/** `/repos/{o}/{r}/pulls/{n}/reviews` and `/repos/{o}/{r}/pulls/{n}/comments`. */
export function pullReviewsRoute(
  request: RestRequest,
  repo: SimRepository,
  number: number,
  what: 'reviews' | 'comments',
): RestResponse {
  const { world, method, apiUrl } = request;
  const pr = world.pullRequest(repo.nameWithOwner, number);
  if (!pr) return restError(404, 'Not Found');
  if (what === 'reviews') {
    if (method === 'GET')
      return { status: 200, body: page(pr.reviews, request).map((r) => reviewJson(world, pr, r, apiUrl)) };
    if (method === 'POST') return createReview(request, pr);
    return restError(404, 'Not Found');
  }
  if (method !== 'GET') return restError(404, 'Not Found');
  const comments = reviewComments(world, pr.repo, pr.number);
  return { status: 200, body: page(comments, request).map((c) => reviewCommentJson(world, c, apiUrl)) };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** `/repos/{o}/{r}/pulls/{n}/requested_reviewers`: who is asked to review. */
export function requestedReviewersRoute(
  request: RestRequest,
  repo: SimRepository,
  number: number,
): RestResponse {
  const { world, method, apiUrl } = request;
  const pr = world.pullRequest(repo.nameWithOwner, number);
  if (!pr) return restError(404, 'Not Found');
  const answer = () => ({
    users: (pr.requestedReviewers ?? []).flatMap((login) => {
      const actor = world.actor(login);
      return actor ? [userJson(actor, apiUrl)] : [];
    }),
    teams: (pr.requestedTeams ?? []).map((slug) => ({ slug, name: slug })),
  });
  if (method === 'GET') return { status: 200, body: answer() };
  if (method !== 'POST') return restError(404, 'Not Found');
  const body = (request.body ?? {}) as Record<string, unknown>;
  const reviewers = strings(body.reviewers);
  const teams = strings(body.team_reviewers);
  if (reviewers.length === 0 && teams.length === 0)
    return restError(422, 'Unprocessable Entity', { errors: ['reviewers or team_reviewers is required'] });
  for (const login of reviewers) {
    if (login.toLowerCase() === pr.author.toLowerCase())
      return restError(422, 'Review cannot be requested from pull request author.');
    const permission = world.actor(login) ? permissionOf(world, repo.nameWithOwner, login) : 'none';
    if (permission !== 'admin' && permission !== 'write')
      return restError(
        422,
        'Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ' +
          `${repo.nameWithOwner} repository.`,
      );
  }
  pr.requestedReviewers = [...new Set([...(pr.requestedReviewers ?? []), ...reviewers])];
  pr.requestedTeams = [...new Set([...(pr.requestedTeams ?? []), ...teams])];
  return {
    status: 201,
    body: { number: pr.number, requested_reviewers: answer().users, requested_teams: answer().teams },
  };
}

/** `/repos/{o}/{r}/collaborators/{login}/permission`. */
export function permissionRoute(request: RestRequest, repo: SimRepository, login: string): RestResponse {
  const { world, method, apiUrl } = request;
  if (method !== 'GET') return restError(404, 'Not Found');
  const actor = world.actor(login);
  if (!actor) return restError(404, 'Not Found');
  const permission = permissionOf(world, repo.nameWithOwner, actor.login);
  const body: PermissionJson = { permission, role_name: permission, user: userJson(actor, apiUrl) };
  return { status: 200, body };
}
