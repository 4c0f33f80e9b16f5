/**
 * The JSON shapes and response helpers every REST route module shares (users, issues, errors,
 * pages). Apart from rest.ts, which routes to those modules, so that they do not import each other.
 */
import type { components } from '@octokit/openapi-types';
import { HTML_BASE } from './ids.js';
import type { SimActor, SimIssueOrPullRequest, SimLabel, SimMilestone, SimWorld } from './world.js';

export const REST_DOCS = 'https://docs.github.com/rest';

type Schemas = components['schemas'];
/** The user fields the simulator answers (GitHub's `simple-user` has more `*_url` links). */
export type SimUserJson = Pick<
  Schemas['simple-user'],
  'login' | 'id' | 'node_id' | 'avatar_url' | 'gravatar_id' | 'url' | 'html_url' | 'type' | 'site_admin'
>;
export type LabelJson = Schemas['label'];

export interface RestRequest {
  readonly world: SimWorld;
  readonly viewer: SimActor;
  readonly method: string;
  /** Path without the query string, percent-decoding not yet applied. */
  readonly path: string;
  readonly searchParams: URLSearchParams;
  /** Parsed JSON body, or undefined when there was none. */
  readonly body: unknown;
  /** Base URL of the simulator, for the `url` fields. */
  readonly apiUrl: string;
  /** The budgets, for `/rate_limit`. */
  readonly rateLimits?: () => Record<string, unknown>;
}

export interface RestResponse {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

export function restError(
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
): RestResponse {
  return { status, body: { message, ...extra, documentation_url: REST_DOCS, status: String(status) } };
}

export function userJson(actor: SimActor, apiUrl: string): SimUserJson {
  const isBot = actor.__typename === 'Bot';
  return {
    login: actor.login,
    id: actor.databaseId,
    node_id: actor.id,
    avatar_url: `https://avatars.githubusercontent.com/u/${actor.databaseId}?v=4`,
    gravatar_id: '',
    url: `${apiUrl}/users/${encodeURIComponent(actor.login)}`,
    html_url: isBot
      ? `${HTML_BASE}/apps/${actor.login.replace(/\[bot\]$/, '')}`
      : `${HTML_BASE}/${actor.login}`,
    type: isBot ? 'Bot' : 'User',
    site_admin: false,
  };
}

export function labelJson(label: SimLabel, apiUrl: string): LabelJson {
  return {
    id: label.databaseId,
    node_id: label.id,
    url: `${apiUrl}/repos/${label.repo}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    color: label.color,
    default: false,
    description: label.description,
  };
}

function milestoneJson(world: SimWorld, milestone: SimMilestone, apiUrl: string): Record<string, unknown> {
  const repo = world.repo(milestone.repo);
  const items = [...(repo?.items.values() ?? [])].filter((i) => i.milestone === milestone.number);
  return {
    url: `${apiUrl}/repos/${milestone.repo}/milestones/${milestone.number}`,
    html_url: `${HTML_BASE}/${milestone.repo}/milestone/${milestone.number}`,
    id: milestone.databaseId,
    node_id: milestone.id,
    number: milestone.number,
    title: milestone.title,
    description: milestone.description,
    state: milestone.state.toLowerCase(),
    open_issues: items.filter((i) => i.state === 'OPEN').length,
    closed_issues: items.filter((i) => i.state !== 'OPEN').length,
    created_at: milestone.createdAt,
    updated_at: milestone.createdAt,
    due_on: milestone.dueOn,
    closed_at: null,
  };
}

export function association(world: SimWorld, repo: string, login: string): string {
  return world.association(repo, login);
}

export function issueJson(
  world: SimWorld,
  item: SimIssueOrPullRequest,
  apiUrl: string,
): Record<string, unknown> {
  const api = `${apiUrl}/repos/${item.repo}/issues/${item.number}`;
  const isPr = item.__typename === 'PullRequest';
  const html = `${HTML_BASE}/${item.repo}/${isPr ? 'pull' : 'issues'}/${item.number}`;
  const assignees = item.assignees.map((login) =>
    userJson(world.actor(login) ?? world.addUser(login), apiUrl),
  );
  const milestone = item.milestone === null ? undefined : world.milestone(item.repo, item.milestone);
  const json: Record<string, unknown> = {
    url: api,
    repository_url: `${apiUrl}/repos/${item.repo}`,
    labels_url: `${api}/labels{/name}`,
    comments_url: `${api}/comments`,
    events_url: `${api}/events`,
    html_url: html,
    id: item.databaseId,
    node_id: item.id,
    number: item.number,
    title: item.title,
    user: userJson(world.actor(item.author) ?? world.addUser(item.author), apiUrl),
    labels: item.labels
      .map((name) => world.label(item.repo, name))
      .filter((l): l is SimLabel => l !== undefined)
      .map((l) => labelJson(l, apiUrl)),
    state: item.state === 'OPEN' ? 'open' : 'closed',
    locked: item.locked,
    assignee: assignees[0] ?? null,
    assignees,
    milestone: milestone ? milestoneJson(world, milestone, apiUrl) : null,
    comments: item.comments.length,
    created_at: item.createdAt,
    updated_at: item.updatedAt,
    closed_at: item.closedAt,
    author_association: association(world, item.repo, item.author),
    active_lock_reason: null,
    body: item.body === '' ? null : item.body,
    timeline_url: `${api}/timeline`,
    performed_via_github_app: null,
    state_reason: item.__typename === 'Issue' ? (item.stateReason?.toLowerCase() ?? null) : null,
  };
  if (item.__typename === 'PullRequest') {
    json.draft = item.isDraft;
    json.pull_request = {
      url: `${apiUrl}/repos/${item.repo}/pulls/${item.number}`,
      html_url: html,
      diff_url: `${html}.diff`,
      patch_url: `${html}.patch`,
      merged_at: item.mergedAt,
    };
  }
  return json;
}

/** `?per_page=&page=` over a list, with GitHub's `Link` header when there are more pages. */
export function paged<T>(
  items: readonly T[],
  request: RestRequest,
): { page: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(request.searchParams.get('per_page') ?? 30) || 30));
  const page = Math.max(1, Number(request.searchParams.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (n: number, rel: string) =>
    `<${request.apiUrl}${request.path}?per_page=${perPage}&page=${n}>; rel="${rel}"`;
  const links: string[] = [];
  if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
  if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
  return {
    page: items.slice((page - 1) * perPage, page * perPage),
    headers: links.length > 0 ? { link: links.join(', ') } : {},
  };
}
