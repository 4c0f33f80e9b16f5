/**
 * Mergeability, merging and updating the branch of simulated pull requests, computed with real git
 * in the repository's backing bare repository (issue 13, item 3):
 *
 *   GET /repos/{o}/{r}/pulls/{n}/files          the changed files (`git diff base...head`), paged
 *   PUT /repos/{o}/{r}/pulls/{n}/merge          { merge_method?: merge|squash|rebase, sha?,
 *                                               commit_title?, commit_message? } → 200 { sha, merged,
 *                                               message }; 409 when `sha` is not the head; 405 when
 *                                               not mergeable (a conflict, a draft, closed)
 *   PUT /repos/{o}/{r}/pulls/{n}/update-branch  { expected_head_sha? } → 202; a merge commit of the
 *                                               base into the head; 422 on a conflict, a sha that is
 *                                               not the head, or nothing new on the base
 *   GET /repos/{o}/{r}/compare/{base}...{head}  ahead_by, behind_by, status, commits, files
 *
 * A pull request's `mergeable` / `mergeable_state` come from `git merge-tree --write-tree` (git ≥
 * 2.38) and `git rev-list`: `dirty` on a conflict, `draft`, `behind` when the base has commits the
 * head lacks (as GitHub says it when branch protection requires an up-to-date branch), `unstable`
 * when the head's checks fail, else `clean`. GitHub computes mergeability lazily: with
 * `setLazyMergeability(world, true)` the first read of each (head, base) pair answers `null` /
 * `unknown`, as GitHub does right after a push.
 *
 * Every ref update is a compare-and-swap (`git update-ref <ref> <new> <old>`) of a descendant, so
 * the bare repository's reflogs (kept: `keepReflogs`) show fast-forwards only; `forcedUpdates`
 * lists any other update, so tests can prove curupira never force-pushes.
 */
import { type Dirent, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { components } from '@octokit/openapi-types';
import { runCommandSyncStatus } from '../process/command-sync.js';
import { simChecks } from './checks.js';
import { HTML_BASE } from './ids.js';
import { type RestRequest, type RestResponse, restError } from './rest-json.js';
import type { SimPullRequest, SimRepository, SimWorld } from './world.js';

type Schemas = components['schemas'];

const ZERO = '0'.repeat(40);

function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    LC_ALL: 'C',
    ...extra,
  };
}

function run(cwd: string, args: string[], env: Record<string, string> = {}) {
  return runCommandSyncStatus('git', args, { cwd, env: gitEnv(env) });
}

/** stdout when git exits 0, else undefined. */
function gitOk(cwd: string, args: string[], env: Record<string, string> = {}): string | undefined {
  const result = run(cwd, args, env);
  return result.status === 0 ? result.stdout : undefined;
}

/** A branch name, else a commit (a full or short sha), of the bare repository. */
function resolve(gitDir: string, ref: string): string | undefined {
  if (ref.startsWith('-')) return undefined;
  return (
    gitOk(gitDir, ['rev-parse', '--verify', '--quiet', `refs/heads/${ref}^{commit}`]) ||
    (/^[0-9a-f]{4,40}$/i.test(ref)
      ? gitOk(gitDir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])
      : undefined) ||
    undefined
  );
}

function count(gitDir: string, range: string): number {
  return Number(gitOk(gitDir, ['rev-list', '--count', range]) ?? 0) || 0;
}

interface TreeMerge {
  clean: boolean;
  tree: string;
  /** The files that conflict (when not clean). */
  conflicts: string[];
}

/** `git merge-tree --write-tree`: the merged tree of two commits, or the files that conflict. */
export function mergeTree(gitDir: string, ours: string, theirs: string): TreeMerge | undefined {
  const result = run(gitDir, ['merge-tree', '--write-tree', '--name-only', '--no-messages', ours, theirs]);
  if (result.status !== 0 && result.status !== 1) return undefined;
  const [tree = '', ...files] = result.stdout.split('\n');
  return { clean: result.status === 0, tree, conflicts: files.filter(Boolean) };
}

export interface Mergeability {
  mergeable: boolean | null;
  /** GitHub's `mergeable_state`. */
  state: 'clean' | 'dirty' | 'behind' | 'unstable' | 'draft' | 'unknown';
  headSha: string;
  baseSha: string;
  aheadBy: number;
  behindBy: number;
  conflicts: string[];
}

const lazyWorlds = new WeakMap<SimWorld, Set<string>>();

/** Lazy mergeability (GitHub's): the first read of a (head, base) pair answers null / `unknown`. */
export function setLazyMergeability(world: SimWorld, lazy: boolean): void {
  if (lazy) lazyWorlds.set(world, lazyWorlds.get(world) ?? new Set());
  else lazyWorlds.delete(world);
}

/**
 * Mergeability of an open pull request from git; undefined when its repository has no backing
 * bare repository (the world's own fields answer then) or it is not open.
 */
export function mergeability(world: SimWorld, pr: SimPullRequest): Mergeability | undefined {
  const repo = world.repo(pr.repo);
  if (!repo?.gitDir || pr.state !== 'OPEN') return undefined;
  const gitDir = repo.gitDir;
  const headSha = resolve(gitDir, pr.headRefName);
  const baseSha = resolve(gitDir, pr.baseRefName);
  const unknown = {
    mergeable: null,
    state: 'unknown' as const,
    headSha: headSha ?? '',
    baseSha: baseSha ?? '',
    aheadBy: 0,
    behindBy: 0,
    conflicts: [],
  };
  if (!headSha || !baseSha) return unknown;
  const seen = lazyWorlds.get(world);
  const pair = `${pr.id}:${headSha}..${baseSha}`;
  if (seen && !seen.has(pair)) {
    seen.add(pair);
    return unknown;
  }
  const merged = mergeTree(gitDir, baseSha, headSha);
  if (!merged) return unknown;
  const aheadBy = count(gitDir, `${baseSha}..${headSha}`);
  const behindBy = count(gitDir, `${headSha}..${baseSha}`);
  // The head's rollup as GraphQL's statusCheckRollup answers it: recorded checks and statuses, else
  // the fixture's static checkState.
  const checks = simChecks(world).rollup(pr.repo, headSha) ?? pr.checkState;
  const failing = checks === 'FAILURE' || checks === 'ERROR';
  const state = !merged.clean
    ? 'dirty'
    : pr.isDraft
      ? 'draft'
      : behindBy > 0
        ? 'behind'
        : failing
          ? 'unstable'
          : 'clean';
  return {
    mergeable: merged.clean,
    state,
    headSha,
    baseSha,
    aheadBy,
    behindBy,
    conflicts: merged.conflicts,
  };
}

// ---------------------------------------------------------------------------------------------
// Changed files and comparisons

type FileJson = Pick<
  Schemas['diff-entry'],
  | 'sha'
  | 'filename'
  | 'status'
  | 'additions'
  | 'deletions'
  | 'changes'
  | 'blob_url'
  | 'raw_url'
  | 'contents_url'
>;

const STATUS: Record<string, FileJson['status']> = {
  A: 'added',
  D: 'removed',
  M: 'modified',
  T: 'changed',
};

/** The files `head` changes since its merge base with `base` (`git diff base...head`), as GitHub lists them. */
export function changedFiles(
  repo: SimRepository,
  base: string,
  head: string,
  apiUrl: string,
): FileJson[] | undefined {
  if (!repo.gitDir) return undefined;
  const range = `${base}...${head}`;
  const names = gitOk(repo.gitDir, ['diff', '--no-renames', '--name-status', '-z', range, '--']);
  const numstat = gitOk(repo.gitDir, ['diff', '--no-renames', '--numstat', '-z', range, '--']);
  if (names === undefined || numstat === undefined) return undefined;
  const counts = new Map<string, { additions: number; deletions: number }>();
  for (const row of numstat.split('\0').filter(Boolean)) {
    const [add = '0', del = '0', ...path] = row.split('\t');
    counts.set(path.join('\t'), {
      additions: Number.parseInt(add, 10) || 0,
      deletions: Number.parseInt(del, 10) || 0,
    });
  }
  const fields = names.split('\0');
  const files: FileJson[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = fields[i]!.trim();
    const filename = fields[i + 1]!;
    if (!filename) continue;
    const status = STATUS[code.charAt(0)] ?? 'modified';
    const at = status === 'removed' ? base : head;
    const sha = gitOk(repo.gitDir, ['rev-parse', '--verify', '--quiet', `${at}:${filename}`]) ?? ZERO;
    const { additions, deletions } = counts.get(filename) ?? { additions: 0, deletions: 0 };
    const path = filename.split('/').map(encodeURIComponent).join('/');
    files.push({
      sha,
      filename,
      status,
      additions,
      deletions,
      changes: additions + deletions,
      blob_url: `${HTML_BASE}/${repo.nameWithOwner}/blob/${at}/${path}`,
      raw_url: `${HTML_BASE}/${repo.nameWithOwner}/raw/${at}/${path}`,
      contents_url: `${apiUrl}/repos/${repo.nameWithOwner}/contents/${path}?ref=${at}`,
    });
  }
  return files;
}

function page<T>(items: T[], request: RestRequest): T[] {
  const perPage = Math.min(100, Math.max(1, Number(request.searchParams.get('per_page') ?? 30) || 30));
  const at = Math.max(1, Number(request.searchParams.get('page') ?? 1) || 1);
  return items.slice((at - 1) * perPage, at * perPage);
}

type CommitJson = { sha: string; commit: { message: string }; parents: { sha: string }[] };

function commitJson(gitDir: string, sha: string): CommitJson {
  const [parents = '', ...message] = (gitOk(gitDir, ['show', '-s', '--format=%P%n%B', sha]) ?? '').split(
    '\n',
  );
  return {
    sha,
    commit: { message: message.join('\n').trim() },
    parents: parents
      .split(' ')
      .filter(Boolean)
      .map((p) => ({ sha: p })),
  };
}

/** `GET /repos/{o}/{r}/compare/{base}...{head}` (branches or commits). */
export function compareRoute(request: RestRequest, repo: SimRepository, basehead: string): RestResponse {
  if (request.method !== 'GET' || !repo.gitDir) return restError(404, 'Not Found');
  const [baseRef = '', headRef = '', ...extra] = decodeURIComponent(basehead).split('...');
  if (extra.length > 0) return restError(404, 'Not Found');
  const strip = (ref: string) => ref.replace(new RegExp(`^${repo.owner}:`, 'i'), '');
  const base = resolve(repo.gitDir, strip(baseRef));
  const head = resolve(repo.gitDir, strip(headRef));
  if (!base || !head) return restError(404, 'Not Found');
  const mergeBase = gitOk(repo.gitDir, ['merge-base', base, head]) ?? '';
  const aheadBy = count(repo.gitDir, `${base}..${head}`);
  const behindBy = count(repo.gitDir, `${head}..${base}`);
  const shas = (gitOk(repo.gitDir, ['rev-list', '--reverse', `${base}..${head}`]) ?? '')
    .split('\n')
    .filter(Boolean);
  const status =
    aheadBy === 0 && behindBy === 0
      ? 'identical'
      : behindBy === 0
        ? 'ahead'
        : aheadBy === 0
          ? 'behind'
          : 'diverged';
  return {
    status: 200,
    body: {
      url: `${request.apiUrl}/repos/${repo.nameWithOwner}/compare/${basehead}`,
      html_url: `${HTML_BASE}/${repo.nameWithOwner}/compare/${basehead}`,
      status,
      ahead_by: aheadBy,
      behind_by: behindBy,
      total_commits: shas.length,
      base_commit: commitJson(repo.gitDir, base),
      merge_base_commit: commitJson(repo.gitDir, mergeBase),
      commits: shas.slice(0, 250).map((sha) => commitJson(repo.gitDir!, sha)),
      files: changedFiles(repo, base, head, request.apiUrl) ?? [],
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Merging and updating the branch

/** The identity of a commit GitHub writes for `login`: author the person, committer GitHub. */
function identity(world: SimWorld, login: string): Record<string, string> {
  const user = world.actor(login);
  const email = `${user?.databaseId ?? 0}+${login}@users.noreply.github.com`;
  return {
    GIT_AUTHOR_NAME: login,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: 'GitHub',
    GIT_COMMITTER_EMAIL: 'noreply@github.com',
  };
}

function commitTree(
  gitDir: string,
  tree: string,
  parents: string[],
  message: string,
  env: Record<string, string>,
): string | undefined {
  return gitOk(gitDir, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message], env);
}

/** Moves a branch from `old` to `next` only if it still points at `old` (never forced). */
function moveBranch(gitDir: string, branch: string, next: string, old: string, why: string): boolean {
  return gitOk(gitDir, ['update-ref', '-m', why, `refs/heads/${branch}`, next, old]) !== undefined;
}

/** Replays the head's commits on the base in a throwaway worktree (GitHub's "rebase and merge"). */
function rebased(
  gitDir: string,
  base: string,
  head: string,
  env: Record<string, string>,
): string | undefined {
  const commits = (gitOk(gitDir, ['rev-list', '--reverse', '--no-merges', `${base}..${head}`]) ?? '')
    .split('\n')
    .filter(Boolean);
  const dir = mkdtempSync(join(tmpdir(), 'curupira-sim-rebase-'));
  const tree = join(dir, 'tree');
  try {
    if (gitOk(gitDir, ['worktree', 'add', '--detach', '--quiet', tree, base]) === undefined) return undefined;
    for (const commit of commits) {
      // The committer is GitHub; the author of each commit stays.
      const picked = run(tree, ['cherry-pick', '--allow-empty', '--keep-redundant-commits', commit], env);
      if (picked.status !== 0) return undefined;
    }
    return gitOk(tree, ['rev-parse', 'HEAD']);
  } finally {
    run(gitDir, ['worktree', 'remove', '--force', tree]);
    run(gitDir, ['worktree', 'prune']);
    rmSync(dir, { recursive: true, force: true });
  }
}

function notAllowed(message: string): RestResponse {
  return restError(405, message);
}

function mergePull(request: RestRequest, repo: SimRepository, pr: SimPullRequest): RestResponse {
  return mergeInto(
    request.world,
    repo,
    pr,
    (request.body ?? {}) as Record<string, unknown>,
    request.viewer.login,
  );
}

/**
 * The merge a person makes with GitHub's merge button (`POST /_simulator/pull-requests/merge`, a
 * walkthrough playing the maintainer): in a repository with a bare remote behind it, a merge commit
 * on the base branch as `PUT …/merge` makes, so the next run's base moves; a pull request whose
 * branches are not in git (made by a test without a remote) is only marked merged. The answer is
 * the REST merge's: 200 with the merge commit, or GitHub's refusal (a conflict: 405). A draft is
 * merged too.
 */
export function mergeByPerson(
  world: SimWorld,
  repo: SimRepository,
  pr: SimPullRequest,
  login: string,
): RestResponse {
  const gitDir = repo.gitDir;
  if (!gitDir || !resolve(gitDir, pr.headRefName) || !resolve(gitDir, pr.baseRefName)) {
    if (pr.state !== 'OPEN') return notAllowed('Pull Request is not mergeable');
    world.mergePullRequest(repo.nameWithOwner, pr.number);
    return {
      status: 200,
      body: { sha: pr.headRefOid, merged: true, message: 'Pull Request successfully merged' },
    };
  }
  // A test control: a draft merges too (a person would first mark it ready).
  return mergeInto(world, repo, pr, { merge_method: 'merge' }, login, true);
}

function mergeInto(
  world: SimWorld,
  repo: SimRepository,
  pr: SimPullRequest,
  body: Record<string, unknown>,
  login: string,
  draftOk = false,
): RestResponse {
  const method = body.merge_method ?? 'merge';
  if (method !== 'merge' && method !== 'squash' && method !== 'rebase') {
    return restError(422, 'Validation Failed', {
      errors: [{ resource: 'PullRequest', code: 'invalid', field: 'merge_method' }],
    });
  }
  if (pr.state !== 'OPEN') return notAllowed('Pull Request is not mergeable');
  if (pr.isDraft && !draftOk) return notAllowed('Pull Request is still a draft');
  const gitDir = repo.gitDir;
  if (!gitDir) {
    if (typeof body.sha === 'string' && body.sha !== pr.headRefOid)
      return restError(409, 'Head branch was modified. Review and try the merge again.');
    if (pr.mergeable !== 'MERGEABLE') return notAllowed('Pull Request is not mergeable');
    world.mergePullRequest(repo.nameWithOwner, pr.number);
    return {
      status: 200,
      body: { sha: pr.headRefOid, merged: true, message: 'Pull Request successfully merged' },
    };
  }
  const head = resolve(gitDir, pr.headRefName);
  const base = resolve(gitDir, pr.baseRefName);
  if (!head || !base) return notAllowed('Pull Request is not mergeable');
  if (typeof body.sha === 'string' && body.sha !== head)
    return restError(409, 'Head branch was modified. Review and try the merge again.');
  const merged = mergeTree(gitDir, base, head);
  if (!merged?.clean) return notAllowed('Pull Request is not mergeable');
  const env = identity(world, login);
  const title = typeof body.commit_title === 'string' && body.commit_title ? body.commit_title : undefined;
  const extra = typeof body.commit_message === 'string' ? body.commit_message : '';
  let next: string | undefined;
  if (method === 'merge') {
    const subject = title ?? `Merge pull request #${pr.number} from ${repo.owner}/${pr.headRefName}`;
    next = commitTree(gitDir, merged.tree, [base, head], `${subject}\n\n${extra || pr.title}`, env);
  } else if (method === 'squash') {
    const subject = title ?? `${pr.title} (#${pr.number})`;
    const log = extra || (gitOk(gitDir, ['log', '--reverse', '--format=* %s', `${base}..${head}`]) ?? '');
    next = commitTree(gitDir, merged.tree, [base], `${subject}\n\n${log}`, env);
  } else {
    const { GIT_COMMITTER_NAME = '', GIT_COMMITTER_EMAIL = '' } = env;
    next = rebased(gitDir, base, head, { GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL });
    if (!next) return notAllowed('This branch can’t be rebased');
  }
  if (!next) return restError(500, 'Could not merge');
  if (!moveBranch(gitDir, pr.baseRefName, next, base, `merge pull request #${pr.number} (${method})`))
    return restError(409, 'Base branch was modified. Review and try the merge again.');
  pr.headRefOid = head;
  world.mergePullRequest(repo.nameWithOwner, pr.number);
  return { status: 200, body: { sha: next, merged: true, message: 'Pull Request successfully merged' } };
}

function updateBranch(request: RestRequest, repo: SimRepository, pr: SimPullRequest): RestResponse {
  const { world } = request;
  const body = (request.body ?? {}) as Record<string, unknown>;
  const gitDir = repo.gitDir;
  if (pr.state !== 'OPEN' || !gitDir) return restError(422, 'Pull request is not open or has no branch');
  const head = resolve(gitDir, pr.headRefName);
  const base = resolve(gitDir, pr.baseRefName);
  if (!head || !base) return restError(422, 'Pull request is not open or has no branch');
  if (typeof body.expected_head_sha === 'string' && body.expected_head_sha !== head)
    return restError(422, 'expected head sha didn’t match current head ref.');
  if (count(gitDir, `${head}..${base}`) === 0)
    return restError(422, 'There are no new commits on the base branch.');
  const merged = mergeTree(gitDir, head, base);
  if (!merged?.clean) return restError(422, 'merge conflict between base and head');
  const message = `Merge branch '${pr.baseRefName}' into ${pr.headRefName}`;
  const next = commitTree(gitDir, merged.tree, [head, base], message, identity(world, request.viewer.login));
  if (!next || !moveBranch(gitDir, pr.headRefName, next, head, `update branch of pull request #${pr.number}`))
    return restError(422, 'expected head sha didn’t match current head ref.');
  pr.headRefOid = next;
  pr.updatedAt = world.timestamp();
  return {
    status: 202,
    body: {
      message: 'Updating pull request branch.',
      url: `${HTML_BASE}/${repo.nameWithOwner}/pull/${pr.number}`,
    },
  };
}

/** `pulls/{n}/files`, `pulls/{n}/merge`, `pulls/{n}/update-branch`; undefined for anything else. */
export function mergingRoute(
  request: RestRequest,
  repo: SimRepository,
  pr: SimPullRequest,
  sub: string,
): RestResponse | undefined {
  if (sub === 'merge' && request.method === 'PUT') return mergePull(request, repo, pr);
  if (sub === 'merge' && request.method === 'GET')
    return pr.state === 'MERGED' ? { status: 204, body: undefined } : restError(404, 'Not Found');
  if (sub === 'update-branch' && request.method === 'PUT') return updateBranch(request, repo, pr);
  if (sub === 'files' && request.method === 'GET') {
    const files = changedFiles(repo, pr.baseRefName, pr.headRefName, request.apiUrl);
    if (!files) return { status: 200, body: [] };
    return { status: 200, body: page(files, request) };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Test helpers over a bare repository

/** Makes the bare repository record every ref update in its reflogs (bare ones do not by default). */
export function keepReflogs(gitDir: string): void {
  gitOk(gitDir, ['config', 'core.logAllRefUpdates', 'always']);
}

/**
 * Commits files (content, or null to delete) on a branch of the bare repository, without a
 * checkout (a temporary index), as a push would; the branch starts at `from` when it is new.
 * `merge` makes it a merge commit of that branch too (a resolution: the files given on top of the
 * branch's own tree). Returns the new commit. Used by tests to move a base or make a conflict.
 */
export function commitToBranch(
  gitDir: string,
  branch: string,
  files: Record<string, string | null>,
  options: { message?: string; from?: string; author?: string; merge?: string } = {},
): string {
  const old = resolve(gitDir, branch);
  const parent = old ?? (options.from ? resolve(gitDir, options.from) : undefined);
  const merged = options.merge === undefined ? undefined : resolve(gitDir, options.merge);
  if (options.merge !== undefined && !merged) throw new Error(`no branch ${options.merge} to merge`);
  const dir = mkdtempSync(join(tmpdir(), 'curupira-sim-commit-'));
  const who = options.author ?? 'Simulated Pusher';
  const env = {
    GIT_INDEX_FILE: join(dir, 'index'),
    GIT_AUTHOR_NAME: who,
    GIT_AUTHOR_EMAIL: 'pusher@simulator.invalid',
    GIT_COMMITTER_NAME: who,
    GIT_COMMITTER_EMAIL: 'pusher@simulator.invalid',
  };
  try {
    if (parent && gitOk(gitDir, ['read-tree', parent], env) === undefined)
      throw new Error('read-tree failed');
    for (const [path, content] of Object.entries(files)) {
      if (content === null) {
        gitOk(gitDir, ['update-index', '--force-remove', '--', path], env);
        continue;
      }
      const file = join(dir, 'blob');
      writeFileSync(file, content);
      const blob = gitOk(gitDir, ['hash-object', '-w', '--', file]);
      if (!blob) throw new Error('hash-object failed');
      if (
        gitOk(gitDir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], env) === undefined
      )
        throw new Error(`update-index failed for ${path}`);
    }
    const tree = gitOk(gitDir, ['write-tree'], env);
    if (!tree) throw new Error('write-tree failed');
    const parents = [...(parent ? [parent] : []), ...(merged ? [merged] : [])];
    const commit = commitTree(gitDir, tree, parents, options.message ?? 'a push', env);
    if (!commit || !moveBranch(gitDir, branch, commit, old ?? ZERO, `push: ${options.message ?? 'a push'}`))
      throw new Error(`could not move ${branch}`);
    return commit;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ForcedUpdate {
  ref: string;
  old: string;
  new: string;
  message: string;
  /** When the reflog says the update happened (GitHub's DateTime), null when it does not say. */
  at: string | null;
}

function files(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.isFile() ? [join(dir, entry.name)] : [],
  );
}

/**
 * Every ref update in the bare repository's reflogs whose new commit does not descend from the old
 * one (a forced push, a reset), or that deleted the ref; empty when every update was a
 * fast-forward or a creation. Needs `keepReflogs` before the updates.
 */
export function forcedUpdates(gitDir: string): ForcedUpdate[] {
  const logs = join(gitDir, 'logs');
  const out: ForcedUpdate[] = [];
  for (const file of files(join(logs, 'refs'))) {
    const ref = relative(logs, file);
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const match = /^([0-9a-f]{40}) ([0-9a-f]{40}) ([^\t]*)\t?(.*)$/.exec(line);
      if (!match) continue;
      const [, old = '', next = '', who = '', message = ''] = match;
      const seconds = / (\d+) [+-]\d{4}$/.exec(who)?.[1];
      const at = seconds ? new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') : null;
      if (old === ZERO) continue;
      const fastForward =
        next !== ZERO && run(gitDir, ['merge-base', '--is-ancestor', old, next]).status === 0;
      if (!fastForward) out.push({ ref, old, new: next, message, at });
    }
  }
  return out;
}
