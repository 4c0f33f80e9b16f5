/**
 * The REST reads of the GitHub port: one named operation per request curupira sends, each building
 * its path here and typed with GitHub's published shapes (`@octokit/openapi-types`). Features call
 * these and never spell a path (test/architecture/github-port.test.ts fails on a `/repos/` literal
 * outside src/github/). Writes are elsewhere in this folder: the durable queue (write-queue.ts) and
 * the few that must happen at once (direct-writes.ts).
 *
 * Each operation takes a `RestReader`: the client, or a wrapper that also reads the answer's
 * headers (the leases take GitHub's clock from `date`).
 */
import type { components } from '@octokit/openapi-types';
import type { GitHubClient } from './client.js';

export type Schemas = components['schemas'];

/** A schema as `JSON.parse` returns it: the ids the schema types `number | bigint` are numbers. */
export type Json<T> = T extends bigint
  ? never
  : T extends readonly (infer U)[]
    ? Json<U>[]
    : T extends object
      ? { [K in keyof T]: Json<T[K]> }
      : T;

/** What the operations need of a client: one REST request. */
export type RestReader = Pick<GitHubClient, 'rest'>;

/**
 * The client as a `RestReader` that hands GitHub's clock (each answer's `date` header, epoch ms) to
 * `onDate`: the leases measure expiries by it.
 */
export function withServerDate(
  client: Pick<GitHubClient, 'restResponse'>,
  onDate: (epochMs: number) => void,
): RestReader {
  return {
    async rest<T>(
      method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
      path: string,
      body?: Record<string, unknown>,
    ): Promise<T> {
      const answer = await client.restResponse<T>(method, path, body);
      const date = Date.parse(answer.headers.date ?? answer.headers.Date ?? '');
      if (!Number.isNaN(date)) onDate(date);
      return answer.data;
    },
  };
}

/** `/repos/{owner}/{name}` of `owner/name`. */
export function repoPath(repo: string): string {
  const [owner, name] = repo.split('/');
  return `/repos/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}`;
}

/** `/repos/{owner}/{name}/issues/{number}`: an issue or a pull request as an issue. */
export function issuePath(repo: string, number: number | string): string {
  return `${repoPath(repo)}/issues/${number}`;
}

/** A branch name in a path: each segment encoded, the slashes kept (GitHub reads them so). */
export function refPath(ref: string): string {
  return ref.split('/').map(encodeURIComponent).join('/');
}

/** One page of a list, 100 to a page. */
function page(path: string, number: number): string {
  return `${path}?per_page=100&page=${number}`;
}

// ---- the account and the repository -------------------------------------------------------------

/** `GET /user`: the token's own account. */
export function getAuthenticatedUser(
  client: RestReader,
): Promise<Json<Pick<Schemas['public-user'], 'login'>>> {
  return client.rest('GET', '/user');
}

/** `GET /repos/{o}/{r}`. */
export function getRepository(
  client: RestReader,
  repo: string,
): Promise<Json<Pick<Schemas['full-repository'], 'default_branch'>>> {
  return client.rest('GET', repoPath(repo));
}

/** `GET /repos/{o}/{r}/collaborators/{login}/permission`. */
export function getCollaboratorPermission(
  client: RestReader,
  repo: string,
  login: string,
): Promise<Json<Pick<Schemas['repository-collaborator-permission'], 'permission'>>> {
  return client.rest('GET', `${repoPath(repo)}/collaborators/${encodeURIComponent(login)}/permission`);
}

/**
 * The change probe of a repository: its most recently updated issue or pull request, which changes
 * whenever any of them changes, asked with the last ETag (a 304 costs nothing).
 */
export function probeIssueChanges(
  client: Pick<GitHubClient, 'conditionalGet'>,
  repo: string,
  etag: string | undefined,
): Promise<{ changed: boolean; etag: string | undefined }> {
  return client.conditionalGet(
    `${repoPath(repo)}/issues?state=all&sort=updated&direction=desc&per_page=1`,
    etag,
  );
}

// ---- issues, comments, labels --------------------------------------------------------------------

/** `GET /repos/{o}/{r}/issues/{n}`. */
export function getIssue(
  client: RestReader,
  repo: string,
  number: number,
): Promise<Json<Pick<Schemas['issue'], 'number' | 'state' | 'labels'>>> {
  return client.rest('GET', issuePath(repo, number));
}

/** `GET /repos/{o}/{r}/issues/{n}/labels` (the first 100). */
export function listIssueLabels(
  client: RestReader,
  repo: string,
  number: number | string,
): Promise<Json<Pick<Schemas['label'], 'name'>[]>> {
  return client.rest('GET', `${issuePath(repo, number)}/labels?per_page=100`);
}

/** `GET /repos/{o}/{r}/issues/{n}/comments`, one page of 100. */
export function listIssueComments(
  client: RestReader,
  repo: string,
  number: number | string,
  pageNumber: number,
): Promise<Json<Schemas['issue-comment'][]>> {
  return client.rest('GET', page(`${issuePath(repo, number)}/comments`, pageNumber));
}

/** `GET /repos/{o}/{r}/issues?state=all&creator=…[&labels=…]`, one page of 100. */
export function listIssuesByCreator(
  client: RestReader,
  repo: string,
  filter: { creator: string; label?: string | undefined },
  pageNumber: number,
): Promise<Json<Pick<Schemas['issue'], 'number' | 'body' | 'user'>[]>> {
  const label = filter.label ? `&labels=${encodeURIComponent(filter.label)}` : '';
  const query = `state=all&creator=${encodeURIComponent(filter.creator)}${label}`;
  return client.rest('GET', `${repoPath(repo)}/issues?${query}&per_page=100&page=${pageNumber}`);
}

/** `GET /repos/{o}/{r}/issues?state=closed`, most recently updated first (pull requests included). */
export function listClosedIssues(
  client: RestReader,
  repo: string,
  pageNumber: number,
): Promise<
  Json<
    Pick<
      Schemas['issue'],
      'number' | 'title' | 'html_url' | 'closed_at' | 'updated_at' | 'state_reason' | 'pull_request'
    >[]
  >
> {
  return client.rest(
    'GET',
    `${repoPath(repo)}/issues?state=closed&sort=updated&direction=desc&per_page=100&page=${pageNumber}`,
  );
}

/** `GET /repos/{o}/{r}/labels/{name}` (a 404 when the repository lacks it). */
export function getLabel(client: RestReader, repo: string, name: string): Promise<Json<Schemas['label']>> {
  return client.rest('GET', `${repoPath(repo)}/labels/${encodeURIComponent(name)}`);
}

// ---- pull requests -------------------------------------------------------------------------------

/** `GET /repos/{o}/{r}/pulls?head=owner:branch&state=open` (the first 10). */
export function listOpenPullsByHead(
  client: RestReader,
  repo: string,
  branch: string,
): Promise<Json<Schemas['pull-request-simple'][]>> {
  const owner = repo.split('/')[0] ?? '';
  const head = encodeURIComponent(`${owner}:${branch}`);
  return client.rest('GET', `${repoPath(repo)}/pulls?head=${head}&state=open&per_page=10`);
}

/** `GET /repos/{o}/{r}/pulls/{n}`. */
export function getPull(
  client: RestReader,
  repo: string,
  number: number,
): Promise<Json<Schemas['pull-request']>> {
  return client.rest('GET', `${repoPath(repo)}/pulls/${number}`);
}

/** `GET /repos/{o}/{r}/pulls/{n}/reviews`, one page of 100 (the first when `pageNumber` is omitted). */
export function listPullReviews(
  client: RestReader,
  repo: string,
  number: number,
  pageNumber?: number,
): Promise<Json<Schemas['pull-request-review'][]>> {
  const path = `${repoPath(repo)}/pulls/${number}/reviews`;
  return client.rest('GET', pageNumber === undefined ? `${path}?per_page=100` : page(path, pageNumber));
}

/** `GET /repos/{o}/{r}/pulls/{n}/comments` (inline review comments), one page of 100. */
export function listPullReviewComments(
  client: RestReader,
  repo: string,
  number: number,
  pageNumber: number,
): Promise<Json<Schemas['pull-request-review-comment'][]>> {
  return client.rest('GET', page(`${repoPath(repo)}/pulls/${number}/comments`, pageNumber));
}

/** `GET /repos/{o}/{r}/pulls/{n}/files`, one page of 100. */
export function listPullFiles(
  client: RestReader,
  repo: string,
  number: number,
  pageNumber: number,
): Promise<Json<Pick<Schemas['diff-entry'], 'filename'>[]>> {
  return client.rest('GET', page(`${repoPath(repo)}/pulls/${number}/files`, pageNumber));
}

/** `GET /repos/{o}/{r}/compare/{base}...{head}`: `base` and `head` are branch names or commits. */
export function compareCommits<T = Json<Schemas['commit-comparison']>>(
  client: RestReader,
  repo: string,
  base: string,
  head: string,
): Promise<T> {
  return client.rest('GET', `${repoPath(repo)}/compare/${refPath(base)}...${refPath(head)}`);
}

// ---- commits -------------------------------------------------------------------------------------

/** The parts of a `commit` the commit trigger reads (the list leaves out `files` and `stats`). */
export type CommitEntry = Json<
  Pick<Schemas['commit'], 'sha' | 'html_url' | 'parents' | 'stats' | 'files'> & {
    commit: Pick<Schemas['commit']['commit'], 'message' | 'author'>;
    author: Pick<Schemas['simple-user'], 'login'> | null;
  }
>;

/** `GET /repos/{o}/{r}/commits?sha=&path=&per_page=`: the newest `count` commits of `sha`, newest first. */
export function listCommits<T = CommitEntry>(
  client: RestReader,
  repo: string,
  options: { sha: string; path?: string | undefined; count: number },
): Promise<T[]> {
  const params = new URLSearchParams({ sha: options.sha, per_page: String(options.count) });
  if (options.path !== undefined) params.set('path', options.path);
  return client.rest('GET', `${repoPath(repo)}/commits?${params}`);
}

/** `GET /repos/{o}/{r}/commits/{sha}`: one commit with its `files` and `stats`. */
export function getCommit<T = CommitEntry>(client: RestReader, repo: string, sha: string): Promise<T> {
  return client.rest('GET', `${repoPath(repo)}/commits/${encodeURIComponent(sha)}`);
}

/** `GET /repos/{o}/{r}/branches/{branch}`: the branch and its head commit. */
export function getBranch(
  client: RestReader,
  repo: string,
  branch: string,
): Promise<Json<{ commit: Pick<Schemas['branch-with-protection']['commit'], 'sha'> }>> {
  return client.rest('GET', `${repoPath(repo)}/branches/${encodeURIComponent(branch)}`);
}

// ---- checks and Actions --------------------------------------------------------------------------

/** `GET /repos/{o}/{r}/branches/{branch}/protection/required_status_checks`. */
export function getRequiredStatusChecks(
  client: RestReader,
  repo: string,
  branch: string,
): Promise<Json<Pick<Schemas['status-check-policy'], 'contexts' | 'checks'>>> {
  return client.rest(
    'GET',
    `${repoPath(repo)}/branches/${encodeURIComponent(branch)}/protection/required_status_checks`,
  );
}

export type CheckRun = Json<Schemas['check-run']>;

/** `GET /repos/{o}/{r}/commits/{sha}/check-runs`, one page of 100. */
export function listCheckRunsForRef(
  client: RestReader,
  repo: string,
  sha: string,
  pageNumber: number,
): Promise<{ total_count: number; check_runs: CheckRun[] }> {
  return client.rest('GET', page(`${repoPath(repo)}/commits/${sha}/check-runs`, pageNumber));
}

/** `GET /repos/{o}/{r}/commits/{sha}/status` (the first 100 statuses). */
export function getCombinedStatus(
  client: RestReader,
  repo: string,
  sha: string,
): Promise<Json<Pick<Schemas['combined-commit-status'], 'statuses'>>> {
  return client.rest('GET', `${repoPath(repo)}/commits/${sha}/status?per_page=100`);
}

/** `GET /repos/{o}/{r}/actions/jobs/{id}`. */
export function getActionsJob(
  client: RestReader,
  repo: string,
  jobId: number,
): Promise<Json<Pick<Schemas['job'], 'run_id'>>> {
  return client.rest('GET', `${repoPath(repo)}/actions/jobs/${jobId}`);
}

/** `GET /repos/{o}/{r}/actions/jobs/{id}/logs`: the log's text (or bytes), after GitHub's redirect. */
export function downloadJobLogs(client: RestReader, repo: string, jobId: number): Promise<unknown> {
  return client.rest('GET', `${repoPath(repo)}/actions/jobs/${jobId}/logs`);
}
