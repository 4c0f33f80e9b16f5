/**
 * GraphQL answers about pull requests computed from the rest of the simulator (issue 13, item 3):
 *
 * - `commits` and the `PullRequestCommit` timeline items: the commits on the head branch that are
 *   not on the base (`git log base..head` in the backing bare repository, oldest first). A pull
 *   request without a backing repository, or one whose range is empty (merged with a merge commit),
 *   answers the commits last seen while it was open, else its head commit alone.
 * - `Commit.statusCheckRollup`: from the check runs and commit statuses recorded for the commit
 *   (REST writes and `simChecks`): `state` is `simChecks(world).rollup`, `contexts` the latest check
 *   run per (app, name) then the latest status per context, with `isRequired` from the base
 *   branch's required checks. Only when nothing was ever recorded for the pull request's head does
 *   the fixture's static `checkState` answer (as a rollup with no contexts).
 * - `latestReviews` (each author's latest review), `latestOpinionatedReviews` (each author's latest
 *   approval or change request; `writersOnly` keeps authors with write or admin permission).
 * - `timelineItems(itemTypes: [...])`: see `timelineItems` below.
 */
import { runCommandSync } from '../process/command-sync.js';
import { type SimCheckRun, type SimCommitStatus, simChecks } from './checks.js';
import { HTML_BASE } from './ids.js';
import { forcedUpdates } from './merging.js';
import { paginate, type ResolverContext, typedError } from './resolver-kit.js';
import { permissionOf } from './reviews.js';
import type { SimIssueOrPullRequest, SimPullRequest, SimRepository, SimReview, SimWorld } from './world.js';

type Args = Record<string, unknown>;

/** One commit as git has it. */
interface GitCommit {
  oid: string;
  authorName: string;
  authorEmail: string;
  authoredDate: string;
  committerName: string;
  committerEmail: string;
  committedDate: string;
  message: string;
}

function git(gitDir: string, args: string[]): string | undefined {
  return runCommandSync('git', args, {
    cwd: gitDir,
    env: {
      PATH: process.env.PATH ?? '',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LC_ALL: 'C',
    },
  });
}

function isoOf(unixSeconds: string): string {
  return new Date(Number(unixSeconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** `git log --reverse` of `range` (argv, never a shell string); undefined when git fails. */
function gitLog(gitDir: string, range: string[]): GitCommit[] | undefined {
  const out = git(gitDir, [
    'log',
    '--reverse',
    '--format=%H%x1f%an%x1f%ae%x1f%at%x1f%cn%x1f%ce%x1f%ct%x1f%B%x1e',
    ...range,
    '--',
  ]);
  if (out === undefined) return undefined;
  return out
    .split('\x1e')
    .map((record) => record.replace(/^\n/, ''))
    .filter((record) => record.trim() !== '')
    .map((record) => {
      const [oid = '', an = '', ae = '', at = '0', cn = '', ce = '', ct = '0', message = ''] =
        record.split('\x1f');
      return {
        oid,
        authorName: an,
        authorEmail: ae,
        authoredDate: isoOf(at),
        committerName: cn,
        committerEmail: ce,
        committedDate: isoOf(ct),
        message: message.replace(/\n+$/, ''),
      };
    });
}

function branchOid(repo: SimRepository, branch: string): string | undefined {
  if (!repo.gitDir) return undefined;
  return git(repo.gitDir, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]) || undefined;
}

/**
 * The pull request's head commit: the head branch's tip while it is not merged and backed by git
 * (as REST's `head.sha`), else `headRefOid` (a merge records the head it merged there).
 */
export function headOid(world: SimWorld, pr: SimPullRequest): string {
  const repo = world.repo(pr.repo);
  if (pr.state !== 'MERGED' && repo && !pr.isCrossRepository) {
    const oid = branchOid(repo, pr.headRefName) ?? pr.headRefOid;
    syncPullRef(repo, pr.number, oid);
    return oid;
  }
  if (repo) syncPullRef(repo, pr.number, pr.headRefOid);
  return pr.headRefOid;
}

/**
 * `refs/pull/<n>/head` in the backing bare repository, as GitHub keeps it for every pull request
 * (a fork's too): set to the head commit whenever the simulator reads it, when that commit is in
 * the repository. A git client fetches it straight from the bare repository.
 */
export function syncPullRef(repo: SimRepository, number: number, oid: string): void {
  if (!repo.gitDir) return;
  const ref = `refs/pull/${number}/head`;
  const current = git(repo.gitDir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]) || undefined;
  if (current === oid) return;
  if (!git(repo.gitDir, ['rev-parse', '--verify', '--quiet', `${oid}^{commit}`])) return;
  git(repo.gitDir, ['update-ref', ref, oid]);
}

/** A commit name git may take as an argument (never an option). */
const OID = /^[0-9a-f]{4,64}$/i;

/** The commits last listed while each pull request was open (a merge empties `base..head`). */
const seenCommits = new WeakMap<SimPullRequest, GitCommit[]>();

function prCommits(world: SimWorld, pr: SimPullRequest): GitCommit[] | undefined {
  const repo = world.repo(pr.repo);
  if (repo?.gitDir) {
    const head = headOid(world, pr);
    const base = branchOid(repo, pr.baseRefName);
    const commits = !OID.test(head)
      ? undefined
      : gitLog(repo.gitDir, base ? [head, `^${base}`] : [head, '-1']);
    if (commits && commits.length > 0) {
      if (pr.state === 'OPEN') seenCommits.set(pr, commits);
      return commits;
    }
  }
  return seenCommits.get(pr);
}

function commitUrl(repo: string, oid: string): string {
  return `${HTML_BASE}/${repo}/commit/${oid}`;
}

function commitNode(ctx: ResolverContext, pr: SimPullRequest, commit: GitCommit | undefined, oid: string) {
  const url = commitUrl(pr.repo, oid);
  const message = commit?.message ?? `Update ${pr.headRefName}`;
  const [headline = '', ...rest] = message.split('\n');
  const gitActor = (name: string, email: string, date: string) => ({
    __typename: 'GitActor',
    name,
    email,
    date,
    user: null,
  });
  const node = {
    __typename: 'Commit',
    id: `C_kwDOSIM${Buffer.from(oid).toString('base64url').slice(0, 24)}`,
    oid,
    abbreviatedOid: oid.slice(0, 7),
    message,
    messageHeadline: headline,
    messageBody: rest.join('\n').replace(/^\n+/, ''),
    committedDate: commit?.committedDate ?? pr.updatedAt,
    authoredDate: commit?.authoredDate ?? pr.updatedAt,
    url,
    commitUrl: url,
    resourcePath: url.slice(HTML_BASE.length),
    author: commit ? gitActor(commit.authorName, commit.authorEmail, commit.authoredDate) : null,
    committer: commit ? gitActor(commit.committerName, commit.committerEmail, commit.committedDate) : null,
    statusCheckRollup: null as unknown,
  };
  node.statusCheckRollup = rollupOf(ctx, pr, oid, () => node);
  return node;
}

/** `PullRequestCommit`s of the pull request, oldest first. */
function pullRequestCommits(ctx: ResolverContext, pr: SimPullRequest) {
  const commits = prCommits(ctx.world, pr);
  const list: { commit: GitCommit | undefined; oid: string }[] = commits
    ? commits.map((c) => ({ commit: c, oid: c.oid }))
    : [{ commit: undefined, oid: headOid(ctx.world, pr) }];
  const prUrl = `${HTML_BASE}/${pr.repo}/pull/${pr.number}`;
  return list.map(({ commit, oid }) => ({
    __typename: 'PullRequestCommit',
    id: `PURC_${Buffer.from(`${pr.id}:${oid}`).toString('base64url').slice(0, 32)}`,
    commit: commitNode(ctx, pr, commit, oid),
    pullRequest: pr,
    url: `${prUrl}/commits/${oid}`,
    resourcePath: `${prUrl}/commits/${oid}`.slice(HTML_BASE.length),
    /** For the timeline's order. */
    createdAt: commit?.committedDate ?? pr.updatedAt,
  }));
}

// ── statusCheckRollup ─────────────────────────────────────────────────────────────────────────

interface RollupSource {
  __typename: 'StatusCheckRollup';
  id: string;
  state: string;
  repo: string;
  baseRefName: string;
  commitNode: () => unknown;
  runs: SimCheckRun[];
  statuses: SimCommitStatus[];
}

function rollupOf(
  ctx: ResolverContext,
  pr: SimPullRequest,
  oid: string,
  commit: () => unknown,
): RollupSource | null {
  const checks = simChecks(ctx.world);
  const state = checks.rollup(pr.repo, oid);
  const { checkRuns, statuses } = checks.latest(pr.repo, oid);
  const fallback = state === null && oid === headOid(ctx.world, pr) ? pr.checkState : null;
  if (state === null && fallback === null) return null;
  return {
    __typename: 'StatusCheckRollup',
    id: `SCR_${Buffer.from(`${pr.repo}:${oid}`).toString('base64url').slice(0, 32)}`,
    state: state ?? (fallback as string),
    repo: pr.repo,
    baseRefName: pr.baseRefName,
    commitNode: commit,
    // Oldest first: check runs, then statuses.
    runs: [...checkRuns].reverse(),
    statuses: [...statuses].reverse(),
  };
}

interface CheckRunSource {
  __typename: 'CheckRun';
  run: SimCheckRun;
  baseRefName: string;
}

interface StatusContextSource {
  __typename: 'StatusContext';
  status: SimCommitStatus;
  repo: string;
  baseRefName: string;
}

function countsBy<T>(items: readonly T[], key: (item: T) => string): { state: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return [...counts].map(([state, count]) => ({ state, count }));
}

function checkRunState(run: SimCheckRun): string {
  return run.status === 'completed' ? (run.conclusion ?? 'success').toUpperCase() : run.status.toUpperCase();
}

/** `isRequired`: whether the base branch's protection requires this context (pull request args ignored). */
function isRequired(
  ctx: ResolverContext,
  repo: string,
  baseRefName: string,
  name: string,
  args: Args,
): boolean {
  let base = baseRefName;
  if (typeof args.pullRequestNumber === 'number') {
    const pr = ctx.world.pullRequest(repo, args.pullRequestNumber);
    if (!pr)
      throw typedError(
        'NOT_FOUND',
        `Could not resolve to a PullRequest with the number of ${args.pullRequestNumber}.`,
      );
    base = pr.baseRefName;
  } else if (typeof args.pullRequestId === 'string') {
    const pr = ctx.world.node(args.pullRequestId);
    if (pr?.__typename !== 'PullRequest')
      throw typedError(
        'NOT_FOUND',
        `Could not resolve to a node with the global id of '${args.pullRequestId}'`,
      );
    base = pr.baseRefName;
  } else {
    throw typedError('UNPROCESSABLE', 'isRequired needs pullRequestId or pullRequestNumber');
  }
  return simChecks(ctx.world).requiredContexts(repo, base)?.includes(name) ?? false;
}

function checkRunUrl(run: SimCheckRun): string {
  return run.job
    ? `${HTML_BASE}/${run.repo}/actions/runs/${run.job.runId}/job/${run.id}`
    : `${HTML_BASE}/${run.repo}/runs/${run.id}`;
}

type Table<S> = Record<string, (source: S, args: Args, ctx: ResolverContext) => unknown>;

const rollupResolvers: Table<RollupSource> = {
  commit: (r) => r.commitNode(),
  contexts: (r, args) => {
    const nodes: (CheckRunSource | StatusContextSource)[] = [
      ...r.runs.map((run) => ({ __typename: 'CheckRun' as const, run, baseRefName: r.baseRefName })),
      ...r.statuses.map((status) => ({
        __typename: 'StatusContext' as const,
        status,
        repo: r.repo,
        baseRefName: r.baseRefName,
      })),
    ];
    return {
      ...paginate(nodes, args),
      checkRunCount: r.runs.length,
      checkRunCountsByState: countsBy(r.runs, checkRunState),
      statusContextCount: r.statuses.length,
      statusContextCountsByState: countsBy(r.statuses, (s) => s.state.toUpperCase()),
    };
  },
};

const checkRunResolvers: Table<CheckRunSource> = {
  id: (c) => c.run.nodeId,
  databaseId: (c) => c.run.id,
  name: (c) => c.run.name,
  status: (c) => c.run.status.toUpperCase(),
  conclusion: (c) => c.run.conclusion?.toUpperCase() ?? null,
  startedAt: (c) => c.run.startedAt,
  completedAt: (c) => c.run.completedAt,
  detailsUrl: (c) => c.run.detailsUrl,
  externalId: (c) => c.run.externalId,
  title: (c) => c.run.output.title,
  summary: (c) => c.run.output.summary,
  text: (c) => c.run.output.text,
  url: (c) => checkRunUrl(c.run),
  permalink: (c) => checkRunUrl(c.run),
  resourcePath: (c) => checkRunUrl(c.run).slice(HTML_BASE.length),
  isRequired: (c, args, ctx) => isRequired(ctx, c.run.repo, c.baseRefName, c.run.name, args),
  repository: (c, _args, ctx) => ctx.world.repo(c.run.repo) ?? null,
};

const statusContextResolvers: Table<StatusContextSource> = {
  id: (s) => s.status.nodeId,
  context: (s) => s.status.context,
  state: (s) => s.status.state.toUpperCase(),
  description: (s) => s.status.description,
  targetUrl: (s) => s.status.targetUrl,
  createdAt: (s) => s.status.createdAt,
  creator: (s, _args, ctx) => ctx.world.actor(s.status.creator) ?? null,
  avatarUrl: (s, _args, ctx) => {
    const actor = ctx.world.actor(s.status.creator);
    return actor ? `https://avatars.githubusercontent.com/u/${actor.databaseId}?v=4` : null;
  },
  isRequired: (s, args, ctx) => isRequired(ctx, s.repo, s.baseRefName, s.status.context, args),
};

/** Resolver tables for the types this module answers (merged into resolvers.ts's table). */
export const PR_GRAPHQL_RESOLVERS = {
  StatusCheckRollup: rollupResolvers,
  CheckRun: checkRunResolvers,
  StatusContext: statusContextResolvers,
} as Record<string, Table<never>>;

// ── reviews ───────────────────────────────────────────────────────────────────────────────────

function latestPerAuthor(reviews: readonly SimReview[], keep: (r: SimReview) => boolean): SimReview[] {
  const latest = new Map<string, SimReview>();
  for (const review of reviews) {
    if (!keep(review)) continue;
    const key = review.author.toLowerCase();
    latest.delete(key);
    latest.set(key, review);
  }
  return [...latest.values()];
}

/** PullRequest fields answered here. */
export const pullRequestFields: Table<SimPullRequest> = {
  commits: (pr, args, ctx) => paginate(pullRequestCommits(ctx, pr), args),
  statusCheckRollup: (pr, _args, ctx) => {
    const oid = headOid(ctx.world, pr);
    return rollupOf(ctx, pr, oid, () => commitByOid(ctx, pr, oid));
  },
  headRefOid: (pr, _args, ctx) => headOid(ctx.world, pr),
  latestReviews: (pr, args) =>
    paginate(
      latestPerAuthor(pr.reviews, (r) => r.state !== 'PENDING'),
      args,
    ),
  latestOpinionatedReviews: (pr, args, ctx) =>
    paginate(
      latestPerAuthor(pr.reviews, (r) => r.state === 'APPROVED' || r.state === 'CHANGES_REQUESTED').filter(
        (r) =>
          args.writersOnly !== true ||
          ['admin', 'write'].includes(permissionOf(ctx.world, pr.repo, r.author)),
      ),
      args,
    ),
};

// ── timeline ──────────────────────────────────────────────────────────────────────────────────

/** The item types `timelineItems` models; any other is refused (SIMULATOR_UNSUPPORTED), not answered empty. */
const ISSUE_TYPES = ['LABELED_EVENT', 'ISSUE_COMMENT', 'CLOSED_EVENT', 'REOPENED_EVENT'];
const PULL_TYPES = [
  'LABELED_EVENT',
  'ISSUE_COMMENT',
  'CLOSED_EVENT',
  'PULL_REQUEST_REVIEW',
  'PULL_REQUEST_COMMIT',
  'MERGED_EVENT',
  'HEAD_REF_FORCE_PUSHED_EVENT',
];

interface TimelineEntry {
  createdAt: string;
  node: unknown;
}

function actorNode(ctx: ResolverContext, login: string) {
  return ctx.world.actor(login) ?? ctx.world.addUser(login);
}

function timelineEntries(
  ctx: ResolverContext,
  item: SimIssueOrPullRequest,
  types: readonly string[],
): TimelineEntry[] {
  const want = new Set(types);
  const out: TimelineEntry[] = [];
  const itemUrl = `${HTML_BASE}/${item.repo}/${item.__typename === 'Issue' ? 'issues' : 'pull'}/${item.number}`;
  if (want.has('LABELED_EVENT'))
    for (const e of item.labelEvents) out.push({ createdAt: e.createdAt, node: e });
  if (want.has('ISSUE_COMMENT')) for (const c of item.comments) out.push({ createdAt: c.createdAt, node: c });
  if (item.__typename === 'Issue') {
    for (const e of item.events) {
      const type =
        e.event === 'closed' ? 'CLOSED_EVENT' : e.event === 'reopened' ? 'REOPENED_EVENT' : undefined;
      if (!type || !want.has(type)) continue;
      out.push({
        createdAt: e.createdAt,
        node: {
          __typename: type === 'CLOSED_EVENT' ? 'ClosedEvent' : 'ReopenedEvent',
          id: `${type === 'CLOSED_EVENT' ? 'CE' : 'REE'}_kwDOSIM${e.databaseId}`,
          actor: actorNode(ctx, e.actor),
          createdAt: e.createdAt,
          closable: item,
          closer: null,
          stateReason: e.stateReason ? e.stateReason.toUpperCase() : null,
          url: `${itemUrl}#event-${e.databaseId}`,
          resourcePath: `${itemUrl}#event-${e.databaseId}`.slice(HTML_BASE.length),
        },
      });
    }
    return out;
  }
  const pr = item;
  if (want.has('PULL_REQUEST_REVIEW'))
    for (const r of pr.reviews) out.push({ createdAt: r.submittedAt, node: r });
  if (want.has('PULL_REQUEST_COMMIT'))
    for (const c of pullRequestCommits(ctx, pr)) out.push({ createdAt: c.createdAt, node: c });
  if (want.has('HEAD_REF_FORCE_PUSHED_EVENT')) for (const e of forcePushes(ctx, pr)) out.push(e);
  if (want.has('MERGED_EVENT') && pr.state === 'MERGED' && pr.mergedAt) {
    out.push({
      createdAt: pr.mergedAt,
      node: {
        __typename: 'MergedEvent',
        id: `ME_kwDOSIM${pr.databaseId}`,
        actor: null,
        commit: null,
        createdAt: pr.mergedAt,
        mergeRefName: pr.baseRefName,
        pullRequest: pr,
        url: `${itemUrl}#event-merged`,
        resourcePath: `${itemUrl}#event-merged`.slice(HTML_BASE.length),
      },
    });
  }
  if (want.has('CLOSED_EVENT') && pr.state !== 'OPEN' && pr.closedAt) {
    out.push({
      createdAt: pr.closedAt,
      node: {
        __typename: 'ClosedEvent',
        id: `CE_kwDOSIM${pr.databaseId}`,
        actor: null,
        createdAt: pr.closedAt,
        closable: pr,
        closer: null,
        stateReason: null,
        url: `${itemUrl}#event-closed`,
        resourcePath: `${itemUrl}#event-closed`.slice(HTML_BASE.length),
      },
    });
  }
  return out;
}

/** Commit objects of `oid` read from git (when git still has it), for events that name commits. */
function commitByOid(ctx: ResolverContext, pr: SimPullRequest, oid: string) {
  const gitDir = ctx.world.repo(pr.repo)?.gitDir;
  const found = gitDir && OID.test(oid) ? gitLog(gitDir, [oid, '-1'])?.[0] : undefined;
  return commitNode(ctx, pr, found, oid);
}

/**
 * The head branch's non-fast-forward updates in the bare repository's reflog (merging.ts's
 * `forcedUpdates`; needs `keepReflogs`), as `HeadRefForcePushedEvent`s. The actor is null: the
 * reflog of a bare repository names no GitHub account.
 */
function forcePushes(ctx: ResolverContext, pr: SimPullRequest): TimelineEntry[] {
  const gitDir = ctx.world.repo(pr.repo)?.gitDir;
  if (!gitDir) return [];
  const ref = `refs/heads/${pr.headRefName}`;
  return forcedUpdates(gitDir)
    .filter((u) => u.ref === ref && !/^0+$/.test(u.new))
    .map((u) => {
      const createdAt = u.at ?? pr.updatedAt;
      return {
        createdAt,
        node: {
          __typename: 'HeadRefForcePushedEvent',
          id: `HRFPE_${Buffer.from(`${pr.id}:${u.old}:${u.new}`).toString('base64url').slice(0, 32)}`,
          actor: null,
          beforeCommit: commitByOid(ctx, pr, u.old),
          afterCommit: commitByOid(ctx, pr, u.new),
          createdAt,
          pullRequest: pr,
          ref: {
            __typename: 'Ref',
            id: `REF_kwDOSIM${Buffer.from(`${pr.repo}:${pr.headRefName}`).toString('base64url')}`,
            name: pr.headRefName,
            prefix: 'refs/heads/',
            target: { __typename: 'Commit', oid: u.new },
          },
        },
      };
    });
}

/**
 * `timelineItems(itemTypes: [...])` of an issue or pull request, oldest first (stable for equal
 * times). Issues: labeled events, comments, closed and reopened events (with their actors). Pull
 * requests: labeled events, comments, reviews, commits (git's committer date orders them), force
 * pushes of the head branch (from the bare repository's reflog, `keepReflogs`), one
 * `MergedEvent` and one `ClosedEvent` for a merged pull request (actor and merge commit null: the
 * world does not record them), one `ClosedEvent` for a closed one. `itemTypes` is required.
 */
export function timelineItems(item: SimIssueOrPullRequest, args: Args, ctx: ResolverContext) {
  const allowed = item.__typename === 'Issue' ? ISSUE_TYPES : PULL_TYPES;
  const types = Array.isArray(args.itemTypes) ? (args.itemTypes as string[]) : undefined;
  if (!types || types.some((t) => !allowed.includes(t)))
    throw typedError(
      'SIMULATOR_UNSUPPORTED',
      `The curupira GitHub simulator models timelineItems(itemTypes: [${allowed.join(', ')}]) only`,
    );
  const entries = timelineEntries(ctx, item, types)
    .map((entry, index) => ({ ...entry, index }))
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.index - b.index));
  const nodes = entries.map((e) => e.node);
  return {
    ...paginate(nodes, args),
    filteredCount: nodes.length,
    pageCount: nodes.length,
    updatedAt: item.updatedAt,
  };
}
