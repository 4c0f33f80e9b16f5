/**
 * The pull request endpoints of the REST API, over the world (and, when the repository has one,
 * its backing bare repository, read with real git):
 *
 *   GET    /repos/{o}/{r}/pulls         ?state=open|closed|all&head=owner:branch&base=&per_page=&page=
 *   POST   /repos/{o}/{r}/pulls         { title, head, base, body?, draft? } → 201; 422 when the head
 *                                       is missing, has no commits beyond the base, or already has an
 *                                       open pull request into that base (GitHub's messages)
 *   GET    /repos/{o}/{r}/pulls/{n}     one pull request
 *   PATCH  /repos/{o}/{r}/pulls/{n}     { title?, body?, state?, base? }
 *   GET    /repos/{o}/{r}/pulls/{n}/files, PUT …/merge, PUT …/update-branch: src/simulator/merging.ts
 *                                       (`mergeable` / `mergeable_state` are computed there too)
 *
 * Shapes follow GitHub's `pull-request` (`@octokit/openapi-types`); closing keywords in the body
 * (`Closes #N`, `fixes #N`, `resolves #N`) link the issue, so merging closes it, as on GitHub.
 */
import type { components } from '@octokit/openapi-types';
import { branchSha, gitIn } from './branches.js';
import { HTML_BASE } from './ids.js';
import { mergeability, mergingRoute } from './merging.js';
import { issueJson, type RestRequest, type RestResponse, restError, userJson } from './rest-json.js';
import type { SimPullRequest, SimRepository, SimWorld } from './world.js';

type Schemas = components['schemas'];
type SimUserJson = ReturnType<typeof userJson>;
interface RefJson extends Pick<Schemas['pull-request']['head'], 'label' | 'ref' | 'sha'> {
  user: SimUserJson;
  repo: { id: number; node_id: string; name: string; full_name: string; default_branch: string } | null;
}
/** GitHub's `pull-request`, with the fields the simulator answers. */
export type PullRequestJson = Pick<
  Schemas['pull-request'],
  | 'url'
  | 'id'
  | 'node_id'
  | 'html_url'
  | 'diff_url'
  | 'patch_url'
  | 'issue_url'
  | 'number'
  | 'state'
  | 'locked'
  | 'title'
  | 'body'
  | 'created_at'
  | 'updated_at'
  | 'closed_at'
  | 'merged_at'
  | 'draft'
  | 'merged'
  | 'mergeable'
  | 'mergeable_state'
  | 'comments'
  | 'review_comments'
  | 'commits'
  | 'additions'
  | 'deletions'
  | 'changed_files'
  | 'author_association'
> & { user: SimUserJson; head: RefJson; base: RefJson };

interface Comparison {
  commits: number;
  additions: number;
  deletions: number;
  changedFiles: number;
}

function compare(repo: SimRepository, base: string, head: string): Comparison | undefined {
  if (!repo.gitDir) return undefined;
  const count = gitIn(repo.gitDir, ['rev-list', '--count', `refs/heads/${base}..refs/heads/${head}`]);
  const numstat = gitIn(repo.gitDir, ['diff', '--numstat', `refs/heads/${base}...refs/heads/${head}`]) ?? '';
  const rows = numstat.split('\n').filter(Boolean);
  const sum = (column: number) =>
    rows.reduce((total, row) => total + (Number.parseInt(row.split('\t')[column] ?? '0', 10) || 0), 0);
  return { commits: Number(count ?? 0), additions: sum(0), deletions: sum(1), changedFiles: rows.length };
}

const CLOSING = /\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)\b/gi;

function closingIssues(world: SimWorld, repo: string, body: string): number[] {
  return [...body.matchAll(CLOSING)]
    .map((m) => Number(m[1]))
    .filter((n) => world.issue(repo, n) !== undefined);
}

function refJson(world: SimWorld, repo: SimRepository, ref: string, sha: string, apiUrl: string): RefJson {
  return {
    label: `${repo.owner}:${ref}`,
    ref,
    sha,
    user: userJson(world.actor(repo.owner) ?? world.addUser(repo.owner), apiUrl),
    repo: {
      id: repo.databaseId,
      node_id: repo.id,
      name: repo.name,
      full_name: repo.nameWithOwner,
      default_branch: repo.defaultBranch,
    },
  };
}

export function pullRequestJson(world: SimWorld, pr: SimPullRequest, apiUrl: string): PullRequestJson {
  const repo = world.repo(pr.repo)!;
  const issue = issueJson(world, pr, apiUrl);
  const html = `${HTML_BASE}/${pr.repo}/pull/${pr.number}`;
  const comparison = pr.state === 'OPEN' ? compare(repo, pr.baseRefName, pr.headRefName) : undefined;
  const merge = mergeability(world, pr);
  return {
    url: `${apiUrl}/repos/${pr.repo}/pulls/${pr.number}`,
    id: pr.databaseId,
    node_id: pr.id,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${apiUrl}/repos/${pr.repo}/issues/${pr.number}`,
    number: pr.number,
    state: pr.state === 'OPEN' ? 'open' : 'closed',
    locked: pr.locked,
    title: pr.title,
    body: pr.body === '' ? null : pr.body,
    user: issue.user as SimUserJson,
    created_at: pr.createdAt,
    updated_at: pr.updatedAt,
    closed_at: pr.closedAt,
    merged_at: pr.mergedAt,
    draft: pr.isDraft,
    merged: pr.state === 'MERGED',
    mergeable: merge ? merge.mergeable : pr.mergeable === 'UNKNOWN' ? null : pr.mergeable === 'MERGEABLE',
    mergeable_state: merge ? merge.state : pr.mergeStateStatus.toLowerCase(),
    comments: pr.comments.length,
    review_comments: 0,
    commits: comparison?.commits ?? 1,
    additions: comparison?.additions ?? pr.additions,
    deletions: comparison?.deletions ?? pr.deletions,
    changed_files: comparison?.changedFiles ?? pr.changedFiles,
    author_association: issue.author_association as Schemas['author-association'],
    head: refJson(world, repo, pr.headRefName, branchSha(repo, pr.headRefName) ?? pr.headRefOid, apiUrl),
    base: refJson(world, repo, pr.baseRefName, branchSha(repo, pr.baseRefName) ?? '', apiUrl),
  };
}

function invalid(message: string, field?: string): RestResponse {
  return restError(422, 'Validation Failed', {
    errors: [
      field
        ? { resource: 'PullRequest', code: 'invalid', field }
        : { resource: 'PullRequest', code: 'custom', message },
    ],
  });
}

/** `head` as GitHub takes it: `branch`, or `owner:branch` for the same repository. */
function headBranch(repo: SimRepository, head: string): string | undefined {
  const colon = head.indexOf(':');
  if (colon < 0) return head;
  return head.slice(0, colon).toLowerCase() === repo.owner.toLowerCase() ? head.slice(colon + 1) : undefined;
}

function listPulls(request: RestRequest, repo: SimRepository): RestResponse {
  const { world, searchParams, apiUrl } = request;
  const state = searchParams.get('state') ?? 'open';
  const head = searchParams.get('head');
  const branch = head === null ? undefined : (headBranch(repo, head) ?? '\u0000');
  const base = searchParams.get('base');
  const pulls = [...repo.items.values()]
    .filter((i): i is SimPullRequest => i.__typename === 'PullRequest')
    .filter((pr) => state === 'all' || (state === 'open') === (pr.state === 'OPEN'))
    .filter((pr) => branch === undefined || pr.headRefName === branch)
    .filter((pr) => base === null || pr.baseRefName === base)
    .sort((a, b) => b.number - a.number);
  const perPage = Math.min(100, Math.max(1, Number(searchParams.get('per_page') ?? 30) || 30));
  const page = Math.max(1, Number(searchParams.get('page') ?? 1) || 1);
  const slice = pulls.slice((page - 1) * perPage, page * perPage);
  return { status: 200, body: slice.map((pr) => pullRequestJson(world, pr, apiUrl)) };
}

function createPull(request: RestRequest, repo: SimRepository): RestResponse {
  const { world, apiUrl } = request;
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (typeof body.title !== 'string' || body.title.trim() === '') return invalid('title', 'title');
  if (typeof body.head !== 'string' || typeof body.base !== 'string') return invalid('head', 'head');
  const head = headBranch(repo, body.head);
  if (head === undefined) return invalid('head', 'head');
  const base = body.base;
  const sha = branchSha(repo, head);
  if (repo.gitDir && !sha) return invalid('head', 'head');
  if (repo.gitDir && !branchSha(repo, base)) return invalid('base', 'base');
  const duplicate = [...repo.items.values()].find(
    (i) =>
      i.__typename === 'PullRequest' &&
      i.state === 'OPEN' &&
      i.headRefName === head &&
      i.baseRefName === base,
  );
  if (duplicate) return invalid(`A pull request already exists for ${repo.owner}:${head}.`);
  const comparison = compare(repo, base, head);
  if (comparison && comparison.commits === 0) return invalid(`No commits between ${base} and ${head}`);
  const text = typeof body.body === 'string' ? body.body : '';
  const pr = world.addPullRequest(repo.nameWithOwner, {
    title: body.title,
    body: text,
    author: request.viewer.login,
    headRefName: head,
    baseRefName: base,
    draft: body.draft === true,
    ...(sha ? { headRefOid: sha } : {}),
    closingIssues: closingIssues(world, repo.nameWithOwner, text),
  });
  return {
    status: 201,
    body: pullRequestJson(world, pr, apiUrl),
    headers: { location: `${apiUrl}/repos/${repo.nameWithOwner}/pulls/${pr.number}` },
  };
}

function patchPull(request: RestRequest, pr: SimPullRequest): RestResponse {
  const { world, apiUrl } = request;
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (typeof body.title === 'string') pr.title = body.title;
  if (typeof body.body === 'string') {
    pr.body = body.body;
    pr.closingIssues = closingIssues(world, pr.repo, body.body);
  }
  if (typeof body.base === 'string') pr.baseRefName = body.base;
  if (body.state === 'closed' && pr.state === 'OPEN') world.closePullRequest(pr.repo, pr.number);
  if (body.state === 'open' && pr.state === 'CLOSED') {
    pr.state = 'OPEN';
    pr.closedAt = null;
  }
  pr.updatedAt = world.timestamp();
  return { status: 200, body: pullRequestJson(world, pr, apiUrl) };
}

export function pullsRoute(request: RestRequest, repo: SimRepository, rest: string[]): RestResponse {
  const { method, world } = request;
  if (rest.length === 0) {
    if (method === 'GET') return listPulls(request, repo);
    if (method === 'POST') return createPull(request, repo);
    return restError(404, 'Not Found');
  }
  if (rest.length > 2 || !/^\d+$/.test(rest[0]!)) return restError(404, 'Not Found');
  const pr = world.pullRequest(repo.nameWithOwner, Number(rest[0]));
  if (!pr) return restError(404, 'Not Found');
  if (rest.length === 2) return mergingRoute(request, repo, pr, rest[1]!) ?? restError(404, 'Not Found');
  if (method === 'GET') return { status: 200, body: pullRequestJson(world, pr, request.apiUrl) };
  if (method === 'PATCH') return patchPull(request, pr);
  return restError(404, 'Not Found');
}
