/**
 * The REST endpoints curupira needs, with GitHub's snake_case JSON:
 *
 *   GET    /user                                      the token's user
 *   GET    /rate_limit                                budgets (free, like GitHub's)
 *   GET    /repos/{o}/{r}                             repository
 *   GET    /repos/{o}/{r}/labels                      repository labels
 *   POST   /repos/{o}/{r}/labels                      { name, color?, description? } → 201; 422 already_exists
 *   GET    /repos/{o}/{r}/labels/{name}               one label
 *   GET    /repos/{o}/{r}/issues                      issues and pull requests (state, sort, direction,
 *                                                     per_page, page), with an ETag: a GET with a matching
 *                                                     If-None-Match gets 304, free (server.ts)
 *   GET    /repos/{o}/{r}/issues/comments/{id}        one comment
 *   PATCH  /repos/{o}/{r}/issues/comments/{id}        { body } edits
 *   DELETE /repos/{o}/{r}/issues/comments/{id}        → 204
 *   GET    /repos/{o}/{r}/issues/{n}/timeline         labeled, unlabeled, closed, reopened, commented (actors)
 *   GET    /repos/{o}/{r}/issues                      issues (state, labels, creator, per_page, page)
 *   POST   /repos/{o}/{r}/issues                      { title, body?, labels? } → 201 (missing labels created)
 *   GET    /repos/{o}/{r}/issues/{n}                  issue (or pull request, as an issue)
 *   PATCH  /repos/{o}/{r}/issues/{n}                  title, body, state, state_reason, labels, assignees, milestone
 *   GET    /repos/{o}/{r}/issues/{n}/comments         comments (per_page, page, Link header)
 *   POST   /repos/{o}/{r}/issues/{n}/comments         { body } → 201
 *   GET    /repos/{o}/{r}/issues/{n}/labels           labels
 *   POST   /repos/{o}/{r}/issues/{n}/labels           { labels: [...] } adds (creating missing labels)
 *   PUT    /repos/{o}/{r}/issues/{n}/labels           { labels: [...] } replaces
 *   DELETE /repos/{o}/{r}/issues/{n}/labels/{name}    removes; 404 "Label does not exist"
 *   GET, POST /repos/{o}/{r}/pulls, GET, PATCH /repos/{o}/{r}/pulls/{n}   see pulls.ts
 *   GET, POST /repos/{o}/{r}/pulls/{n}/reviews, GET …/pulls/{n}/comments,
 *   GET /repos/{o}/{r}/collaborators/{login}/permission                 see reviews.ts
 *   check runs, commit statuses, Actions jobs and logs, required checks      see checks.ts
 *
 * Anything else is GitHub's 404.
 */
import { createHash } from 'node:crypto';
import type { components, operations } from '@octokit/openapi-types';
import { checksRoute } from './checks.js';
import { commitsRoute } from './commits.js';
import { HTML_BASE } from './ids.js';
import { compareRoute } from './merging.js';
import { pullsRoute } from './pulls.js';
import {
  association,
  issueJson,
  labelJson,
  paged,
  type RestRequest,
  type RestResponse,
  restError,
  type SimUserJson,
  userJson,
} from './rest-json.js';
import { permissionRoute, pullReviewsRoute, requestedReviewersRoute } from './reviews.js';
import type {
  IssuePatch,
  IssueStateReason,
  SimComment,
  SimIssueOrPullRequest,
  SimLabel,
  SimRepository,
  SimWorld,
} from './world.js';

type Schemas = components['schemas'];
/** GitHub's `issue-comment`, with the simulator's user shape. */
export type IssueCommentJson = Omit<Schemas['issue-comment'], 'user'> & { user: SimUserJson };
/** One timeline entry: `labeled-issue-event`, `state-change-issue-event`, `timeline-comment-event`, … */
export type TimelineEventJson = {
  id: number;
  node_id: string;
  event: string;
  actor: SimUserJson;
  created_at: string;
  label?: { name: string; color: string };
  state_reason?: string | null;
  body?: string;
  author_association?: Schemas['author-association'];
};

const notFound = (): RestResponse => restError(404, 'Not Found');

function validationFailed(resource: string, code: string, field: string): RestResponse {
  return restError(422, 'Validation Failed', { errors: [{ resource, code, field }] });
}

function ownerJson(world: SimWorld, login: string, apiUrl: string): Record<string, unknown> {
  const org = world.organization(login);
  if (org) {
    return {
      login: org.login,
      id: org.databaseId,
      node_id: org.id,
      avatar_url: `https://avatars.githubusercontent.com/u/${org.databaseId}?v=4`,
      url: `${apiUrl}/users/${org.login}`,
      html_url: `${HTML_BASE}/${org.login}`,
      type: 'Organization',
      site_admin: false,
    };
  }
  const actor = world.actor(login) ?? world.addUser(login);
  return userJson(actor, apiUrl);
}

function commentJson(
  world: SimWorld,
  comment: SimComment,
  item: SimIssueOrPullRequest,
  apiUrl: string,
): IssueCommentJson {
  const html = `${HTML_BASE}/${item.repo}/${item.__typename === 'Issue' ? 'issues' : 'pull'}/${item.number}`;
  return {
    url: `${apiUrl}/repos/${comment.repo}/issues/comments/${comment.databaseId}`,
    html_url: `${html}#issuecomment-${comment.databaseId}`,
    issue_url: `${apiUrl}/repos/${comment.repo}/issues/${item.number}`,
    id: comment.databaseId,
    node_id: comment.id,
    user: userJson(world.actor(comment.author) ?? world.addUser(comment.author), apiUrl),
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    author_association: association(world, comment.repo, comment.author) as Schemas['author-association'],
    body: comment.body,
    performed_via_github_app: null,
  };
}

function repoJson(world: SimWorld, repo: SimRepository, apiUrl: string): Record<string, unknown> {
  const open = [...repo.items.values()].filter((i) => i.state === 'OPEN').length;
  return {
    id: repo.databaseId,
    node_id: repo.id,
    name: repo.name,
    full_name: repo.nameWithOwner,
    private: repo.isPrivate,
    owner: ownerJson(world, repo.owner, apiUrl),
    html_url: `${HTML_BASE}/${repo.nameWithOwner}`,
    description: null,
    fork: false,
    url: `${apiUrl}/repos/${repo.nameWithOwner}`,
    created_at: repo.createdAt,
    updated_at: repo.updatedAt,
    pushed_at: repo.updatedAt,
    clone_url: `${HTML_BASE}/${repo.nameWithOwner}.git`,
    has_issues: true,
    has_projects: true,
    archived: false,
    disabled: false,
    open_issues_count: open,
    visibility: repo.isPrivate ? 'private' : 'public',
    default_branch: repo.defaultBranch,
    permissions: { admin: true, maintain: true, push: true, triage: true, pull: true },
  };
}

function labelNamesFrom(body: unknown): string[] | undefined {
  const list = Array.isArray(body)
    ? body
    : typeof body === 'object' && body !== null
      ? (body as Record<string, unknown>).labels
      : undefined;
  if (!Array.isArray(list)) return undefined;
  const names: string[] = [];
  for (const entry of list) {
    if (typeof entry === 'string') names.push(entry);
    else if (
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as { name?: unknown }).name === 'string'
    ) {
      names.push((entry as { name: string }).name);
    } else return undefined;
  }
  return names;
}

function issueLabels(
  world: SimWorld,
  item: SimIssueOrPullRequest,
  apiUrl: string,
): Record<string, unknown>[] {
  return item.labels
    .map((name) => world.label(item.repo, name))
    .filter((l): l is SimLabel => l !== undefined)
    .map((l) => labelJson(l, apiUrl));
}

const STATE_REASONS: Record<string, IssueStateReason> = {
  completed: 'COMPLETED',
  not_planned: 'NOT_PLANNED',
  reopened: 'REOPENED',
  duplicate: 'DUPLICATE',
};

function patchIssue(request: RestRequest, item: SimIssueOrPullRequest): RestResponse {
  const { world } = request;
  if (typeof request.body !== 'object' || request.body === null || Array.isArray(request.body)) {
    return restError(400, 'Problems parsing JSON');
  }
  const body = request.body as Record<string, unknown>;
  const patch: IssuePatch = {};
  if (body.title !== undefined) {
    if (typeof body.title !== 'string' || body.title.trim() === '')
      return validationFailed('Issue', 'missing_field', 'title');
    patch.title = body.title;
  }
  if (body.body !== undefined) patch.body = typeof body.body === 'string' ? body.body : '';
  if (body.state !== undefined) {
    if (body.state !== 'open' && body.state !== 'closed')
      return validationFailed('Issue', 'invalid', 'state');
    patch.state = body.state === 'open' ? 'OPEN' : 'CLOSED';
  }
  if (body.state_reason !== undefined && body.state_reason !== null) {
    const reason = STATE_REASONS[String(body.state_reason)];
    if (!reason) return validationFailed('Issue', 'invalid', 'state_reason');
    patch.stateReason = reason;
  }
  if (body.labels !== undefined) {
    const names = labelNamesFrom({ labels: body.labels });
    if (!names) return validationFailed('Issue', 'invalid', 'labels');
    patch.labels = names;
  }
  if (body.assignees !== undefined) {
    if (!Array.isArray(body.assignees) || body.assignees.some((a) => typeof a !== 'string')) {
      return validationFailed('Issue', 'invalid', 'assignees');
    }
    patch.assignees = body.assignees as string[];
  }
  if (body.milestone !== undefined) {
    if (body.milestone === null) patch.milestone = null;
    else {
      const milestone = world.milestone(item.repo, Number(body.milestone));
      if (!milestone) return validationFailed('Issue', 'invalid', 'milestone');
      patch.milestone = milestone.title;
    }
  }
  const updated = world.updateIssue(item.repo, item.number, patch, { actor: request.viewer.login });
  return { status: 200, body: issueJson(world, updated, request.apiUrl) };
}

function issueRoute(request: RestRequest, repo: SimRepository, rest: string[]): RestResponse {
  const { world, method, apiUrl } = request;
  const number = Number(rest[0]);
  if (!/^\d+$/.test(rest[0] ?? '')) return notFound();
  const item = world.item(repo.nameWithOwner, number);
  if (!item) return notFound();
  const sub = rest[1];
  if (sub === undefined) {
    if (method === 'GET') return { status: 200, body: issueJson(world, item, apiUrl) };
    if (method === 'PATCH') return patchIssue(request, item);
    return notFound();
  }
  if (sub === 'comments' && rest.length === 2) {
    if (method === 'GET') {
      const { page, headers } = paged(item.comments, request);
      return { status: 200, body: page.map((c) => commentJson(world, c, item, apiUrl)), headers };
    }
    if (method === 'POST') {
      const body = request.body as Record<string, unknown> | undefined;
      if (typeof body?.body !== 'string' || body.body === '') {
        return validationFailed('IssueComment', 'missing_field', 'body');
      }
      const comment = world.addComment(repo.nameWithOwner, number, {
        body: body.body,
        author: request.viewer.login,
      });
      return {
        status: 201,
        body: commentJson(world, comment, item, apiUrl),
        headers: { location: `${apiUrl}/repos/${repo.nameWithOwner}/issues/comments/${comment.databaseId}` },
      };
    }
    return notFound();
  }
  if (sub === 'labels' && rest.length === 2) {
    if (method === 'GET') return { status: 200, body: issueLabels(world, item, apiUrl) };
    if (method === 'POST' || method === 'PUT') {
      const names = labelNamesFrom(request.body);
      if (!names) return validationFailed('Label', 'invalid', 'labels');
      if (method === 'POST') world.addLabels(repo.nameWithOwner, number, names, request.viewer.login);
      else world.updateIssue(repo.nameWithOwner, number, { labels: names });
      return { status: 200, body: issueLabels(world, item, apiUrl) };
    }
    if (method === 'DELETE') {
      world.updateIssue(repo.nameWithOwner, number, { labels: [] });
      return { status: 204, body: undefined };
    }
    return notFound();
  }
  if (sub === 'timeline' && rest.length === 2 && method === 'GET') {
    const { page, headers } = paged(timelineOf(world, item, apiUrl), request);
    return { status: 200, body: page, headers };
  }
  if (sub === 'labels' && rest.length === 3 && method === 'DELETE') {
    const name = decodeURIComponent(rest[2]!);
    if (!world.removeLabel(repo.nameWithOwner, number, name, request.viewer.login)) {
      return restError(404, 'Label does not exist');
    }
    return { status: 200, body: issueLabels(world, item, apiUrl) };
  }
  return notFound();
}

function timelineOf(world: SimWorld, item: SimIssueOrPullRequest, apiUrl: string): TimelineEventJson[] {
  const user = (login: string) => userJson(world.actor(login) ?? world.addUser(login), apiUrl);
  const labelOf = (name: string) => ({ name, color: world.label(item.repo, name)?.color ?? 'ededed' });
  const events: TimelineEventJson[] = [
    ...item.labelEvents.map((e) => ({
      id: e.databaseId,
      node_id: e.id,
      event: 'labeled',
      actor: user(e.actor),
      created_at: e.createdAt,
      label: labelOf(e.label),
    })),
    ...item.events.map((e) => ({
      id: e.databaseId,
      node_id: e.id,
      event: e.event,
      actor: user(e.actor),
      created_at: e.createdAt,
      ...(e.label !== undefined ? { label: labelOf(e.label) } : {}),
      ...(e.stateReason !== undefined ? { state_reason: e.stateReason } : {}),
    })),
    ...item.comments.map((c) => ({
      id: c.databaseId,
      node_id: c.id,
      event: 'commented',
      actor: user(c.author),
      created_at: c.createdAt,
      body: c.body,
      author_association: association(world, c.repo, c.author) as Schemas['author-association'],
    })),
  ];
  // Oldest first; events made in the same second keep the order they were made in (their ids).
  return events.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id - b.id);
}

function createLabel(request: RestRequest, repo: SimRepository): RestResponse {
  const body = request.body as Record<string, unknown> | undefined;
  if (typeof body?.name !== 'string' || body.name.trim() === '') {
    return validationFailed('Label', 'missing_field', 'name');
  }
  if (request.world.label(repo.nameWithOwner, body.name)) {
    return validationFailed('Label', 'already_exists', 'name');
  }
  const color = typeof body.color === 'string' ? body.color.replace(/^#/, '') : undefined;
  if (color !== undefined && !/^[0-9a-fA-F]{6}$/.test(color)) {
    return validationFailed('Label', 'invalid', 'color');
  }
  const label = request.world.addLabel(repo.nameWithOwner, body.name, {
    color,
    description: typeof body.description === 'string' ? body.description : null,
  });
  return {
    status: 201,
    body: labelJson(label, request.apiUrl),
    headers: { location: labelJson(label, request.apiUrl).url },
  };
}

function labelsRoute(request: RestRequest, repo: SimRepository, rest: string[]): RestResponse {
  const { world, method, apiUrl } = request;
  if (rest.length === 1) {
    if (method === 'GET') {
      const { page, headers } = paged(repo.labels, request);
      return { status: 200, body: page.map((l) => labelJson(l, apiUrl)), headers };
    }
    if (method === 'POST') return createLabel(request, repo);
    return notFound();
  }
  if (rest.length === 2 && method === 'GET') {
    const label = world.label(repo.nameWithOwner, decodeURIComponent(rest[1]!));
    return label ? { status: 200, body: labelJson(label, apiUrl) } : notFound();
  }
  return notFound();
}

/** What `POST /repos/{o}/{r}/issues` takes (the fields the simulator knows). */
type CreateIssueBody = Pick<
  operations['issues/create']['requestBody']['content']['application/json'],
  'title' | 'body' | 'labels'
>;
type ListIssuesQuery = Pick<
  NonNullable<operations['issues/list-for-repo']['parameters']['query']>,
  'state' | 'labels' | 'creator'
>;

/** `/repos/{o}/{r}/issues`: list (issues only, newest first) and create. */
function issuesRoute(request: RestRequest, repo: SimRepository): RestResponse {
  const { world, method, apiUrl } = request;
  if (method === 'GET') return listIssues(request, repo);
  if (method !== 'POST') return notFound();
  const body = request.body as Partial<CreateIssueBody> | undefined;
  if (typeof body?.title !== 'string' || body.title.trim() === '') {
    return validationFailed('Issue', 'missing_field', 'title');
  }
  const labels = (body.labels ?? []).map((l) => (typeof l === 'string' ? l : (l.name ?? '')));
  if (labels.some((l) => l === '')) return validationFailed('Issue', 'invalid', 'labels');
  for (const name of labels)
    if (!world.label(repo.nameWithOwner, name)) world.addLabel(repo.nameWithOwner, name);
  const issue = world.addIssue(repo.nameWithOwner, {
    title: body.title,
    body: typeof body.body === 'string' ? body.body : '',
    author: request.viewer.login,
    labels,
  });
  return {
    status: 201,
    body: issueJson(world, issue, apiUrl),
    headers: { location: `${apiUrl}/repos/${repo.nameWithOwner}/issues/${issue.number}` },
  };
}

/** `/repos/{o}/{r}/issues/comments/{id}`: one comment, edited or deleted. */
function commentRoute(request: RestRequest, repo: SimRepository, idText: string): RestResponse {
  const { world, method, apiUrl } = request;
  if (!/^\d+$/.test(idText)) return notFound();
  const id = Number(idText);
  const found = world.comment(repo.nameWithOwner, id);
  if (!found) return notFound();
  if (method === 'GET') return { status: 200, body: commentJson(world, found.comment, found.item, apiUrl) };
  if (method === 'DELETE') {
    world.deleteComment(repo.nameWithOwner, id);
    return { status: 204, body: undefined };
  }
  if (method !== 'PATCH') return notFound();
  const body = request.body as Record<string, unknown> | undefined;
  if (typeof body?.body !== 'string' || body.body === '') {
    return validationFailed('IssueComment', 'missing_field', 'body');
  }
  const comment = world.updateComment(repo.nameWithOwner, id, body.body)!;
  return { status: 200, body: commentJson(world, comment, found.item, apiUrl) };
}

export function handleRest(request: RestRequest): RestResponse {
  const { world, method, apiUrl } = request;
  const parts = request.path.split('/').filter((p) => p !== '');
  if (parts.length === 1 && parts[0] === 'user' && method === 'GET') {
    const viewer = request.viewer;
    return {
      status: 200,
      body: {
        ...userJson(viewer, apiUrl),
        name: viewer.name,
        company: null,
        blog: '',
        location: null,
        email: null,
        bio: null,
        public_repos: world.repositories().filter((r) => r.owner === viewer.login).length,
        followers: 0,
        following: 0,
        created_at: viewer.createdAt,
        updated_at: viewer.createdAt,
      },
    };
  }
  if (parts.length === 1 && parts[0] === 'rate_limit' && method === 'GET') {
    const resources = request.rateLimits?.() ?? {};
    return { status: 200, body: { resources, rate: resources.core ?? null } };
  }
  if (parts[0] !== 'repos' || parts.length < 3) return notFound();
  const repo = world.repo(`${decodeURIComponent(parts[1]!)}/${decodeURIComponent(parts[2]!)}`);
  if (!repo) return notFound();
  const rest = parts.slice(3);
  if (rest.length === 0)
    return method === 'GET' ? { status: 200, body: repoJson(world, repo, apiUrl) } : notFound();
  if (rest[0] === 'labels') return labelsRoute(request, repo, rest);
  if (rest[0] === 'pulls' && rest.length === 3 && /^\d+$/.test(rest[1]!)) {
    if (rest[2] === 'reviews' || rest[2] === 'comments')
      return pullReviewsRoute(request, repo, Number(rest[1]), rest[2]);
    if (rest[2] === 'requested_reviewers') return requestedReviewersRoute(request, repo, Number(rest[1]));
  }
  if (rest[0] === 'collaborators' && rest.length === 3 && rest[2] === 'permission')
    return permissionRoute(request, repo, decodeURIComponent(rest[1]!));
  if (rest[0] === 'pulls') return pullsRoute(request, repo, rest.slice(1));
  if (rest[0] === 'compare' && rest.length >= 2) return compareRoute(request, repo, rest.slice(1).join('/'));
  const commits = commitsRoute(request, repo, rest);
  if (commits) return commits;
  const ci = checksRoute(request, repo, rest);
  if (ci) return ci;
  if (rest[0] === 'issues' && rest[1] === 'comments' && rest.length === 3) {
    return commentRoute(request, repo, rest[2]!);
  }
  if (rest[0] === 'issues' && rest.length === 1) return issuesRoute(request, repo);
  if (rest[0] === 'issues' && rest.length >= 2) return issueRoute(request, repo, rest.slice(1));
  return notFound();
}

/** The weak ETag GitHub-style of a response body: it changes whenever the body does. */
export function etagOf(body: unknown): string {
  return `W/"${createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 40)}"`;
}

/**
 * `GET /repos/{o}/{r}/issues`: issues and pull requests (as issues, as GitHub lists them), filtered
 * by `state`, `labels` (all of them) and `creator`, sorted by `sort` (created or updated) and
 * `direction`, one page with its `Link` header and an ETag (a matching `If-None-Match` gets 304).
 */
function listIssues(request: RestRequest, repo: SimRepository): RestResponse {
  const params = request.searchParams;
  const query: ListIssuesQuery = {
    state: (params.get('state') ?? 'open') as ListIssuesQuery['state'],
    labels: params.get('labels') ?? '',
    creator: params.get('creator') ?? '',
  };
  const wanted = (query.labels ?? '').split(',').filter((l) => l !== '');
  const sortKey = params.get('sort') === 'updated' ? 'updatedAt' : 'createdAt';
  const ascending = params.get('direction') === 'asc';
  const items = [...repo.items.values()]
    .filter((i) => query.state === 'all' || (query.state === 'closed') === (i.state !== 'OPEN'))
    .filter((i) => !query.creator || i.author.toLowerCase() === query.creator.toLowerCase())
    .filter((i) => wanted.every((l) => i.labels.some((h) => h.toLowerCase() === l.toLowerCase())))
    .sort((a, b) => {
      const order = a[sortKey] < b[sortKey] ? -1 : a[sortKey] > b[sortKey] ? 1 : a.number - b.number;
      return ascending ? order : -order;
    });
  const { page, headers } = paged(items, request);
  const body = page.map((item) => issueJson(request.world, item, request.apiUrl));
  return { status: 200, body, headers: { ...headers, etag: etagOf(body) } };
}
