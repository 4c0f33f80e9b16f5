/**
 * CI on the simulated GitHub (issue 13): check runs, commit statuses, the Actions jobs behind check
 * runs (with their logs and "re-run failed jobs"), and branch protection's required checks.
 *
 *   POST   /repos/{o}/{r}/check-runs                         { name, head_sha, status?, conclusion?,
 *                                                            details_url?, external_id?, output? } → 201
 *   GET    /repos/{o}/{r}/check-runs/{id}                    one check run
 *   PATCH  /repos/{o}/{r}/check-runs/{id}                    { status?, conclusion?, output?, … }
 *   GET    /repos/{o}/{r}/commits/{ref}/check-runs           { total_count, check_runs } (filter=latest|all,
 *                                                            check_name, status, per_page, page)
 *   POST   /repos/{o}/{r}/statuses/{sha}                     { state, context?, target_url?, description? } → 201
 *   GET    /repos/{o}/{r}/commits/{ref}/status               combined: the latest status per context
 *   GET    /repos/{o}/{r}/commits/{ref}/statuses             every status, newest first
 *   GET    /repos/{o}/{r}/actions/jobs/{job_id}              the job behind a check run (same id, as on GitHub)
 *   GET    /repos/{o}/{r}/actions/jobs/{job_id}/logs         302 to a download URL of this simulator
 *                                                            (`/_simulator/job-logs/…`, no token needed,
 *                                                            like GitHub's signed URLs) serving text/plain
 *   POST   /repos/{o}/{r}/actions/runs/{run_id}/rerun-failed-jobs   201; the failed jobs (and their
 *                                                            check runs) are queued again, attempt + 1
 *   GET    /repos/{o}/{r}/branches/{branch}                       the branch and its head commit
 *   GET    /repos/{o}/{r}/branches/{branch}/protection/required_status_checks
 *                                                            `status-check-policy`; 404 "Branch not
 *                                                            protected"; 403 when set unreadable
 *
 * `{ref}` is a commit sha, a branch of the backing bare repository, or the head branch of a pull
 * request the world knows; anything else is GitHub's 422 "No commit found for SHA". Shapes follow
 * `@octokit/openapi-types` (`check-run`, `job`, `status`, `combined-commit-status`,
 * `status-check-policy`). Tests script CI with `simChecks(world)`.
 */
import type { components } from '@octokit/openapi-types';
import { branchSha } from './branches.js';
import { HTML_BASE, sha1Hex } from './ids.js';
import { paged, type RestRequest, type RestResponse, restError, userJson } from './rest-json.js';
import type { SimPullRequest, SimRepository, SimWorld } from './world.js';

type Schemas = components['schemas'];

export type CheckStatus = 'queued' | 'in_progress' | 'completed';
export type CheckConclusion = NonNullable<Schemas['check-run']['conclusion']>;
export type CommitState = 'error' | 'failure' | 'pending' | 'success';

/** The GitHub App that made a check run (`github-actions` for the ones backed by Actions jobs). */
export interface SimApp {
  id: number;
  slug: string;
  name: string;
  owner: string;
}

export const GITHUB_ACTIONS_APP: SimApp = {
  id: 15368,
  slug: 'github-actions',
  name: 'GitHub Actions',
  owner: 'github',
};

/** The Actions job behind a check run (its id is the check run's, as on GitHub). */
export interface SimJob {
  runId: number;
  runAttempt: number;
  /** The job's log (plain text, as GitHub's download serves it); empty until it has one. */
  log: string;
}

export interface SimCheckRun {
  readonly id: number;
  readonly nodeId: string;
  readonly repo: string;
  name: string;
  headSha: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  startedAt: string | null;
  completedAt: string | null;
  detailsUrl: string | null;
  externalId: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  app: SimApp;
  job?: SimJob;
}

export interface SimCommitStatus {
  readonly id: number;
  readonly nodeId: string;
  readonly sha: string;
  state: CommitState;
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: string;
  createdAt: string;
  updatedAt: string;
}

export interface CheckRunInput {
  name: string;
  headSha: string;
  /** Default `completed` when a conclusion is given, else `queued`. */
  status?: CheckStatus;
  conclusion?: CheckConclusion | null;
  detailsUrl?: string | null;
  externalId?: string | null;
  output?: { title?: string | null; summary?: string | null; text?: string | null };
  /** Default `github-actions` when `job` is given, else a `ci` app. */
  app?: SimApp;
  /** Backs the check run with an Actions job of workflow run `runId` (default: a new run id). */
  job?: { runId?: number; log?: string };
}

export interface StatusInput {
  state: CommitState;
  context?: string;
  description?: string | null;
  targetUrl?: string | null;
  creator?: string;
}

interface RepoChecks {
  checkRuns: SimCheckRun[];
  statuses: SimCommitStatus[];
  /** Branch → required contexts (check run names and status contexts). */
  required: Map<string, { contexts: string[]; strict: boolean }>;
  /** When true, reading branch protection answers 403 (a token without administration: read). */
  protectionForbidden: boolean;
}

const CI_APP: SimApp = { id: 90_001, slug: 'ci', name: 'CI', owner: 'acme-ci' };

const FAILED: readonly CheckConclusion[] = ['failure', 'cancelled', 'timed_out', 'action_required'];

interface WorldChecks {
  seq: number;
  runSeq: number;
  repos: Map<string, RepoChecks>;
}

const byWorld = new WeakMap<SimWorld, WorldChecks>();

function stateOf(world: SimWorld): WorldChecks {
  let state = byWorld.get(world);
  if (!state) {
    state = { seq: 7_000_000, runSeq: 9_000_000, repos: new Map() };
    byWorld.set(world, state);
  }
  return state;
}

function repoChecks(world: SimWorld, repo: string): RepoChecks {
  const state = stateOf(world);
  const key = repo.toLowerCase();
  let checks = state.repos.get(key);
  if (!checks) {
    checks = { checkRuns: [], statuses: [], required: new Map(), protectionForbidden: false };
    state.repos.set(key, checks);
  }
  return checks;
}

function nextId(world: SimWorld): number {
  const state = stateOf(world);
  state.seq += 1;
  return state.seq;
}

function nextRunId(world: SimWorld): number {
  const state = stateOf(world);
  state.runSeq += 1;
  return state.runSeq;
}

/** Scripting CI in a world: check runs (optionally backed by Actions jobs), statuses, required checks. */
export interface SimChecks {
  addCheckRun(repo: string, input: CheckRunInput): SimCheckRun;
  checkRun(repo: string, id: number): SimCheckRun | undefined;
  checkRuns(repo: string): readonly SimCheckRun[];
  /** Completes (or moves) a check run, and its job: a new log replaces the old one. */
  updateCheckRun(
    repo: string,
    id: number,
    patch: Partial<Pick<SimCheckRun, 'status' | 'conclusion'>> & {
      output?: CheckRunInput['output'];
      log?: string;
    },
  ): SimCheckRun;
  /**
   * Completes the jobs of workflow run `runId` still queued or in progress (after a re-run) with
   * `conclusion`, and a new log when given. Returns the check runs it completed.
   */
  completeJobs(
    repo: string,
    runId: number,
    conclusion: CheckConclusion,
    options?: { log?: string; output?: CheckRunInput['output'] },
  ): SimCheckRun[];
  setStatus(repo: string, sha: string, input: StatusInput): SimCommitStatus;
  statuses(repo: string): readonly SimCommitStatus[];
  /** The required checks of `branch`'s protection; `null` unprotects it (reads answer 404). */
  setRequiredChecks(repo: string, branch: string, contexts: readonly string[] | null, strict?: boolean): void;
  /** Reading branch protection answers 403 (true) or as set (false). */
  setProtectionForbidden(repo: string, forbidden: boolean): void;
  /** GitHub's rollup of a commit: `SUCCESS`, `FAILURE`, `PENDING`, or null without checks or statuses. */
  rollup(repo: string, sha: string): 'SUCCESS' | 'FAILURE' | 'PENDING' | null;
  /** What the rollup of a commit is made of: the latest check run per (app, name), status per context. */
  latest(repo: string, sha: string): { checkRuns: SimCheckRun[]; statuses: SimCommitStatus[] };
  /** The required contexts of `branch`'s protection; undefined when it is not protected. */
  requiredContexts(repo: string, branch: string): readonly string[] | undefined;
}

export function simChecks(world: SimWorld): SimChecks {
  const api: SimChecks = {
    addCheckRun(repo, input) {
      const id = nextId(world);
      const now = world.timestamp();
      const status = input.status ?? (input.conclusion ? 'completed' : 'queued');
      const job = input.job
        ? {
            runId: input.job.runId ?? nextRunId(world),
            runAttempt: 1,
            log: input.job.log ?? '',
          }
        : undefined;
      const run: SimCheckRun = {
        id,
        nodeId: `CR_kwDOSIM${Buffer.from(`CheckRun:${id}`).toString('base64url')}`,
        repo,
        name: input.name,
        headSha: input.headSha,
        status,
        conclusion: status === 'completed' ? (input.conclusion ?? 'success') : null,
        startedAt: status === 'queued' ? null : now,
        completedAt: status === 'completed' ? now : null,
        detailsUrl:
          input.detailsUrl !== undefined
            ? input.detailsUrl
            : job
              ? `${HTML_BASE}/${repo}/actions/runs/${job.runId}/job/${id}`
              : null,
        externalId: input.externalId ?? null,
        output: {
          title: input.output?.title ?? null,
          summary: input.output?.summary ?? null,
          text: input.output?.text ?? null,
        },
        app: input.app ?? (job ? GITHUB_ACTIONS_APP : CI_APP),
        ...(job ? { job } : {}),
      };
      repoChecks(world, repo).checkRuns.push(run);
      return run;
    },
    checkRun(repo, id) {
      return repoChecks(world, repo).checkRuns.find((c) => c.id === id);
    },
    checkRuns(repo) {
      return repoChecks(world, repo).checkRuns;
    },
    updateCheckRun(repo, id, patch) {
      const run = api.checkRun(repo, id);
      if (!run) throw new Error(`no check run ${id} in ${repo}`);
      applyPatch(world, run, patch);
      if (patch.log !== undefined && run.job) run.job.log = patch.log;
      return run;
    },
    completeJobs(repo, runId, conclusion, options = {}) {
      const done: SimCheckRun[] = [];
      for (const run of repoChecks(world, repo).checkRuns) {
        if (run.job?.runId !== runId || run.status === 'completed') continue;
        applyPatch(world, run, {
          status: 'completed',
          conclusion,
          ...(options.output ? { output: options.output } : {}),
        });
        if (options.log !== undefined) run.job.log = options.log;
        done.push(run);
      }
      return done;
    },
    setStatus(repo, sha, input) {
      const id = nextId(world);
      const now = world.timestamp();
      const status: SimCommitStatus = {
        id,
        nodeId: `SC_kwDOSIM${Buffer.from(`StatusContext:${id}`).toString('base64url')}`,
        sha,
        state: input.state,
        context: input.context ?? 'default',
        description: input.description ?? null,
        targetUrl: input.targetUrl ?? null,
        creator: world.addUser(input.creator ?? 'ci-bot').login,
        createdAt: now,
        updatedAt: now,
      };
      repoChecks(world, repo).statuses.push(status);
      return status;
    },
    statuses(repo) {
      return repoChecks(world, repo).statuses;
    },
    setRequiredChecks(repo, branch, contexts, strict = false) {
      const checks = repoChecks(world, repo);
      if (contexts === null) checks.required.delete(branch);
      else checks.required.set(branch, { contexts: [...contexts], strict });
    },
    setProtectionForbidden(repo, forbidden) {
      repoChecks(world, repo).protectionForbidden = forbidden;
    },
    latest(repo, sha) {
      return {
        checkRuns: latestCheckRuns(repoChecks(world, repo).checkRuns.filter((c) => c.headSha === sha)),
        statuses: latestStatuses(repoChecks(world, repo).statuses.filter((s) => s.sha === sha)),
      };
    },
    requiredContexts(repo, branch) {
      return repoChecks(world, repo).required.get(branch)?.contexts;
    },
    rollup(repo, sha) {
      const { checkRuns: runs, statuses } = api.latest(repo, sha);
      if (runs.length === 0 && statuses.length === 0) return null;
      const failed =
        runs.some((r) => r.conclusion !== null && FAILED.includes(r.conclusion)) ||
        statuses.some((s) => s.state === 'failure' || s.state === 'error');
      if (failed) return 'FAILURE';
      const pending =
        runs.some((r) => r.status !== 'completed') || statuses.some((s) => s.state === 'pending');
      return pending ? 'PENDING' : 'SUCCESS';
    },
  };
  return api;
}

function applyPatch(
  world: SimWorld,
  run: SimCheckRun,
  patch: Partial<Pick<SimCheckRun, 'status' | 'conclusion'>> & { output?: CheckRunInput['output'] },
): void {
  const now = world.timestamp();
  const status = patch.status ?? (patch.conclusion ? 'completed' : run.status);
  if (status !== 'queued' && run.startedAt === null) run.startedAt = now;
  run.status = status;
  if (status === 'completed') {
    run.conclusion = patch.conclusion ?? run.conclusion ?? 'success';
    run.completedAt = now;
  } else {
    run.conclusion = null;
    run.completedAt = null;
    if (status === 'queued') run.startedAt = null;
  }
  if (patch.output) {
    if (patch.output.title !== undefined) run.output.title = patch.output.title;
    if (patch.output.summary !== undefined) run.output.summary = patch.output.summary;
    if (patch.output.text !== undefined) run.output.text = patch.output.text;
  }
}

/** The latest check run per (name, app), as `filter=latest` lists them. */
function latestCheckRuns(runs: readonly SimCheckRun[]): SimCheckRun[] {
  const latest = new Map<string, SimCheckRun>();
  for (const run of runs) {
    const key = `${run.app.id}\u0000${run.name}`;
    const seen = latest.get(key);
    if (!seen || seen.id < run.id) latest.set(key, run);
  }
  return [...latest.values()].sort((a, b) => b.id - a.id);
}

/** The latest status per context, newest first. */
function latestStatuses(statuses: readonly SimCommitStatus[]): SimCommitStatus[] {
  const latest = new Map<string, SimCommitStatus>();
  for (const status of statuses) {
    const seen = latest.get(status.context);
    if (!seen || seen.id < status.id) latest.set(status.context, status);
  }
  return [...latest.values()].sort((a, b) => b.id - a.id);
}

// ── JSON shapes ───────────────────────────────────────────────────────────────────────────────

type SimUserJson = ReturnType<typeof userJson>;
/** GitHub's `integration`, with the fields the simulator answers. */
export type AppJson = Pick<
  NonNullable<Schemas['nullable-integration']>,
  | 'id'
  | 'slug'
  | 'node_id'
  | 'name'
  | 'description'
  | 'external_url'
  | 'html_url'
  | 'created_at'
  | 'updated_at'
> & { owner: SimUserJson; permissions: Record<string, string>; events: string[] };
/** GitHub's `check-run`, with the simulator's app shape. */
export type CheckRunJson = Omit<Schemas['check-run'], 'app' | 'pull_requests' | 'deployment'> & {
  app: AppJson;
  pull_requests: { number: number; url: string; id: number }[];
};
/** GitHub's `job`. */
export type JobJson = Pick<
  Schemas['job'],
  | 'id'
  | 'run_id'
  | 'run_url'
  | 'run_attempt'
  | 'node_id'
  | 'head_sha'
  | 'url'
  | 'html_url'
  | 'status'
  | 'conclusion'
  | 'created_at'
  | 'started_at'
  | 'completed_at'
  | 'name'
  | 'check_run_url'
  | 'labels'
  | 'runner_id'
  | 'runner_name'
  | 'runner_group_id'
  | 'runner_group_name'
  | 'workflow_name'
  | 'head_branch'
>;
/** GitHub's `status` (what `POST …/statuses/{sha}` answers). */
export type StatusJson = Omit<Schemas['status'], 'creator'> & { creator: SimUserJson };
export type SimpleStatusJson = Schemas['simple-commit-status'];
export type CombinedStatusJson = Omit<Schemas['combined-commit-status'], 'repository'> & {
  repository: { id: number; node_id: string; name: string; full_name: string };
};
export type StatusCheckPolicyJson = Schemas['status-check-policy'];

function appJson(world: SimWorld, app: SimApp, apiUrl: string): AppJson {
  const at = '2016-01-01T00:00:00Z';
  return {
    id: app.id,
    slug: app.slug,
    node_id: `MDM6QXBw${Buffer.from(String(app.id)).toString('base64url')}`,
    owner: userJson(world.actor(app.owner) ?? world.addUser(app.owner), apiUrl),
    name: app.name,
    description: null,
    external_url: `${HTML_BASE}/apps/${app.slug}`,
    html_url: `${HTML_BASE}/apps/${app.slug}`,
    created_at: at,
    updated_at: at,
    permissions: { checks: 'write', metadata: 'read' },
    events: [],
  };
}

function openPullsAt(repo: SimRepository, sha: string): SimPullRequest[] {
  return [...repo.items.values()].filter(
    (i): i is SimPullRequest =>
      i.__typename === 'PullRequest' &&
      i.state === 'OPEN' &&
      (branchSha(repo, i.headRefName) ?? i.headRefOid) === sha,
  );
}

export function checkRunJson(world: SimWorld, run: SimCheckRun, apiUrl: string): CheckRunJson {
  const repo = world.repo(run.repo);
  const base = `${apiUrl}/repos/${run.repo}`;
  return {
    id: run.id,
    head_sha: run.headSha,
    node_id: run.nodeId,
    external_id: run.externalId,
    url: `${base}/check-runs/${run.id}`,
    html_url: run.job
      ? `${HTML_BASE}/${run.repo}/actions/runs/${run.job.runId}/job/${run.id}`
      : `${HTML_BASE}/${run.repo}/runs/${run.id}`,
    details_url: run.detailsUrl,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: {
      ...run.output,
      annotations_count: 0,
      annotations_url: `${base}/check-runs/${run.id}/annotations`,
    },
    name: run.name,
    check_suite: { id: run.job?.runId ?? run.id },
    app: appJson(world, run.app, apiUrl),
    pull_requests: repo
      ? openPullsAt(repo, run.headSha).map((pr) => ({
          id: pr.databaseId,
          number: pr.number,
          url: `${base}/pulls/${pr.number}`,
        }))
      : [],
  };
}

function jobJson(world: SimWorld, run: SimCheckRun, job: SimJob, apiUrl: string): JobJson {
  const base = `${apiUrl}/repos/${run.repo}`;
  const repo = world.repo(run.repo);
  const branch = repo ? openPullsAt(repo, run.headSha)[0]?.headRefName : undefined;
  return {
    id: run.id,
    run_id: job.runId,
    run_url: `${base}/actions/runs/${job.runId}`,
    run_attempt: job.runAttempt,
    node_id: `CR_kwDOSIM${Buffer.from(`Job:${run.id}`).toString('base64url')}`,
    head_sha: run.headSha,
    url: `${base}/actions/jobs/${run.id}`,
    html_url: `${HTML_BASE}/${run.repo}/actions/runs/${job.runId}/job/${run.id}`,
    status: run.status,
    conclusion: run.conclusion,
    created_at: run.startedAt ?? run.completedAt ?? world.timestamp(),
    started_at: run.startedAt ?? world.timestamp(),
    completed_at: run.completedAt,
    name: run.name,
    check_run_url: `${base}/check-runs/${run.id}`,
    labels: ['ubuntu-latest'],
    runner_id: run.status === 'queued' ? null : 1,
    runner_name: run.status === 'queued' ? null : 'GitHub Actions 1',
    runner_group_id: run.status === 'queued' ? null : 2,
    runner_group_name: run.status === 'queued' ? null : 'GitHub Actions',
    workflow_name: 'CI',
    head_branch: branch ?? null,
  };
}

function statusJson(world: SimWorld, repo: string, status: SimCommitStatus, apiUrl: string): StatusJson {
  return {
    url: `${apiUrl}/repos/${repo}/statuses/${status.sha}`,
    avatar_url: null,
    id: status.id,
    node_id: status.nodeId,
    state: status.state,
    description: status.description,
    target_url: status.targetUrl,
    context: status.context,
    created_at: status.createdAt,
    updated_at: status.updatedAt,
    creator: userJson(world.actor(status.creator) ?? world.addUser(status.creator), apiUrl),
  };
}

function simpleStatusJson(repo: string, status: SimCommitStatus, apiUrl: string): SimpleStatusJson {
  return {
    description: status.description,
    id: status.id,
    node_id: status.nodeId,
    state: status.state,
    context: status.context,
    target_url: status.targetUrl,
    avatar_url: null,
    url: `${apiUrl}/repos/${repo}/statuses/${status.sha}`,
    created_at: status.createdAt,
    updated_at: status.updatedAt,
  };
}

/** GitHub's combined state: failure if any failed or errored, pending if any pending (or none), else success. */
function combinedState(statuses: readonly SimCommitStatus[]): CommitState {
  if (statuses.some((s) => s.state === 'failure' || s.state === 'error')) return 'failure';
  if (statuses.length === 0 || statuses.some((s) => s.state === 'pending')) return 'pending';
  return 'success';
}

// ── routes ────────────────────────────────────────────────────────────────────────────────────

const notFound = (): RestResponse => restError(404, 'Not Found');
const SHA = /^[0-9a-f]{40}$/i;
const CONCLUSIONS: readonly string[] = [
  'action_required',
  'cancelled',
  'failure',
  'neutral',
  'success',
  'skipped',
  'stale',
  'timed_out',
];
const STATUSES: readonly string[] = ['queued', 'in_progress', 'completed'];
const STATES: readonly string[] = ['error', 'failure', 'pending', 'success'];

/** The commit `ref` names: a sha, a branch of the backing repository, or a pull request's head branch. */
function resolveRef(repo: SimRepository, ref: string): string | undefined {
  if (SHA.test(ref)) return ref.toLowerCase();
  const branch = ref.replace(/^refs\/heads\//, '');
  const sha = branchSha(repo, branch);
  if (sha) return sha;
  const pr = [...repo.items.values()]
    .filter((i): i is SimPullRequest => i.__typename === 'PullRequest' && i.headRefName === branch)
    .sort((a, b) => Number(b.state === 'OPEN') - Number(a.state === 'OPEN') || b.number - a.number)[0];
  return pr?.headRefOid;
}

function noCommit(ref: string): RestResponse {
  return restError(422, `No commit found for SHA: ${ref}`);
}

function invalid(resource: string, field: string, code = 'invalid'): RestResponse {
  return restError(422, 'Validation Failed', { errors: [{ resource, code, field }] });
}

type OutputBody = { title?: unknown; summary?: unknown; text?: unknown };

function outputFrom(value: unknown): CheckRunInput['output'] | 'invalid' | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) return 'invalid';
  const o = value as OutputBody;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  if (typeof o.title !== 'string' || typeof o.summary !== 'string') return 'invalid';
  return {
    title: o.title,
    summary: o.summary,
    ...(text(o.text) === undefined ? {} : { text: text(o.text) }),
  };
}

function createCheckRun(request: RestRequest, repo: SimRepository): RestResponse {
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (typeof body.name !== 'string' || body.name === '') return invalid('CheckRun', 'name', 'missing_field');
  if (typeof body.head_sha !== 'string' || !SHA.test(body.head_sha)) return invalid('CheckRun', 'head_sha');
  if (body.status !== undefined && !STATUSES.includes(String(body.status)))
    return invalid('CheckRun', 'status');
  if (body.conclusion !== undefined && !CONCLUSIONS.includes(String(body.conclusion)))
    return invalid('CheckRun', 'conclusion');
  if (body.status === 'completed' && body.conclusion === undefined) return invalid('CheckRun', 'conclusion');
  const output = outputFrom(body.output);
  if (output === 'invalid') return invalid('CheckRun', 'output');
  const viewer = request.viewer.login.replace(/\[bot\]$/, '');
  const run = simChecks(request.world).addCheckRun(repo.nameWithOwner, {
    name: body.name,
    headSha: body.head_sha.toLowerCase(),
    ...(body.status === undefined ? {} : { status: body.status as CheckStatus }),
    ...(body.conclusion === undefined ? {} : { conclusion: body.conclusion as CheckConclusion }),
    ...(typeof body.details_url === 'string' ? { detailsUrl: body.details_url } : {}),
    ...(typeof body.external_id === 'string' ? { externalId: body.external_id } : {}),
    ...(output ? { output } : {}),
    app: { id: request.viewer.databaseId, slug: viewer, name: viewer, owner: repo.owner },
  });
  const json = checkRunJson(request.world, run, request.apiUrl);
  return { status: 201, body: json, headers: { location: json.url } };
}

function patchCheckRun(request: RestRequest, run: SimCheckRun): RestResponse {
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (body.status !== undefined && !STATUSES.includes(String(body.status)))
    return invalid('CheckRun', 'status');
  if (body.conclusion !== undefined && !CONCLUSIONS.includes(String(body.conclusion)))
    return invalid('CheckRun', 'conclusion');
  const output = outputFrom(body.output);
  if (output === 'invalid') return invalid('CheckRun', 'output');
  if (typeof body.name === 'string' && body.name !== '') run.name = body.name;
  if (typeof body.details_url === 'string') run.detailsUrl = body.details_url;
  if (typeof body.external_id === 'string') run.externalId = body.external_id;
  applyPatch(request.world, run, {
    ...(body.status === undefined ? {} : { status: body.status as CheckStatus }),
    ...(body.conclusion === undefined ? {} : { conclusion: body.conclusion as CheckConclusion }),
    ...(output ? { output } : {}),
  });
  return { status: 200, body: checkRunJson(request.world, run, request.apiUrl) };
}

function listCheckRuns(request: RestRequest, repo: SimRepository, sha: string): RestResponse {
  const params = request.searchParams;
  const all = repoChecks(request.world, repo.nameWithOwner).checkRuns.filter((c) => c.headSha === sha);
  const name = params.get('check_name');
  const status = params.get('status');
  const runs = (params.get('filter') === 'all' ? [...all].sort((a, b) => b.id - a.id) : latestCheckRuns(all))
    .filter((c) => name === null || c.name === name)
    .filter((c) => status === null || c.status === status);
  const { page, headers } = paged(runs, request);
  return {
    status: 200,
    body: {
      total_count: runs.length,
      check_runs: page.map((c) => checkRunJson(request.world, c, request.apiUrl)),
    },
    headers,
  };
}

function createStatus(request: RestRequest, repo: SimRepository, sha: string): RestResponse {
  if (!SHA.test(sha)) return noCommit(sha);
  const body = (request.body ?? {}) as Record<string, unknown>;
  if (!STATES.includes(String(body.state))) return invalid('Status', 'state');
  const status = simChecks(request.world).setStatus(repo.nameWithOwner, sha.toLowerCase(), {
    state: body.state as CommitState,
    ...(typeof body.context === 'string' && body.context !== '' ? { context: body.context } : {}),
    ...(typeof body.description === 'string' ? { description: body.description } : {}),
    ...(typeof body.target_url === 'string' ? { targetUrl: body.target_url } : {}),
    creator: request.viewer.login,
  });
  const json = statusJson(request.world, repo.nameWithOwner, status, request.apiUrl);
  return { status: 201, body: json, headers: { location: json.url } };
}

function combinedStatus(request: RestRequest, repo: SimRepository, sha: string): RestResponse {
  const statuses = latestStatuses(
    repoChecks(request.world, repo.nameWithOwner).statuses.filter((s) => s.sha === sha),
  );
  const { page } = paged(statuses, request);
  const base = `${request.apiUrl}/repos/${repo.nameWithOwner}`;
  const body: CombinedStatusJson = {
    state: combinedState(statuses),
    statuses: page.map((s) => simpleStatusJson(repo.nameWithOwner, s, request.apiUrl)),
    sha,
    total_count: statuses.length,
    repository: {
      id: repo.databaseId,
      node_id: repo.id,
      name: repo.name,
      full_name: repo.nameWithOwner,
    },
    commit_url: `${base}/commits/${sha}`,
    url: `${base}/commits/${sha}/status`,
  };
  return { status: 200, body };
}

function listStatuses(request: RestRequest, repo: SimRepository, sha: string): RestResponse {
  const statuses = repoChecks(request.world, repo.nameWithOwner)
    .statuses.filter((s) => s.sha === sha)
    .sort((a, b) => b.id - a.id);
  const { page, headers } = paged(statuses, request);
  return {
    status: 200,
    body: page.map((s) => statusJson(request.world, repo.nameWithOwner, s, request.apiUrl)),
    headers,
  };
}

/** The signature of a log download URL (the simulator's stand-in for GitHub's signed blob URLs). */
function logSignature(repo: string, id: number, attempt: number): string {
  return sha1Hex(`job-log\u0000${repo.toLowerCase()}\u0000${id}\u0000${attempt}`).slice(0, 20);
}

function jobRoute(request: RestRequest, repo: SimRepository, rest: string[]): RestResponse {
  if (request.method !== 'GET' || !/^\d+$/.test(rest[0] ?? '')) return notFound();
  const run = simChecks(request.world).checkRun(repo.nameWithOwner, Number(rest[0]));
  if (!run?.job) return notFound();
  if (rest.length === 1) return { status: 200, body: jobJson(request.world, run, run.job, request.apiUrl) };
  if (rest.length !== 2 || rest[1] !== 'logs') return notFound();
  if (run.job.log === '') return notFound();
  const [owner, name] = repo.nameWithOwner.split('/');
  const sig = logSignature(repo.nameWithOwner, run.id, run.job.runAttempt);
  const location = `${request.apiUrl}/_simulator/job-logs/${owner}/${name}/${run.id}?attempt=${run.job.runAttempt}&sig=${sig}`;
  return { status: 302, body: undefined, headers: { location } };
}

function rerunFailedJobs(request: RestRequest, repo: SimRepository, runId: number): RestResponse {
  const jobs = repoChecks(request.world, repo.nameWithOwner).checkRuns.filter((c) => c.job?.runId === runId);
  if (jobs.length === 0) return notFound();
  if (jobs.some((c) => c.status !== 'completed')) return restError(403, 'This workflow is already running');
  const failed = jobs.filter(
    (c) => c.conclusion === 'failure' || c.conclusion === 'cancelled' || c.conclusion === 'timed_out',
  );
  if (failed.length === 0) return restError(403, 'This workflow run cannot be retried');
  for (const run of failed) {
    applyPatch(request.world, run, { status: 'queued' });
    run.job!.runAttempt += 1;
    run.job!.log = '';
  }
  return { status: 201, body: {} };
}

function requiredChecks(request: RestRequest, repo: SimRepository, branch: string): RestResponse {
  const checks = repoChecks(request.world, repo.nameWithOwner);
  if (checks.protectionForbidden) return restError(403, 'Resource not accessible by integration');
  const required = checks.required.get(branch);
  if (!required) return restError(404, 'Branch not protected');
  const url = `${request.apiUrl}/repos/${repo.nameWithOwner}/branches/${encodeURIComponent(branch)}/protection/required_status_checks`;
  const body: StatusCheckPolicyJson = {
    url,
    strict: required.strict,
    contexts: required.contexts,
    checks: required.contexts.map((context) => ({ context, app_id: null })),
    contexts_url: `${url}/contexts`,
  };
  return { status: 200, body };
}

/**
 * `/repos/{o}/{r}/…` routes of this file (`rest` is the path after the repository); undefined when
 * the path is none of them.
 */
export function checksRoute(
  request: RestRequest,
  repo: SimRepository,
  rest: string[],
): RestResponse | undefined {
  const { method, world } = request;
  const [head, a, b, c] = rest;
  if (head === 'check-runs') {
    if (rest.length === 1) return method === 'POST' ? createCheckRun(request, repo) : notFound();
    if (rest.length !== 2 || !/^\d+$/.test(a!)) return notFound();
    const run = simChecks(world).checkRun(repo.nameWithOwner, Number(a));
    if (!run) return notFound();
    if (method === 'GET') return { status: 200, body: checkRunJson(world, run, request.apiUrl) };
    if (method === 'PATCH') return patchCheckRun(request, run);
    return notFound();
  }
  if (head === 'statuses' && rest.length === 2) {
    return method === 'POST' ? createStatus(request, repo, decodeURIComponent(a!)) : notFound();
  }
  if (head === 'commits' && rest.length === 3 && method === 'GET') {
    if (b !== 'check-runs' && b !== 'status' && b !== 'statuses') return undefined;
    const ref = decodeURIComponent(a!);
    const sha = resolveRef(repo, ref);
    if (!sha) return noCommit(ref);
    if (b === 'check-runs') return listCheckRuns(request, repo, sha);
    return b === 'status' ? combinedStatus(request, repo, sha) : listStatuses(request, repo, sha);
  }
  if (head === 'actions') {
    if (a === 'jobs') return jobRoute(request, repo, rest.slice(2));
    if (a === 'runs' && rest.length === 4 && c === 'rerun-failed-jobs' && /^\d+$/.test(b!)) {
      return method === 'POST' ? rerunFailedJobs(request, repo, Number(b)) : notFound();
    }
    return notFound();
  }
  if (head === 'branches' && rest.length === 2) {
    if (method !== 'GET') return notFound();
    const name = decodeURIComponent(a!);
    const sha = branchSha(repo, name);
    if (!sha) return restError(404, 'Branch not found');
    return {
      status: 200,
      body: {
        name,
        commit: { sha, url: `${request.apiUrl}/repos/${repo.nameWithOwner}/commits/${sha}` },
        protected: false,
      },
    };
  }
  if (
    head === 'branches' &&
    rest.length === 4 &&
    rest[2] === 'protection' &&
    c === 'required_status_checks'
  ) {
    return method === 'GET' ? requiredChecks(request, repo, decodeURIComponent(a!)) : notFound();
  }
  return undefined;
}

/**
 * The download behind `…/actions/jobs/{id}/logs`: `/_simulator/job-logs/{owner}/{repo}/{id}?attempt&sig`,
 * text/plain, no token needed (GitHub's download URLs are signed). Undefined for another path.
 */
export function jobLogDownload(
  world: SimWorld,
  path: string,
  params: URLSearchParams,
): { status: number; text: string } | undefined {
  const match = /^\/_simulator\/job-logs\/([^/]+)\/([^/]+)\/(\d+)$/.exec(path);
  if (!match) return undefined;
  const repo = `${decodeURIComponent(match[1]!)}/${decodeURIComponent(match[2]!)}`;
  const run = world.repo(repo)
    ? simChecks(world).checkRun(world.repo(repo)!.nameWithOwner, Number(match[3]))
    : undefined;
  const attempt = Number(params.get('attempt'));
  if (
    !run?.job ||
    attempt !== run.job.runAttempt ||
    params.get('sig') !== logSignature(run.repo, run.id, attempt) ||
    run.job.log === ''
  ) {
    return { status: 404, text: 'The specified blob does not exist.' };
  }
  return { status: 200, text: run.job.log };
}
