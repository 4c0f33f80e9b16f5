/**
 * The writes that cannot wait for the durable queue (write-queue.ts), all sent through `sendNow`
 * below: the one path around the queue. docs/github-writes.md lists them with the same reasons.
 *
 * Each is here because its caller must know the answer before going on, and each has a guard that
 * makes a repeat (after a crash, a retry or a second host) harmless:
 *
 * - `createPullRequest` (delivery): the run's record says "delivered" only with the pull request's
 *   number. Guard: delivery first looks for the open pull request of the branch and adopts it
 *   (`listOpenPullsByHead`), and the body carries the run's hidden marker.
 * - `updatePullRequestBody` (delivery of a multi-repository task): each pull request's body links
 *   the others once all are open. Guard: the body is read first and sent only when its linked
 *   section differs; the same section twice is the same body.
 * - `mergePullRequest` (follow-up): the merge's sha decides what happens next. Guard: the head sha
 *   is pinned (GitHub refuses when the head moved), and the outcome is a mark per head sha that is
 *   read before asking again; a merged pull request refuses a second merge.
 * - `updatePullRequestBranch` (follow-up): pinned to `expected_head_sha`, with a pending mark set
 *   before and a requested mark after; GitHub refuses a repeat once the head moved.
 * - `rerunFailedJobs` (follow-up): a mark per head sha is stored before the request, so a process
 *   killed half-way re-runs nothing twice.
 * - `createIssueComment`, `updateIssueComment`, `deleteIssueComment` (leases): the agent must not
 *   start before the claim is confirmed, and a claim that fails now is simply not made. Guard: the
 *   lease protocol reads the item's lease comments before posting and after (the older live lease
 *   wins; the loser deletes its own), and edits and deletes address one comment id. Releases go
 *   through the queue (`editOnly`).
 *
 * Pushes are git, not REST: src/delivery/push.ts pushes without force, so a repeat is a no-op.
 */
import type { GitHubClient } from './client.js';
import { issuePath, type Json, repoPath, type Schemas } from './rest.js';

/** What the direct writes need of a client. */
export type RestWriter = Pick<GitHubClient, 'rest'>;

/** The one request path around the queue. */
function sendNow<T>(
  client: RestWriter,
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  body?: Record<string, unknown>,
): Promise<T> {
  return client.rest<T>(method, path, body);
}

export interface NewPullRequest {
  title: string;
  body: string;
  head: string;
  base: string;
  draft: boolean;
}

/** `POST /repos/{o}/{r}/pulls`. */
export function createPullRequest(
  client: RestWriter,
  repo: string,
  pr: NewPullRequest,
): Promise<Json<Schemas['pull-request']>> {
  return sendNow(client, 'POST', `${repoPath(repo)}/pulls`, {
    title: pr.title,
    body: pr.body,
    head: pr.head,
    base: pr.base,
    draft: pr.draft,
  });
}

/** `PATCH /repos/{o}/{r}/pulls/{n}` with a new body. */
export function updatePullRequestBody(
  client: RestWriter,
  repo: string,
  number: number,
  body: string,
): Promise<Json<Pick<Schemas['pull-request'], 'number' | 'body'>>> {
  return sendNow(client, 'PATCH', `${repoPath(repo)}/pulls/${number}`, { body });
}

/** `PUT /repos/{o}/{r}/pulls/{n}/merge`, pinned to the head `sha`. */
export function mergePullRequest(
  client: RestWriter,
  repo: string,
  number: number,
  merge: { method: string; sha: string },
): Promise<Json<Pick<Schemas['pull-request-merge-result'], 'sha' | 'merged'>>> {
  return sendNow(client, 'PUT', `${repoPath(repo)}/pulls/${number}/merge`, {
    merge_method: merge.method,
    sha: merge.sha,
  });
}

/** `PUT /repos/{o}/{r}/pulls/{n}/update-branch`, pinned to `expectedHeadSha`. */
export function updatePullRequestBranch(
  client: RestWriter,
  repo: string,
  number: number,
  expectedHeadSha: string,
): Promise<unknown> {
  return sendNow(client, 'PUT', `${repoPath(repo)}/pulls/${number}/update-branch`, {
    expected_head_sha: expectedHeadSha,
  });
}

/** `POST /repos/{o}/{r}/actions/runs/{id}/rerun-failed-jobs`. */
export function rerunFailedJobs(client: RestWriter, repo: string, workflowRunId: number): Promise<unknown> {
  return sendNow(client, 'POST', `${repoPath(repo)}/actions/runs/${workflowRunId}/rerun-failed-jobs`);
}

/** `POST /repos/{o}/{r}/issues/{n}/comments` (a lease claim). */
export function createIssueComment(
  client: RestWriter,
  repo: string,
  number: number,
  body: string,
): Promise<Json<Pick<Schemas['issue-comment'], 'id'>>> {
  return sendNow(client, 'POST', `${issuePath(repo, number)}/comments`, { body });
}

/** `PATCH /repos/{o}/{r}/issues/comments/{id}` (a lease taken back or renewed). */
export function updateIssueComment(
  client: RestWriter,
  repo: string,
  commentId: number,
  body: string,
): Promise<unknown> {
  return sendNow(client, 'PATCH', `${repoPath(repo)}/issues/comments/${commentId}`, { body });
}

/** `DELETE /repos/{o}/{r}/issues/comments/{id}` (a lease that lost the race). */
export function deleteIssueComment(client: RestWriter, repo: string, commentId: number): Promise<unknown> {
  return sendNow(client, 'DELETE', `${repoPath(repo)}/issues/comments/${commentId}`);
}
