/**
 * A repository's commits, read with git from its backing bare repository (issue 29, the commit
 * trigger), in GitHub's REST shapes:
 *
 *   GET /repos/{o}/{r}/commits?sha=&path=&per_page=&page=   newest first from `sha` (a branch or a
 *                                                           commit; default the default branch),
 *                                                           only commits touching `path` when given
 *   GET /repos/{o}/{r}/commits/{ref}                        one commit with `stats` and `files`
 *                                                           (against its first parent)
 *
 * Authors and committers are git's names and emails; `author` / `committer` (the GitHub accounts)
 * are the simulator's user whose login is the git author's name, else null, as GitHub answers for
 * an email it does not know.
 */
import type { components } from '@octokit/openapi-types';
import { gitIn } from './branches.js';
import { HTML_BASE } from './ids.js';
import { type RestRequest, type RestResponse, restError, userJson } from './rest-json.js';
import type { SimRepository } from './world.js';

type Schemas = components['schemas'];
type CommitFile = NonNullable<Schemas['commit']['files']>[number];
/** The fields of GitHub's `commit` the simulator answers. */
export type SimCommitJson = Pick<
  Schemas['commit'],
  'sha' | 'node_id' | 'url' | 'html_url' | 'parents' | 'stats' | 'files'
> & {
  commit: Pick<Schemas['commit']['commit'], 'message' | 'author' | 'committer'>;
  author: ReturnType<typeof userJson> | null;
  committer: ReturnType<typeof userJson> | null;
};

const FIELD = '\x1f';
const FORMAT = ['%H', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%B'].join(FIELD);
const STATUS: Record<string, CommitFile['status']> = {
  A: 'added',
  D: 'removed',
  M: 'modified',
  T: 'changed',
};

function resolveCommit(repo: SimRepository, ref: string): string | undefined {
  if (!repo.gitDir || ref.startsWith('-')) return undefined;
  return gitIn(repo.gitDir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]) || undefined;
}

function commitJson(
  request: RestRequest,
  repo: SimRepository,
  sha: string,
  withFiles: boolean,
): SimCommitJson {
  const gitDir = repo.gitDir!;
  const raw = gitIn(gitDir, ['show', '-s', `--format=${FORMAT}`, sha]) ?? '';
  const [oid = sha, parents = '', an = '', ae = '', ad = '', cn = '', ce = '', cd = '', ...body] =
    raw.split(FIELD);
  const parentShas = parents.split(' ').filter(Boolean);
  const api = `${request.apiUrl}/repos/${repo.nameWithOwner}`;
  const account = (name: string) => {
    const actor = request.world.actor(name);
    return actor ? userJson(actor, request.apiUrl) : null;
  };
  const json: SimCommitJson = {
    sha: oid,
    node_id: `C_${Buffer.from(`${repo.nameWithOwner}:${oid}`).toString('base64url')}`,
    url: `${api}/commits/${oid}`,
    html_url: `${HTML_BASE}/${repo.nameWithOwner}/commit/${oid}`,
    commit: {
      message: body.join(FIELD).replace(/\n+$/, ''),
      author: { name: an, email: ae, date: ad },
      committer: { name: cn, email: ce, date: cd },
    },
    author: account(an),
    committer: account(cn),
    parents: parentShas.map((p) => ({
      sha: p,
      url: `${api}/commits/${p}`,
      html_url: `${HTML_BASE}/${repo.nameWithOwner}/commit/${p}`,
    })),
  };
  if (withFiles) {
    const files = commitFiles(repo, api, oid, parentShas[0]);
    const additions = files.reduce((n, f) => n + f.additions, 0);
    const deletions = files.reduce((n, f) => n + f.deletions, 0);
    json.files = files;
    json.stats = { additions, deletions, total: additions + deletions };
  }
  return json;
}

/** The files a commit changed against its first parent (everything, for a root commit). */
function commitFiles(
  repo: SimRepository,
  api: string,
  sha: string,
  parent: string | undefined,
): CommitFile[] {
  const gitDir = repo.gitDir!;
  const range = parent ? [parent, sha] : ['--root', sha];
  const names = gitIn(gitDir, [
    'diff-tree',
    '-r',
    '--no-renames',
    '--no-commit-id',
    '--name-status',
    '-z',
    ...range,
  ]);
  const numstat = gitIn(gitDir, [
    'diff-tree',
    '-r',
    '--no-renames',
    '--no-commit-id',
    '--numstat',
    '-z',
    ...range,
  ]);
  const counts = new Map<string, { additions: number; deletions: number }>();
  for (const row of (numstat ?? '').split('\0').filter(Boolean)) {
    const [add = '0', del = '0', ...path] = row.split('\t');
    counts.set(path.join('\t'), {
      additions: Number.parseInt(add, 10) || 0,
      deletions: Number.parseInt(del, 10) || 0,
    });
  }
  const fields = (names ?? '').split('\0');
  const files: CommitFile[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = fields[i]!.trim();
    const filename = fields[i + 1]!;
    if (!filename) continue;
    const status = STATUS[code.charAt(0)] ?? 'modified';
    const { additions, deletions } = counts.get(filename) ?? { additions: 0, deletions: 0 };
    const at = status === 'removed' ? (parent ?? sha) : sha;
    const path = filename.split('/').map(encodeURIComponent).join('/');
    files.push({
      sha: gitIn(gitDir, ['rev-parse', '--verify', '--quiet', `${at}:${filename}`]) || null,
      filename,
      status,
      additions,
      deletions,
      changes: additions + deletions,
      blob_url: `${HTML_BASE}/${repo.nameWithOwner}/blob/${at}/${path}`,
      raw_url: `${HTML_BASE}/${repo.nameWithOwner}/raw/${at}/${path}`,
      contents_url: `${api}/contents/${path}?ref=${at}`,
    });
  }
  return files;
}

/** `GET /repos/{o}/{r}/commits` and `GET /repos/{o}/{r}/commits/{ref}`; undefined for other paths. */
export function commitsRoute(
  request: RestRequest,
  repo: SimRepository,
  rest: string[],
): RestResponse | undefined {
  if (rest[0] !== 'commits' || request.method !== 'GET') return undefined;
  if (rest.length === 2) {
    const ref = decodeURIComponent(rest[1]!);
    const sha = resolveCommit(repo, ref);
    if (!sha) return restError(422, `No commit found for SHA: ${ref}`);
    return { status: 200, body: commitJson(request, repo, sha, true) };
  }
  if (rest.length !== 1) return undefined;
  if (!repo.gitDir) return restError(409, 'Git Repository is empty.');
  const params = request.searchParams;
  const from = params.get('sha') || repo.defaultBranch;
  const start = resolveCommit(repo, from);
  if (!start) return restError(404, 'Not Found');
  const perPage = Math.min(100, Math.max(1, Number.parseInt(params.get('per_page') ?? '30', 10) || 30));
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const path = params.get('path');
  const args = ['rev-list', `--max-count=${perPage + 1}`, `--skip=${(page - 1) * perPage}`, start];
  if (path) args.push('--', path.replace(/^\/+/, ''));
  const shas = (gitIn(repo.gitDir, args) ?? '').split('\n').filter(Boolean);
  const headers: Record<string, string> = {};
  if (shas.length > perPage) {
    const next = new URLSearchParams(params);
    next.set('page', String(page + 1));
    next.set('per_page', String(perPage));
    headers.link = `<${request.apiUrl}/repos/${repo.nameWithOwner}/commits?${next}>; rel="next"`;
  }
  return {
    status: 200,
    body: shas.slice(0, perPage).map((sha) => commitJson(request, repo, sha, false)),
    headers,
  };
}
